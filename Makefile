# The two set-up commands of the README: `make demo` (the main job) and `make test` (the tests).
SWIFT ?= swift
# Tests that assert wall-clock bounds (transport deadlines within ±20 ms, cancellation within 50 ms, the
# conformance kit's 100 ms rules) and the CLI tests that spawn processes run afterwards, one at a time, so the
# parallel suite cannot steal their CPU on a 2-core machine.
TIMING_TESTS = DeadlineAndCancellationTests|ConformanceKit|CLITests|CrashSafetyTests

.PHONY: demo test deps build fuzz

deps:
	@./scripts/ensure-deps.sh

build: deps
	$(SWIFT) build --build-tests

demo: deps
	$(SWIFT) run mediate compare

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip '$(TIMING_TESTS)'
	$(SWIFT) test --skip-build --no-parallel --filter '$(TIMING_TESTS)'


# libFuzzer over every decoder of outside input (scripts/fuzz.sh); FUZZ_RUNS inputs per target (default 20000).
fuzz: deps
	SWIFT=$(SWIFT) ./scripts/fuzz.sh
