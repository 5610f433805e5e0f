# The two commands a user needs are `make demo` and `make test`; both run `make setup` first.
SHELL := /bin/bash
TOOLCHAIN := 1.95.0
CARGO := cargo +$(TOOLCHAIN)
BIN := target/release/neurobits

.PHONY: setup demo test bench clean

# Idempotent: rustup skips what is installed.
setup:
	@rustup toolchain list | grep -q '^$(TOOLCHAIN)' || rustup toolchain install $(TOOLCHAIN) --profile minimal
	@rustup component add --toolchain $(TOOLCHAIN) rust-src llvm-bitcode-linker llvm-tools clippy rustfmt 2>&1 | grep -v 'is up to date' || true
	@rustup target add --toolchain $(TOOLCHAIN) thumbv7m-none-eabi thumbv7em-none-eabihf 2>&1 | grep -v 'is up to date' || true

# Scenario 1 of the paper on the CPU: table on stdout, CSV/JSON/SVG in out/scenario1.
demo: setup
	$(CARGO) build --release --bin neurobits
	$(BIN) gbnn experiment --scenario 1 --out out/scenario1

test: setup
	$(CARGO) test --workspace
	$(CARGO) build -p neurobits-core --target thumbv7m-none-eabi
	$(CARGO) build -p neurobits-core --target thumbv7em-none-eabihf --features defmt
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# Criterion benches, then the side-by-side table of the paper's Scenario 2.
bench: setup
	$(CARGO) bench --bench gbnn
	$(CARGO) build --release --bin neurobits
	$(BIN) gbnn bench --scenario 2 --out out/bench-scenario2.json

clean:
	$(CARGO) clean
	rm -rf out
