# The two commands a user needs are `make demo` and `make test`; both run `make setup` first.
SHELL := /bin/bash
TOOLCHAIN := 1.95.0
CARGO := cargo +$(TOOLCHAIN)
BIN := target/release/neurobits
# ptxas from PyPI (nvidia-cuda-nvcc-cu12) checks the PTX without a GPU.
# The firmware's targets (mcu/build.rs names each one's QEMU board; lib/src/gbnn/mcu.rs runs them).
MCU_TARGETS := thumbv6m-none-eabi thumbv7m-none-eabi thumbv7em-none-eabihf thumbv8m.main-none-eabihf riscv32imac-unknown-none-elf
LLVM_SIZE = $(shell rustc +$(TOOLCHAIN) --print sysroot)/lib/rustlib/x86_64-unknown-linux-gnu/bin/llvm-size
MDBOOK = $(shell command -v mdbook || echo $(HOME)/.cargo/bin/mdbook)
# One example per model (lib/examples/): fit, save, load, predict.
EXAMPLES := gbnn_store_retrieve flyhash_index flynn_fit_predict ocnn_cluster cortical_fit_predict
PTXAS = $(shell python3 -c "import nvidia.cuda_nvcc as m, os; print(os.path.join(list(m.__path__)[0], 'bin', 'ptxas'))" 2>/dev/null)

# The Python package (python/): a virtual environment with maturin, numpy, scikit-learn and
# pytest from PyPI, and the abi3 wheel built once (release) into .bundle-py/ and installed there.
PY := .venv/bin/python
WHEEL_DIR := .bundle-py

FPGA_RTL := fpga-model/rtl
.PHONY: hostile fpga-verilate fpga-synth ocnn-quality cortical-quality flyhash-quality ann-peers ann-bench gpu-ann-bench flyhash-ann python python-bench gpu-bundle-py peers completions fuzz setup demo test mcu-net mcu-build mcu-test mcu-cost bench gpu-bundle gpu-test gpu-bench nccl-link clean

# Idempotent: rustup skips what is installed.
setup:
	@rustup toolchain list | grep -q '^$(TOOLCHAIN)' || rustup toolchain install $(TOOLCHAIN) --profile minimal
	@rustup component add --toolchain $(TOOLCHAIN) rust-src llvm-bitcode-linker llvm-tools clippy rustfmt 2>&1 | grep -v 'is up to date' || true
	@rustup target add --toolchain $(TOOLCHAIN) $(MCU_TARGETS) 2>&1 | grep -v 'is up to date' || true
	@python3 -c "import nvidia.cuda_nvcc" 2>/dev/null || python3 -m pip install -q --disable-pip-version-check nvidia-cuda-nvcc-cu12
	@command -v qemu-system-arm >/dev/null || (apt-get update -q && apt-get install -y -q qemu-system-arm)
	@command -v qemu-system-riscv32 >/dev/null || (apt-get update -q && apt-get install -y -q qemu-system-misc)
	@# The RTL's simulator (make fpga-verilate, in make test) and synthesis flow (make fpga-synth).
	@command -v verilator >/dev/null && command -v yosys >/dev/null && command -v nextpnr-ice40 >/dev/null && command -v icetime >/dev/null \
	  || (apt-get update -q && apt-get install -y -q verilator yosys nextpnr-ice40 fpga-icestorm)
	@# mpirun (OpenMPI): tests/index_dist.rs launches the distributed index search with it.
	@command -v mpirun >/dev/null || (apt-get update -q && apt-get install -y -q openmpi-bin)
	@test -d /usr/share/datasets/fashion-mnist || (apt-get update -q && apt-get install -y -q dataset-fashion-mnist)
	@# HDF5 (the ann-benchmarks files: `flyhash ann-data`, the library's `ann` feature the CLI turns on).
	@dpkg -s libhdf5-dev >/dev/null 2>&1 || (apt-get update -q && apt-get install -y -q libhdf5-dev)
	@# Qhull (the OCNN's Delaunay triangulation) is compiled from the qhull crate; its bindings need libclang.
	@ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1 || (apt-get update -q && apt-get install -y -q libclang-dev)
	@# FCPS point sets, as PyPI's pyclustering 0.10.1.2 ships them (sdist; only the .data files are kept).
	@# sklearn's 8x8 digits (the cortical network's data), as the scikit-learn wheel ships them.
	@test -f data/digits/digits.csv.gz || (d=$$(mktemp -d) && python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary :all: scikit-learn==1.9.1 -d $$d \
	  && mkdir -p data/digits && python3 -c "import zipfile, glob, sys; z = zipfile.ZipFile(glob.glob(sys.argv[1] + '/*.whl')[0]); open('data/digits/digits.csv.gz', 'wb').write(z.read('sklearn/datasets/data/digits.csv.gz'))" $$d && rm -rf $$d)
	@test -f data/fcps/Lsun.data || (d=$$(mktemp -d) && python3 -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: pyclustering==0.10.1.2 -d $$d \
	  && tar xzf $$d/pyclustering-0.10.1.2.tar.gz -C $$d && mkdir -p data/fcps && cp $$d/pyclustering-0.10.1.2/pyclustering/samples/samples/fcps/*.data data/fcps/ && rm -rf $$d)
	@command -v defmt-print >/dev/null || test -x $(HOME)/.cargo/bin/defmt-print || cargo +$(TOOLCHAIN) install defmt-print --locked --version 1.2.0
	@# The manual is an mdBook; make test builds it (broken SUMMARY entries or includes fail).
	@command -v mdbook >/dev/null || test -x $(HOME)/.cargo/bin/mdbook || cargo +$(TOOLCHAIN) install mdbook --locked --version 0.4.52
	@test -x $(PY) || python3 -m venv .venv
	@$(PY) -c "import maturin, numpy, sklearn, pytest" 2>/dev/null || $(PY) -m pip install -q --disable-pip-version-check maturin numpy scikit-learn pytest
	@$(MAKE) --no-print-directory python

# Builds the wheel (cargo does nothing when nothing changed) and installs it into .venv.
python:
	@rm -f $(WHEEL_DIR)/neurobits-*.whl
	cd python && ../.venv/bin/maturin build --release --quiet -o ../$(WHEEL_DIR)
	$(PY) -m pip install -q --disable-pip-version-check --force-reinstall --no-deps $(WHEEL_DIR)/neurobits-*.whl

# Scenario 1 of the paper on the CPU: table on stdout, CSV/JSON/SVG in out/scenario1.
demo: setup
	$(CARGO) build --release --bin neurobits
	$(BIN) gbnn experiment --scenario 1 --out out/scenario1

test: setup mcu-build
	$(CARGO) fmt --all --check
	$(CARGO) fmt --manifest-path gpu-device/Cargo.toml --check
	$(CARGO) fmt --manifest-path mcu/Cargo.toml --check
	$(CARGO) fmt --manifest-path mcu/board-example/Cargo.toml --check
	PTXAS=$(PTXAS) $(CARGO) test --workspace
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps
	@# One example per model, each fitting, saving, loading and predicting (on the GPU too:
	@# `-- gpu`). Release: FlyNN's runs on all of Fashion-MNIST.
	for e in $(EXAMPLES); do \
	  $(CARGO) run -q -p neurobits --release --example $$e -- cpu || exit 1; done
	@# The library a user adds pulls in no CLI, plotting or progress crates, and builds without them.
	! $(CARGO) tree -p neurobits -e normal --prefix none | grep -E '^(clap|clap_builder|plotters|indicatif) '
	$(CARGO) check -p neurobits --no-default-features
	@# The device machine's CLI (make gpu-bundle) is built without the HDF5 reader.
	$(CARGO) check --bin neurobits --no-default-features
	$(CARGO) build -p neurobits-core --target thumbv7m-none-eabi
	$(CARGO) build -p neurobits-core --target thumbv7em-none-eabihf --features defmt
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	@# The Python package: scikit-learn's checks, Python = CLI bit for bit, round trips, bad input.
	@# A missing interpreter, package or scikit-learn is a failure, never a skip.
	@# test_docs.py runs the README's and the manual's console blocks with the release CLI (the
	@# Fashion-MNIST quick starts), and their Python blocks; their Rust blocks are doctests above.
	$(CARGO) build --release --bin neurobits
	$(PY) -c "import neurobits, numpy, sklearn, pytest"
	NEUROBITS_BIN=$(CURDIR)/target/debug/neurobits NEUROBITS_DOC_BIN=$(CURDIR)/$(BIN) $(PY) -m pytest python/tests -q -p no:cacheprovider
	$(MDBOOK) build docs/manual
	$(MAKE) mcu-test
	$(MAKE) fpga-verilate

# The RTL (fpga-model/rtl) against the cycle model bit for bit: the model writes every clock's
# registers for 3x3, 4x16 and 8x50 (1000 probes per rule), Verilator replays them and stops at the
# first differing bit; then the sum-of-max-only build and the UART board top on 3x3 and 4x16. A
# missing verilator is a failure.
FPGA_VERILATE_SIZES := 3x3 4x16 8x50
FPGA_UART_RUNS := 3x3:104:250 4x16:4:200 3x3_som:4:250
FPGA_SOM_SIZES := 3x3 4x16
FPGA_CIRCUIT := $(addprefix $(CURDIR)/$(FPGA_RTL)/,gbnn_circuit.sv gbnn_pair.sv gbnn_cluster.sv)
fpga-verilate:
	$(CARGO) run -q -p neurobits-fpga --release --example rtl_vectors -- out/fpga/vectors 1000
	for s in $(FPGA_VERILATE_SIZES); do \
	  verilator --cc --exe --build -j 2 --unroll-count 8 --x-assign fast --x-initial fast -GC=$${s%x*} -GL=$${s#*x} \
	    -CFLAGS -O1 -MAKEFLAGS "OPT_FAST=-O1 OPT_SLOW=-O1" --Mdir out/fpga/obj_$$s -o Vgbnn_$$s \
	    $(FPGA_CIRCUIT) $(CURDIR)/$(FPGA_RTL)/tb_gbnn.cpp > out/fpga/verilate_$$s.log 2>&1 \
	    || { tail -20 out/fpga/verilate_$$s.log; exit 1; }; \
	  out/fpga/obj_$$s/Vgbnn_$$s out/fpga/vectors/gbnn_$$s.vec || exit 1; done
	@# The sum-of-max-only build (SUM_OF_SUM=0: no adders, score registers or WTA) on the vectors
	@# without sum-of-sum probes, and its refusal to elaborate when asked for sum-of-sum.
	for s in $(FPGA_SOM_SIZES); do \
	  verilator --cc --exe --build -j 2 --unroll-count 8 --x-assign fast --x-initial fast -GC=$${s%x*} -GL=$${s#*x} \
	    -GSUM_OF_SUM=0 -CFLAGS -O1 -MAKEFLAGS "OPT_FAST=-O1 OPT_SLOW=-O1" --Mdir out/fpga/sobj_$$s -o Vgbnn_$$s \
	    $(FPGA_CIRCUIT) $(CURDIR)/$(FPGA_RTL)/tb_gbnn.cpp > out/fpga/som_$$s.log 2>&1 \
	    || { tail -20 out/fpga/som_$$s.log; exit 1; }; \
	  out/fpga/sobj_$$s/Vgbnn_$$s out/fpga/vectors/gbnn_$${s}_som.vec || exit 1; done
	! verilator --lint-only -GSUM_OF_SUM=0 "-GRULES=4'b1111" $(FPGA_CIRCUIT) > out/fpga/refuse.log 2>&1 \
	  || { echo "gbnn_circuit built without sum-of-sum accepted RULES with sum-of-sum"; exit 1; }
	grep -q "RULES asks for sum-of-sum" out/fpga/refuse.log && echo "ok: SUM_OF_SUM=0 refuses sum-of-sum at elaboration"
	@# The board top (gbnn_uart: the circuit behind an 8N1 UART) driven bit by bit on its rx line
	@# with the same vectors; SIZE[_som]:CLKS_PER_BIT:PROBES_PER_RULE (104 = 12 MHz / 115 200 baud;
	@# _som: the sum-of-max-only build, which answers a sum-of-sum probe '!').
	for r in $(FPGA_UART_RUNS); do s=$${r%%:*}; c=$${r#*:}; c=$${c%%:*}; z=$${s%_som}; \
	  o=$$(test $$s = $$z || echo "-GSUM_OF_SUM=0"); \
	  verilator --cc --exe --build -j 2 --unroll-count 8 --x-assign fast --x-initial fast -GC=$${z%x*} -GL=$${z#*x} $$o \
	    -GCLKS_PER_BIT=$$c --top-module gbnn_uart -CFLAGS -O1 -MAKEFLAGS "OPT_FAST=-O1 OPT_SLOW=-O1" \
	    --Mdir out/fpga/uobj_$$s -o Vuart_$$s $(addprefix $(CURDIR)/$(FPGA_RTL)/,gbnn_uart.sv uart.sv tb_uart.cpp) $(FPGA_CIRCUIT) \
	    > out/fpga/uart_$$s.log 2>&1 || { tail -20 out/fpga/uart_$$s.log; exit 1; }; \
	  out/fpga/uobj_$$s/Vuart_$$s out/fpga/vectors/gbnn_$$s.vec $$c $${r##*:} $${o:+som} || exit 1; done

# Yosys + nextpnr (about an hour of CPU; not in make test): results/fpga/synth.json and synth.csv,
# committed. Hierarchical synthesis (each module mapped once, counts multiplied) of the full
# circuit and its sum-of-max-only build at every size; flat synthesis, which checks it and feeds
# nextpnr-ice40, at the sizes where it finishes (place-and-route where the design fits); the UART
# board top at 3x3. One tool run at a time at nice 19, each capped at SYNTH_LIMIT_S seconds.
FPGA_SYNTH := nice -n 19 env SYNTH_LIMIT_S=$${SYNTH_LIMIT_S:-1800} python3 $(FPGA_RTL)/synth.py results/fpga
fpga-synth: setup
	$(FPGA_SYNTH) 3x3 4x8 4x16 8x16 8x50 16x25 4x100
	SYNTH_VARIANT=som $(FPGA_SYNTH) 3x3 4x8 4x16 8x16 8x50 16x25 4x100
	SYNTH_MODE=flat $(FPGA_SYNTH) 3x3 4x8
	SYNTH_MODE=flat $(FPGA_SYNTH) 4x16
	SYNTH_MODE=flat SYNTH_VARIANT=som $(FPGA_SYNTH) 3x3 4x8 4x16
	SYNTH_MODE=flat SYNTH_VARIANT=uart SYNTH_FAMILIES=ice40 $(FPGA_SYNTH) 3x3

# The firmware template (mcu/) on every target: a network trained on the host (generated messages
# stored by `gbnn store`) exported by `gbnn export` and a FlyNN classifier (`flynn fit` on the
# digits) exported by `flynn export` into mcu/net/ (linked into flash), built with the PRNG
# self-test and FlyNN modes (features selftest, flynn) for the five targets.
MCU_NET := out/mcu/net.nbg
mcu-net: setup
	$(CARGO) build -q --bin neurobits
	target/debug/neurobits -q gbnn generate --clusters 8 --neurons 50 --messages 400 --probes 100 --erased 3 --seed 7 -o out/mcu/data
	@# The same messages (seed 7), probed in the noisy mode (2 wrong symbols, 1 erased) and the
	@# sparse one (5 of the 8 symbols given, 1 of them erased, the other 3 silent: `-`).
	target/debug/neurobits -q gbnn generate --clusters 8 --neurons 50 --messages 400 --probes 100 --erased 1 --substituted 2 --seed 7 -o out/mcu/noisy
	target/debug/neurobits -q gbnn generate --clusters 8 --neurons 50 --messages 400 --probes 100 --erased 1 --active 5 --seed 7 -o out/mcu/sparse
	target/debug/neurobits -q gbnn store --clusters 8 --neurons 50 --messages out/mcu/data/messages.csv -o $(MCU_NET)
	target/debug/neurobits gbnn export --net $(MCU_NET) -o mcu/net/net.bin
	@# A FlyNN classifier on sklearn's digits (first 1500 to fit, the next 100 for the firmware).
	mkdir -p out/mcu/digits
	zcat data/digits/digits.csv.gz | head -1500 | cut -d, -f1-64 > out/mcu/digits/train-x.csv
	zcat data/digits/digits.csv.gz | head -1500 | cut -d, -f65 > out/mcu/digits/train-y.csv
	zcat data/digits/digits.csv.gz | tail -n +1501 | head -100 | cut -d, -f1-64 > out/mcu/digits/test-x.csv
	target/debug/neurobits -q flynn fit -i out/mcu/digits/train-x.csv --labels out/mcu/digits/train-y.csv \
	  --code-bits 512 --winners 16 --centre false -o out/mcu/digits/flynn.nbm
	target/debug/neurobits flynn export --model out/mcu/digits/flynn.nbm -o mcu/net/flynn.bin

mcu-build: setup mcu-net
	cd mcu && for t in $(MCU_TARGETS); do $(CARGO) build -q --release --features selftest,flynn --target $$t || exit 1; done
	@# The real-board example (nRF52840-DK, defmt-rtt): built, not run (no board here).
	cd mcu/board-example && $(CARGO) build -q --release

# Both modes on every board under QEMU (tests/mcu.rs runs them, decodes defmt and compares every
# digest with the host's; logs in out/mcu/logs), then each firmware's sections.
mcu-test: mcu-build
	mkdir -p out/mcu/logs
	NEUROBITS_MCU_LOGS=out/mcu/logs $(CARGO) test --test mcu -- --nocapture
	cd mcu && for t in $(MCU_TARGETS); do $(LLVM_SIZE) -A target/$$t/release/neurobits-mcu | grep -E '^(section|\.text|\.rodata|\.data|\.bss|\.uninit|\.stack)' | sed "s|^|$$t |"; done

# What the template costs per board (flash, RAM, stack, instructions per retrieval per rule) for
# the 8x50 network and the largest that fits each board's flash: results/mcu/cost.{csv,json,md}
# (a few minutes; not part of make test).
mcu-cost: mcu-build
	python3 mcu/cost.py target/debug/neurobits $(LLVM_SIZE) $$(command -v defmt-print || echo $(HOME)/.cargo/bin/defmt-print)

# Criterion benches, then the side-by-side table of the paper's Scenario 2.
bench: setup
	$(CARGO) bench --bench gbnn
	$(CARGO) build --release --bin neurobits
	mkdir -p out
	$(BIN) gbnn bench --scenario 2 --out out/bench-scenario2.json

# The CPU peers (numpy/scipy FlyHash, faiss search) next to ours, one thread each, with ratios.
# Their Python packages go into a virtual environment of their own (out/peers-venv).
PEERS_PY := out/peers-venv/bin/python
peers: setup
	$(CARGO) build --release --bin neurobits
	@test -x $(PEERS_PY) || python3 -m venv out/peers-venv
	@$(PEERS_PY) -c "import numpy, scipy, faiss" 2>/dev/null || $(PEERS_PY) -m pip install -q --disable-pip-version-check numpy scipy faiss-cpu
	$(PEERS_PY) peers/run_cpu.py $(BIN) /usr/share/datasets/fashion-mnist out/peers

# OCNN clustering quality: the OCNN with its defaults (and the first automatic rule) next to
# scikit-learn's DBSCAN, HDBSCAN, spectral, agglomerative and k-means on FCPS, synthetic families
# and iris/wine/breast cancer; ARI per set and family into results/ocnn (CSV, JSON, SVG). About
# 10 minutes on a 2-core machine; not part of `make test`.
ocnn-quality: setup
	$(CARGO) build --release --bin neurobits
	$(PY) peers/clustering_quality.py --bin $(BIN) --out results/ocnn

# The cortical network on held-out digits beside k-means transfer and 1-NN on pixels (scikit-learn
# in .venv), learning curves 1…all images per class, seeds 1-3: results/cortical/quality.{json,csv}
# and learning-curve.svg; the same on the validation list (validation-curve.csv) and the readouts
# compared there (readouts.csv, from the cortical_codes example), and the LGN threshold of the
# default on the validation list (lgn-threshold.csv). About 2 minutes on 2 cores once
# built. Not part of `make test`.
cortical-quality: setup
	$(CARGO) build --release --bin neurobits
	$(CARGO) build --release -p neurobits --example cortical_codes
	$(PY) peers/cortical_quality.py --bin $(BIN) --out results/cortical
	$(PY) peers/cortical_quality.py --bin $(BIN) --out results/cortical --validation
	$(PY) peers/cortical_quality.py --bin $(BIN) --out results/cortical --lgn-sweep
	$(PY) peers/cortical_readouts.py --example target/release/examples/cortical_codes --out results/cortical

# FlyHash and FlyNN quality (slow: about 45 minutes on a 2-core machine; not in `make test`):
# `flyhash eval` (both comparisons against SimHash, Fashion-MNIST and digits), faiss's IndexLSH
# beside it, FlyNN's validation sweep (training set split 50 000 / 10 000), then FlyNN with the
# chosen defaults against scikit-learn's k-NN and logistic regression on the test set, 2 threads.
FLY_Q := results/flyhash
# The approximate FlyHash index on Fashion-MNIST: recall@10 against queries per second, two
# threads, into results/flyhash/ann/ (minutes: the true neighbours come from a brute force,
# kept in out/ for the next run).
FLY_ANN := results/flyhash/ann
ANN_DATA := out/ann/fashion-mnist-784-euclidean.hdf5
flyhash-ann: $(ANN_DATA)
	$(CARGO) build --release --bin neurobits
	@mkdir -p $(FLY_ANN) out
	(uptime; $(BIN) --threads 2 flyhash ann-bench \
	  -i $(ANN_DATA) --rerank euclidean --probes 1,2,4,8,16,32,64,128,4096 --exact-scan \
	  -o $(FLY_ANN)/fmnist-cpu.json; uptime) 2>&1 | tee $(FLY_ANN)/fmnist-cpu.log

flyhash-quality: setup
	$(CARGO) build --release --bin neurobits
	@test -x $(PEERS_PY) || python3 -m venv out/peers-venv
	@$(PEERS_PY) -c "import numpy, scipy, faiss, sklearn, matplotlib" 2>/dev/null || $(PEERS_PY) -m pip install -q --disable-pip-version-check numpy scipy faiss-cpu scikit-learn matplotlib
	RAYON_NUM_THREADS=2 $(BIN) flyhash eval --out $(FLY_Q)/eval
	OMP_NUM_THREADS=2 $(PEERS_PY) peers/flyhash_quality.py $(FLY_Q)/eval/eval.csv /usr/share/datasets/fashion-mnist data/digits/digits.csv.gz $(FLY_Q)/eval
	RAYON_NUM_THREADS=2 $(PEERS_PY) peers/flynn_sweep.py $(BIN) /usr/share/datasets/fashion-mnist $(FLY_Q)
	THREADS=2 $(PEERS_PY) peers/flynn_knn.py $(BIN) /usr/share/datasets/fashion-mnist $(FLY_Q)

# FlyHash in ann-benchmarks form (not in make test): Fashion-MNIST as ann-benchmarks'
# fashion-mnist-784-euclidean.hdf5 (`flyhash ann-data`: 100 exact neighbours per query, about
# 2 minutes on 2 cores, kept in out/ann/), faiss's HNSW, IVF, LSH and binary HNSW on the fly codes
# (peers/ann_faiss.py, 2 threads, its own virtual environment out/ann-venv: faiss-cpu and h5py
# from PyPI; about 30 minutes on the shared 2-core machine, 18 of them for the binary HNSW over
# the default 25 088-bit fly codes), our index (`flyhash ann-bench`: the `ann` branch's command,
# not in this branch until it merges), then the recall/QPS figure.
# Results: results/flyhash/ann/ (JSON, CSV, SVG).
ANN := results/flyhash/ann
ANN_PY := out/ann-venv/bin/python
$(ANN_DATA):
	$(CARGO) build --release --bin neurobits
	mkdir -p out/ann
	$(BIN) flyhash ann-data --train-images /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz \
	  --test-images /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz -o $@
ann-peers: setup $(ANN_DATA)
	$(CARGO) build --release --bin neurobits
	@test -x $(ANN_PY) || python3 -m venv out/ann-venv
	@$(ANN_PY) -c "import numpy, h5py, faiss" 2>/dev/null || $(ANN_PY) -m pip install -q --disable-pip-version-check numpy h5py faiss-cpu
	OMP_NUM_THREADS=2 $(ANN_PY) peers/ann_faiss.py --data $(ANN_DATA) --bin $(BIN) --threads 2 --runs 3 --fly-codes default,1280:78:64 --out $(ANN)/faiss-cpu.json
ann-bench: ann-peers
	$(BIN) --threads 2 flyhash ann-bench -i $(ANN_DATA) --runs 3 --rerank euclidean --probes 1,2,4,8,16,32,64,128,4096 --exact-scan -o $(ANN)/fmnist-cpu.json
	$(BIN) flyhash ann-figure --results $(ANN)/faiss-cpu.json $(ANN)/fmnist-cpu.json -o $(ANN)

# The Python layer against the Rust API (FlyHash Fashion-MNIST, GBNN Scenario 2) and FlyNN beside
# scikit-learn's KNeighborsClassifier.
python-bench: setup
	$(PY) python/bench.py --out out/python-bench.json
	@$(PY) -c "import faiss" 2>/dev/null || $(PY) -m pip install -q --disable-pip-version-check faiss-cpu
	$(PY) python/bench_peers.py --out out/python-bench-peers.json

# The wheel, Fashion-MNIST, FCPS and digits into .bundle-py/ for the device machine (no Rust, no
# registry): there, `pip install --no-index --no-deps .bundle-py/neurobits-*.whl` and
# `python python/tests/test_gpu.py`.
gpu-bundle-py: setup
	mkdir -p $(WHEEL_DIR)/fmnist $(WHEEL_DIR)/data
	cp /usr/share/datasets/fashion-mnist/*-ubyte.gz $(WHEEL_DIR)/fmnist/
	cp -r data/fcps data/digits $(WHEEL_DIR)/data/

# GPU runs happen on a machine without Rust: build the release test and CLI binaries here into
# .bundle/ (git-ignored) and carry that folder there.
# The bundle's binaries are built without the `ann` feature: the device machine has no libhdf5.
gpu-bundle: setup
	$(CARGO) build --release --bin neurobits --no-default-features
	rm -rf .bundle && mkdir -p .bundle
	cp $(BIN) .bundle/neurobits
	for t in bit_exact modes sharded flyhash ocnn_rows; do cp $$($(CARGO) test --release -p neurobits-gpu-host --test $$t --no-run --message-format=json 2>/dev/null \
	  | python3 -c "import sys, json; [print(m['executable']) for m in map(json.loads, sys.stdin) if m.get('executable')]") .bundle/$$t; done
	for t in ocnn_gpu ocnn_lane_rows_gpu cortical_gpu flyhash_ann_gpu index_dist; do cp $$($(CARGO) test --release --no-default-features --test $$t --no-run --message-format=json 2>/dev/null \
	  | python3 -c "import sys, json; [print(m['executable']) for m in map(json.loads, sys.stdin) if m.get('executable') and m['target']['name'] == sys.argv[1]]" $$t) .bundle/$$t; done
	$(CARGO) build -p neurobits --release --examples
	mkdir -p .bundle/examples && for e in $(EXAMPLES); do cp target/release/examples/$$e .bundle/examples/; done
	strip .bundle/* .bundle/examples/* 2>/dev/null || true
	mkdir -p .bundle/data && cp -r data/fcps data/digits .bundle/data/
	cp /usr/share/datasets/fashion-mnist/*-ubyte.gz .bundle/
	cp Makefile .bundle/

# NCCL for the sharded GBNN: cudarc opens `libnccl.so`; the device machine has PyTorch's
# libnccl.so.2 (PyPI nvidia-nccl-*), so a link to it goes into .bundle/lib. NVLink multicast stays off.
NCCL_ENV = NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH=$(CURDIR)/.bundle/lib:$$LD_LIBRARY_PATH
nccl-link:
	@mkdir -p .bundle/lib
	@p=$$(python3 -c "import glob, nvidia; print(next(iter(sorted(glob.glob(nvidia.__path__[0] + '/**/libnccl.so*', recursive=True))), ''))" 2>/dev/null); \
	  if [ -n "$$p" ]; then ln -sf "$$p" .bundle/lib/libnccl.so; \
	  else echo "nccl-link: no libnccl.so.2 from PyPI's nvidia-nccl here; several GPUs need libnccl.so on LD_LIBRARY_PATH"; fi

# On a machine with a CUDA GPU: CPU ≡ GPU bit for bit on every rule, and the cuBLAS baseline.
gpu-test: nccl-link
	@test -x .bundle/bit_exact || $(MAKE) gpu-bundle
	.bundle/bit_exact --ignored --nocapture --test-threads=1
	.bundle/modes --ignored --nocapture --test-threads=1
	$(NCCL_ENV) .bundle/sharded --ignored --nocapture --test-threads=1
	.bundle/flyhash --ignored --nocapture --test-threads=1
	.bundle/ocnn_rows --ignored --nocapture --test-threads=1
	cd .bundle && ./ocnn_gpu --ignored --nocapture --test-threads=1
	cd .bundle && ./ocnn_lane_rows_gpu --ignored --nocapture --test-threads=1
	cd .bundle && ./cortical_gpu --ignored --nocapture --test-threads=1
	cd .bundle && ./flyhash_ann_gpu --ignored --nocapture --test-threads=1
	cd .bundle && ./index_dist --ignored --nocapture --test-threads=1
	cd .bundle && for e in $(EXAMPLES); do ./examples/$$e gpu . || exit 1; done

# On a machine with a CUDA GPU: the side-by-side tables of Scenarios 2 and 3.
gpu-bench: nccl-link
	@test -x .bundle/neurobits || $(MAKE) gpu-bundle
	mkdir -p out
	.bundle/neurobits gbnn bench --scenario 2 --device all --out out/bench-gpu-scenario2.json
	.bundle/neurobits gbnn bench --scenario 3 --device all --baseline-probes 0 --out out/bench-gpu-scenario3.json
	$(NCCL_ENV) .bundle/neurobits gbnn bench-gpus --out out/bench-gpus-scenario3.json
	.bundle/neurobits flyhash bench --config fmnist --device all --data .bundle --out out/flyhash-fmnist.json
	.bundle/neurobits flyhash bench --config batch --device all --out out/flyhash-batch.json
	.bundle/neurobits flyhash bench --config search --device all --out out/flyhash-search.json
	.bundle/neurobits ocnn bench --device all --out out/ocnn-bench.json
	.bundle/neurobits cortical bench --device all --out out/cortical-bench.json
	.bundle/neurobits cortical profile --levels 16 --steps 50 --out out/cortical-profile-l16.json
	.bundle/neurobits cortical profile --levels 14 --brute-force --steps 50 --out out/cortical-profile-l14.json
	.bundle/neurobits ocnn bench --cutoff 3 --sizes 100000,1000000 --cpu-max 100000 --device all --out out/ocnn-sparse-bench.json

# On a machine with CUDA GPUs: the approximate FlyHash index in ann-benchmarks form, Fashion-MNIST
# read from the bundle's IDX files (no libhdf5 there; true neighbours by brute force), on the CPU,
# one GPU and every GPU (ids sharded); then 10^7 synthetic vectors sharded over every GPU.
ANN_FLAGS = --rerank euclidean --probes 1,2,4,8,16,32,64,128,4096 --exact-scan --runs 3
gpu-ann-bench:
	@test -x .bundle/neurobits || $(MAKE) gpu-bundle
	mkdir -p out/ann-gpu
	for d in cpu gpu gpus; do .bundle/neurobits flyhash ann-bench -i .bundle $(ANN_FLAGS) --device $$d -o out/ann-gpu/fmnist-$$d.json || exit 1; done
	.bundle/neurobits flyhash ann-bench --synthetic 10000000 --dim 128 --queries 10000 --truth-queries 1000 \
	  --key-bits 16 --rerank euclidean --probes 1,4,16,64 --runs 1 --device gpus -o out/ann-gpu/synthetic-1e7-gpus.json

# Every fuzz target (network, message/probe CSV, IDX, NPY, matrix CSV, projection, code files)
# for FUZZ_SECONDS each, two at a time, from the seed corpus in fuzz/corpus/ (needs nightly).
FUZZ_SECONDS ?= 600
fuzz: setup
	@rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
	@rustup component add --toolchain nightly rust-src 2>&1 | grep -v 'is up to date' || true
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked
	./fuzz/run.sh $(FUZZ_SECONDS)

# Shell completions and the man page into out/share (copy them where your shell looks).
completions: setup
	$(CARGO) build --release --bin neurobits
	mkdir -p out/share/bash-completion/completions out/share/zsh/site-functions out/share/fish/vendor_completions.d out/share/man/man1
	$(BIN) completions bash > out/share/bash-completion/completions/neurobits
	$(BIN) completions zsh > out/share/zsh/site-functions/_neurobits
	$(BIN) completions fish > out/share/fish/vendor_completions.d/neurobits.fish
	$(BIN) man > out/share/man/man1/neurobits.1

clean:
	$(CARGO) clean
	rm -rf out $(WHEEL_DIR)

# The hostile-input acceptance run (issue 31): every case generated from the command tree and the
# hand-written ones (tests/hostile/), against the release binary, with a time and an address-space
# limit per case; the log goes to results/reliability/. make test runs its quick set
# (tests/hostile_quick.rs). Each run draws fresh cases from a new seed (the clock), written at the
# top of the log; `make hostile HOSTILE_SEED=N` replays run N.
HOSTILE_SEED ?= $(shell date +%s)
hostile:
	$(CARGO) build --release --bin neurobits
	@mkdir -p results/reliability
	python3 tests/hostile/run.py $(BIN) --seed $(HOSTILE_SEED) --log results/reliability/hostile.log
