# The two entry points (see README.md): `make demo` and `make test`.
# Everything builds with CMake + Ninja in $(BUILD); dependencies come from
# Debian's packages through scripts/install-deps.sh.
BUILD ?= build
BUILD_TYPE ?= RelWithDebInfo
FUZZ_SECONDS ?= 60
PREFIX ?= /usr/local
ASAN_BUILD ?= build-asan
# The sanitizer build checks the parts that read untrusted text: the front end
# and the tile IR (their unit tests, and every bad input under tests/errors
# through lang_tests). They link no LLVM, so the build stays small enough
# for CI (docs/internals.md, "Sanitizers").
SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer

.PHONY: all deps configure build demo test gpu-kit asan fuzz bench install deb clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

configure: deps $(BUILD)/build.ninja

build: configure
	ninja -C $(BUILD)

# Builds only what the demo runs (tk-demo and the libraries it links).
demo: configure
	ninja -C $(BUILD) tk-demo
	$(BUILD)/examples/tk-demo --report $(BUILD)/demo-report.json

# ctest names skipped tests only; the second line prints why they skipped
# (no GPU, no ptxas), from the tests' own output.
test: build
	cd $(BUILD) && ctest --output-on-failure -j2
	@python3 scripts/skip-reasons.py $(BUILD)

# The GPU kit (docs/gpu.md): build/gpu-kit/, to send to a GPU machine and
# run there with build/gpu-kit/run.sh --out DIR.
gpu-kit: configure
	ninja -C $(BUILD) gpu-kit

asan: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS="$(SANITIZE)" -DCMAKE_EXE_LINKER_FLAGS="$(SANITIZE)"
	ninja -C $(ASAN_BUILD) ir_tests lang_tests
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  TK_CACHE_DIR=$(ASAN_BUILD)/test-cache $(ASAN_BUILD)/tests/ir_tests
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  TK_CACHE_DIR=$(ASAN_BUILD)/test-cache $(ASAN_BUILD)/tests/lang_tests

fuzz: deps
	tests/fuzz/run.sh $(FUZZ_SECONDS)

bench: build
	ninja -C $(BUILD) bench

# tkc, tk-opt, headers, libraries, stdlib and find_package(tk) (docs/aot.md).
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

deb: build
	cd $(BUILD) && cpack -G DEB

clean:
	rm -rf $(BUILD)
