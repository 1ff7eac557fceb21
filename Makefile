# orcu - the two commands a new user runs, and the longer validation runs.
#   make demo       install missing deps, build, then a short torture run and
#                   the headline comparison
#   make test       install missing deps, build and run the quick test suite,
#                   then make check-structure (what CI runs)
#   make check-structure  src/'s layering, Calls lines, cancellation points and
#                   the names the prose gives (scripts/src-metrics.py --check;
#                   python3, cc, binutils' nm and objdump, coreutils' tsort)
#   make lint       clang-format --dry-run and clang-tidy, no finding allowed
#                   (scripts/lint.sh); make format applies clang-format
#   make test SANITIZE=address,undefined | SANITIZE=thread
#   make torture    long torture matrix (DURATION=600 seconds by default)
#   make models     Promela models with spin
#   make bench      benchmarks against liburcu, ck_epoch, rwlock -> docs/PERFORMANCE.md
#   make fuzz       libFuzzer run of the configuration parsers (FUZZ_SECONDS=60)
#   make cross      cross builds for aarch64 ppc64le s390x riscv64 armhf i686,
#                   part of the suite under qemu-user (ARCHES=all, or a list)
# The targets above install missing Debian packages first (make deps, that is
# scripts/install-deps.sh).  make build / make all / make install only
# configure and compile: cmake says what is missing, nothing is installed.
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

.PHONY: all deps build test check-structure lint format demo torture models bench fuzz clean install

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/Makefile: CMakeLists.txt
	cmake -S . -B $(BUILD) -DORCU_WERROR=ON -DORCU_TEST_TIMEOUT_MULT=$(TIMEOUT_MULT) $(CMAKE_FLAGS) >/dev/null

build: $(BUILD)/Makefile
	cmake --build $(BUILD) -j$(JOBS)

# The validation targets: deps first, then the build (in that order, also
# under make -j), then the run.
test: deps
	@$(MAKE) --no-print-directory build
	cd $(BUILD) && ctest -L quick --output-on-failure -j$(JOBS)
	@$(MAKE) --no-print-directory check-structure

# A folder of src/ uses only itself and the folders below it, with no
# import cycle, and each file's Calls line names what it calls; the
# functions, tests and models the prose names exist.
check-structure:
	python3 scripts/src-metrics.py --check

# The style (.clang-format) and the analyser (.clang-tidy): clang-tidy
# takes the compile commands of the configured build, not a compiled one.
lint: deps
	@$(MAKE) --no-print-directory $(BUILD)/Makefile
	@JOBS=$(JOBS) bash scripts/lint.sh $(BUILD)

format:
	find src include \( -name '*.c' -o -name '*.h' -o -name '*.hpp' \) -print0 | xargs -0 clang-format -i

demo: deps
	@$(MAKE) --no-print-directory build
	@bash scripts/demo.sh $(BUILD)

torture: deps
	@$(MAKE) --no-print-directory build
	@bash tools/torture.sh $(BUILD) $(DURATION)

models: deps
	@bash models/run.sh

bench: deps
	@$(MAKE) --no-print-directory build
	@bash bench/run.sh $(BUILD)

fuzz: deps
	@bash fuzz/run.sh $(FUZZ_SECONDS)

# Cross architectures (scripts/cross-test.sh): installs the missing
# cross compilers and qemu-user, builds in build-cross-ARCH.
ARCHES ?= all
.PHONY: cross
cross:
	@bash scripts/cross-test.sh --install $(ARCHES)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf build build-*

# The ABI of liborcu.so against the committed baseline abi/liborcu.abi
# (docs/ABI.md): added symbols pass, removed or changed ones fail.
# make abi-baseline rewrites the baseline after a deliberate change.
.PHONY: abi-check abi-baseline
abi-check: build
	@bash scripts/abi-check.sh $(BUILD)

abi-baseline: build
	@bash scripts/abi-check.sh $(BUILD) --update
