# The two set-up commands of the README: `make demo` (the main job) and `make test` (the tests).
SWIFT ?= swift

.PHONY: demo test deps build

deps:
	@./scripts/ensure-deps.sh

build: deps
	$(SWIFT) build --build-tests

demo: deps
	$(SWIFT) run mediate compare

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
