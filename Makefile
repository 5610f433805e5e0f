# The two commands a user needs are `make demo` and `make test`; both run `make setup` first.
SHELL := /bin/bash
TOOLCHAIN := 1.95.0
CARGO := cargo +$(TOOLCHAIN)
BIN := target/release/neurobits
# ptxas from PyPI (nvidia-cuda-nvcc-cu12) checks the PTX without a GPU.
MCU_ELF := mcu/target/thumbv7m-none-eabi/release/neurobits-mcu
LLVM_SIZE = $(shell rustc +$(TOOLCHAIN) --print sysroot)/lib/rustlib/x86_64-unknown-linux-gnu/bin/llvm-size
DEFMT_PRINT = $(shell command -v defmt-print || echo $(HOME)/.cargo/bin/defmt-print)
QEMU_MCU := qemu-system-arm -cpu cortex-m3 -machine lm3s6965evb -nographic -monitor none -serial none \
	-semihosting-config enable=on,target=native -icount shift=0
# One example per model (lib/examples/): fit, save, load, predict.
EXAMPLES := gbnn_store_retrieve flyhash_index flynn_fit_predict ocnn_cluster cortical_fit_predict
PTXAS = $(shell python3 -c "import nvidia.cuda_nvcc as m, os; print(os.path.join(list(m.__path__)[0], 'bin', 'ptxas'))" 2>/dev/null)

# The Python package (python/): a virtual environment with maturin, numpy, scikit-learn and
# pytest from PyPI, and the abi3 wheel built once (release) into .bundle-py/ and installed there.
PY := .venv/bin/python
WHEEL_DIR := .bundle-py

.PHONY: flyhash-quality python python-bench gpu-bundle-py peers completions fuzz setup demo test mcu-build mcu-test bench gpu-bundle gpu-test gpu-bench nccl-link clean

# Idempotent: rustup skips what is installed.
setup:
	@rustup toolchain list | grep -q '^$(TOOLCHAIN)' || rustup toolchain install $(TOOLCHAIN) --profile minimal
	@rustup component add --toolchain $(TOOLCHAIN) rust-src llvm-bitcode-linker llvm-tools clippy rustfmt 2>&1 | grep -v 'is up to date' || true
	@rustup target add --toolchain $(TOOLCHAIN) thumbv7m-none-eabi thumbv7em-none-eabihf 2>&1 | grep -v 'is up to date' || true
	@python3 -c "import nvidia.cuda_nvcc" 2>/dev/null || python3 -m pip install -q --disable-pip-version-check nvidia-cuda-nvcc-cu12
	@command -v qemu-system-arm >/dev/null || (apt-get update -q && apt-get install -y -q qemu-system-arm)
	@test -d /usr/share/datasets/fashion-mnist || (apt-get update -q && apt-get install -y -q dataset-fashion-mnist)
	@# Qhull (the OCNN's Delaunay triangulation) is compiled from the qhull crate; its bindings need libclang.
	@ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1 || (apt-get update -q && apt-get install -y -q libclang-dev)
	@# FCPS point sets, as PyPI's pyclustering 0.10.1.2 ships them (sdist; only the .data files are kept).
	@# sklearn's 8x8 digits (the cortical network's data), as the scikit-learn wheel ships them.
	@test -f data/digits/digits.csv.gz || (d=$$(mktemp -d) && python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary :all: scikit-learn==1.9.1 -d $$d \
	  && mkdir -p data/digits && python3 -c "import zipfile, glob, sys; z = zipfile.ZipFile(glob.glob(sys.argv[1] + '/*.whl')[0]); open('data/digits/digits.csv.gz', 'wb').write(z.read('sklearn/datasets/data/digits.csv.gz'))" $$d && rm -rf $$d)
	@test -f data/fcps/Lsun.data || (d=$$(mktemp -d) && python3 -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: pyclustering==0.10.1.2 -d $$d \
	  && tar xzf $$d/pyclustering-0.10.1.2.tar.gz -C $$d && mkdir -p data/fcps && cp $$d/pyclustering-0.10.1.2/pyclustering/samples/samples/fcps/*.data data/fcps/ && rm -rf $$d)
	@command -v defmt-print >/dev/null || test -x $(HOME)/.cargo/bin/defmt-print || cargo +$(TOOLCHAIN) install defmt-print --locked --version 1.2.0
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
	PTXAS=$(PTXAS) $(CARGO) test --workspace
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps
	@# One example per model, each fitting, saving, loading and predicting (on the GPU too:
	@# `-- gpu`). Release: FlyNN's runs on all of Fashion-MNIST.
	for e in $(EXAMPLES); do \
	  $(CARGO) run -q -p neurobits --release --example $$e -- cpu || exit 1; done
	@# The library a user adds pulls in no CLI, plotting or progress crates, and builds without them.
	! $(CARGO) tree -p neurobits -e normal --prefix none | grep -E '^(clap|clap_builder|plotters|indicatif) '
	$(CARGO) check -p neurobits --no-default-features
	$(CARGO) build -p neurobits-core --target thumbv7m-none-eabi
	$(CARGO) build -p neurobits-core --target thumbv7em-none-eabihf --features defmt
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	@# The Python package: scikit-learn's checks, Python = CLI bit for bit, round trips, bad input.
	@# A missing interpreter, package or scikit-learn is a failure, never a skip.
	$(PY) -c "import neurobits, numpy, sklearn, pytest"
	NEUROBITS_BIN=$(CURDIR)/target/debug/neurobits $(PY) -m pytest python/tests -q -p no:cacheprovider
	$(MAKE) mcu-test

# The firmware under QEMU: build, run with a timeout, decode defmt, compare its digest with the
# host's; then print its flash/RAM use.
mcu-build: setup
	cd mcu && $(CARGO) build --release

mcu-test: mcu-build
	mkdir -p out
	set -o pipefail; timeout 300 $(QEMU_MCU) -kernel $(MCU_ELF) 2>/dev/null > out/mcu.defmt
	$(DEFMT_PRINT) -e $(MCU_ELF) < out/mcu.defmt | tee out/mcu.log
	NEUROBITS_MCU_LOG=out/mcu.log $(CARGO) test --test mcu -- --nocapture
	$(LLVM_SIZE) $(MCU_ELF)

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

# FlyHash and FlyNN quality (slow: about 45 minutes on a 2-core machine; not in `make test`):
# `flyhash eval` (both comparisons against SimHash, Fashion-MNIST and digits), faiss's IndexLSH
# beside it, FlyNN's validation sweep (training set split 50 000 / 10 000), then FlyNN with the
# chosen defaults against scikit-learn's k-NN and logistic regression on the test set, 2 threads.
FLY_Q := results/flyhash
flyhash-quality: setup
	$(CARGO) build --release --bin neurobits
	@test -x $(PEERS_PY) || python3 -m venv out/peers-venv
	@$(PEERS_PY) -c "import numpy, scipy, faiss, sklearn, matplotlib" 2>/dev/null || $(PEERS_PY) -m pip install -q --disable-pip-version-check numpy scipy faiss-cpu scikit-learn matplotlib
	RAYON_NUM_THREADS=2 $(BIN) flyhash eval --out $(FLY_Q)/eval
	OMP_NUM_THREADS=2 $(PEERS_PY) peers/flyhash_quality.py $(FLY_Q)/eval/eval.csv /usr/share/datasets/fashion-mnist data/digits/digits.csv.gz $(FLY_Q)/eval
	RAYON_NUM_THREADS=2 $(PEERS_PY) peers/flynn_sweep.py $(BIN) /usr/share/datasets/fashion-mnist $(FLY_Q)
	THREADS=2 $(PEERS_PY) peers/flynn_knn.py $(BIN) /usr/share/datasets/fashion-mnist $(FLY_Q)

# The Python layer against the Rust API (FlyHash Fashion-MNIST, GBNN Scenario 2) and FlyNN beside
# scikit-learn's KNeighborsClassifier.
python-bench: setup
	$(PY) python/bench.py --out out/python-bench.json

# The wheel, Fashion-MNIST, FCPS and digits into .bundle-py/ for the device machine (no Rust, no
# registry): there, `pip install --no-index --no-deps .bundle-py/neurobits-*.whl` and
# `python python/tests/test_gpu.py`.
gpu-bundle-py: setup
	mkdir -p $(WHEEL_DIR)/fmnist $(WHEEL_DIR)/data
	cp /usr/share/datasets/fashion-mnist/*-ubyte.gz $(WHEEL_DIR)/fmnist/
	cp -r data/fcps data/digits $(WHEEL_DIR)/data/

# GPU runs happen on a machine without Rust: build the release test and CLI binaries here into
# .bundle/ (git-ignored) and carry that folder there.
gpu-bundle: setup
	$(CARGO) build --release --bin neurobits
	rm -rf .bundle && mkdir -p .bundle
	cp $(BIN) .bundle/neurobits
	for t in bit_exact sharded flyhash; do cp $$($(CARGO) test --release -p neurobits-gpu-host --test $$t --no-run --message-format=json 2>/dev/null \
	  | python3 -c "import sys, json; [print(m['executable']) for m in map(json.loads, sys.stdin) if m.get('executable')]") .bundle/$$t; done
	for t in ocnn_gpu cortical_gpu; do cp $$($(CARGO) test --release --test $$t --no-run --message-format=json 2>/dev/null \
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
	$(NCCL_ENV) .bundle/sharded --ignored --nocapture --test-threads=1
	.bundle/flyhash --ignored --nocapture --test-threads=1
	cd .bundle && ./ocnn_gpu --ignored --nocapture --test-threads=1
	cd .bundle && ./cortical_gpu --ignored --nocapture --test-threads=1
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
