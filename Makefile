# The two entry points (see README.md): `make demo` and `make test`.
# Everything builds with CMake + Ninja in $(BUILD); dependencies come from
# Debian's packages through scripts/install-deps.sh.
BUILD ?= build
BUILD_TYPE ?= RelWithDebInfo
FUZZ_SECONDS ?= 60
PREFIX ?= /usr/local

.PHONY: all deps configure build demo test fuzz bench install deb clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

configure: deps $(BUILD)/build.ninja

build: configure
	ninja -C $(BUILD)

demo: build
	$(BUILD)/examples/tk-demo --report $(BUILD)/demo-report.json

test: build
	cd $(BUILD) && ctest --output-on-failure -j2

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
