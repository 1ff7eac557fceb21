# orcu - the two commands a new user runs, and the longer validation runs.
#   make demo       build, then a short torture run and the headline comparison
#   make test       build and run the quick test suite (what CI runs)
#   make test SANITIZE=address,undefined | SANITIZE=thread
#   make torture    long torture matrix (DURATION=600 seconds by default)
#   make models     Promela models with spin
#   make bench      benchmarks against liburcu, ck_epoch, rwlock -> docs/PERFORMANCE.md
#   make fuzz       libFuzzer run of the configuration parsers (FUZZ_SECONDS=60)
SANITIZE ?=
JOBS ?= 2
DURATION ?= 600
FUZZ_SECONDS ?= 60
ifeq ($(SANITIZE),)
BUILD ?= build
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
TIMEOUT_MULT ?= 1
else
BUILD ?= build-$(subst $(comma),-,$(SANITIZE))
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Debug -DORCU_DEBUG=ON -DORCU_SANITIZE=$(SANITIZE) -DORCU_BUILD_BENCH=OFF
TIMEOUT_MULT ?= 4
endif
comma := ,

.PHONY: all deps build test demo torture models bench fuzz clean install

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/Makefile: CMakeLists.txt | deps
	cmake -S . -B $(BUILD) -DORCU_WERROR=ON -DORCU_TEST_TIMEOUT_MULT=$(TIMEOUT_MULT) $(CMAKE_FLAGS) >/dev/null

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j$(JOBS)

test: build
	cd $(BUILD) && ctest -L quick --output-on-failure -j$(JOBS)

demo: build
	@bash scripts/demo.sh $(BUILD)

torture: build
	@bash tools/torture.sh $(BUILD) $(DURATION)

models: deps
	@bash models/run.sh

bench: build
	@bash bench/run.sh $(BUILD)

fuzz: deps
	@bash fuzz/run.sh $(FUZZ_SECONDS)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf build build-*
