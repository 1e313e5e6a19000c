# Every target does its own set-up; see README.md.
.PHONY: setup build test demo bench wheel clean

VENV := .venv
BUILD := build

setup:
	@scripts/setup.sh

build: setup
	@$(VENV)/bin/python -m pip install -q --no-build-isolation --no-deps .
	@test -x $(BUILD)/mssql-cdc

test: build
	@scripts/test.sh

demo: build
	@$(BUILD)/mssql-cdc demo --dir demo-output

bench: build
	@scripts/bench.sh

wheel:  # PYTHON=/path/to/python3.12 for the abi3 wheel
	@scripts/build_wheel.sh

clean:
	rm -rf $(BUILD) build-wheel build-wheel-* dist demo-output
