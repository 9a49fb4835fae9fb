# hapbench: the two commands of the README, and a few helpers.
#   make demo   install what is missing, build, evaluate examples/cpu/reference on the public suite (every level)
#   make test   install what is missing, build, run every test
BUILD ?= build
JOBS ?= $(shell nproc)
SUBMISSION ?= examples/cpu/reference

.PHONY: all deps configure build build-tool demo test clean

all: build

deps:
	bash scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

# hapbench, its worker and the baselines (what demo needs)
build-tool: configure
	cmake --build $(BUILD) -j $(JOBS) --target hapbench

# everything, tests included
build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build-tool
	$(BUILD)/hapbench eval --submission $(SUBMISSION) --out $(BUILD)/demo-results.json

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
