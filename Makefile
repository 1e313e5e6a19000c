# Every target does its own set-up; see README.md.
.PHONY: setup build test test-quick demo bench wheel docs clean

VENV := .venv
BUILD := build

setup:
	@scripts/setup.sh

build: setup
	@$(VENV)/bin/python -m pip install -q --no-build-isolation --no-deps .
	@test -x $(BUILD)/mssql-cdc

test: build
	@scripts/test.sh

# The edit-compile-test loop: ctest and the Python tests not marked spark, sigkill or slow.
test-quick: build
	@scripts/test.sh quick

# The demo installs and builds only what the executable needs (scripts/build_demo.sh).
demo:
	@scripts/setup.sh demo
	@bin=$$(scripts/build_demo.sh) && $$bin demo --dir demo-output

bench: build
	@scripts/bench.sh

# The users' guide as a static site in site/ (mkdocs.yml).
docs: build
	@scripts/build_docs.sh

wheel:  # PYTHON=/path/to/python3.12 for the abi3 wheel
	@scripts/build_wheel.sh

clean:
	rm -rf $(BUILD) build-demo build-wheel build-wheel-* dist demo-output site
