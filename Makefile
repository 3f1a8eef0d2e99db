# Short commands for people. `make run` starts a server; `make test` runs the whole suite.
SHELL := /bin/bash
JOBS ?= $(shell nproc)
PORT ?= 9200
DATA ?= ./data
PYTHON ?= /usr/bin/python3

.PHONY: run deps build release debug asan fuzz-build test unit asan-test e2e crash oracle \
        bench bench-quick fuzz fuzz-seeds fmt lint check-headers clean

deps:
	@bash scripts/deps.sh

release: deps
	@cmake --preset release >/dev/null
	@cmake --build build/release -j$(JOBS) --target scry

debug:
	@cmake --preset debug >/dev/null
	@cmake --build build/debug -j$(JOBS)

asan:
	@cmake --preset asan >/dev/null
	@cmake --build build/asan -j$(JOBS)

build: release

run: release
	@bash scripts/run.sh "$(DATA)" "$(PORT)"

# The whole suite: unit tests, the same under ASan+UBSan, layering/header checks, end-to-end,
# oracle and crash tests, and a bounded fuzz pass.
test: deps
	@bash scripts/test.sh

unit: debug
	@cd build/debug && ctest --output-on-failure -j$(JOBS)

asan-test: asan
	@cd build/asan && ctest --output-on-failure -j$(JOBS)

fuzz-build:
	@cmake --preset fuzz >/dev/null
	@cmake --build build/fuzz -j$(JOBS)

fuzz: fuzz-build
	@bash scripts/fuzz.sh $${FUZZ_SECONDS:-60}

# Rewrites the generated fuzz seeds (segments, sketches, aggregation partials with sketches)
# after a format change; the unit tests fail while the sketch seeds are stale.
fuzz-seeds:
	@bash scripts/fuzz_seeds.sh

bench: deps
	@bash bench/run.sh

bench-quick: deps
	@bash bench/run.sh --quick

check-headers:
	@bash scripts/check_headers.sh

fmt:
	@git ls-files '*.c' '*.h' | xargs clang-format -i

lint:
	@bash scripts/lint.sh

clean:
	rm -rf build
