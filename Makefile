# The two set-up commands of the README: `make demo` (the main job) and `make test` (the tests).
# Two packages: the library at the root, the tools (the `mediate` CLI, the demand sandbox, the examples that use it,
# the fuzzers and the tests that need the sandbox) in Tools/, which depends on the root by path.
SWIFT ?= swift
TOOLS := --package-path Tools
# Plain `swift test` runs everything in parallel and passes, in each package; `make test` runs the library's suite,
# then the tools' suite, then the TimingTests target (wall-clock bounds: the contract plus the measured scheduler
# slack) alone, so its bounds stay close to the contract.

.PHONY: demo test deps build fuzz docs lint tsan report-check portable-check privacy-check api-check

deps:
	@./scripts/ensure-deps.sh

build: deps
	SWIFT=$(SWIFT) ./scripts/build-strict.sh
	SWIFT=$(SWIFT) ./scripts/build-strict.sh $(TOOLS)

demo: deps
	$(SWIFT) run $(TOOLS) mediate compare

test: deps
	SWIFT=$(SWIFT) ./scripts/build-strict.sh
	SWIFT=$(SWIFT) ./scripts/build-strict.sh $(TOOLS)
	$(SWIFT) test --skip-build
	$(SWIFT) test $(TOOLS) --skip-build --skip TimingTests
	$(SWIFT) test $(TOOLS) --skip-build --filter TimingTests


# libFuzzer over every decoder of outside input (scripts/fuzz.sh); FUZZ_RUNS inputs per target (default 20000).
fuzz: deps
	SWIFT=$(SWIFT) ./scripts/fuzz.sh

# DocC for AdMediation and the conformance kit, warnings as errors, and a doc comment on every public declaration.
docs: deps
	SWIFT=$(SWIFT) ./scripts/docs.sh

# The modules an app links stay portable to Apple platforms: no unguarded Glibc/Musl import, no Linux-only API outside
# the platform shim (scripts/check-portable.sh).
portable-check:
	./scripts/check-portable.sh

# The Apple privacy manifest parses and declares every required-reason API the code uses
# (scripts/check-privacy-manifest.sh).
privacy-check:
	./scripts/check-privacy-manifest.sh

# `swift format lint --strict` with the committed .swift-format (4-space indent, 120 columns, the rules it enables).
lint:
	$(SWIFT) format lint --strict --recursive Sources Adapters Tests Examples Benchmarks Package.swift \
		Tools/Package.swift
	@find Sources Adapters Tests Examples Benchmarks Package.swift Tools/Package.swift -name '*.swift' \
		-not -path '*/.build*' -print0 \
		| xargs -0 env LC_ALL=C awk '{ s = $$0; gsub(/[\200-\277]/, "", s) } length(s) > 120 { print FILENAME ":" FNR \
		": over 120 characters"; bad = 1 } END { exit bad }'


# The HTML reports (`mediate compare`/`load --format html`) in headless Chromium (Debian's `chromium`, installed
# as root like libcurl) at 1400 and 390 px: no console error, every chart draws, no text outside its box.
# SCREENSHOTS=docs/images refreshes the screenshots the docs show.
report-check: deps
	SWIFT=$(SWIFT) ./scripts/report-check.sh

# The plain suite N times (default 3) with two CPU-bound processes beside it; names every failing test. Not in CI.
.PHONY: suite-under-load
suite-under-load: deps
	SWIFT=$(SWIFT) ./scripts/suite-under-load.sh $(or $(N),3)

# ThreadSanitizer over the concurrency suites, one at a time (the sanitizer slows code ~5-10x, and some tests bound
# wall time), in a scratch folder of its own; any report fails it. The project's one lock, `LockedValue`, is a pthread
# mutex on Linux that ThreadSanitizer sees (Swift's `Synchronization.Mutex` locks with futexes it does not see), so
# scripts/tsan-suppressions.txt names no project type or function: only runtime or third-party frames, each with its
# reason. It ends with `tsan-selfcheck`: a deliberate race (Tests/TSanFixture) must be reported, its locked twin not.
TSAN_TESTS ?= MediatorTests|FullScreenTests|FullScreenEventAgeTests|CancellationAndShutdownTests|AuctionTests|\
WaterfallStateMachineTests|BannerRefreshTests|AppOpenAdManagerTests|HandleReuseTests|ClickAttributionTests|\
BiddingNetworkTests|InlineAdModelTests|CurlLifetimeTests|OnePipeTests|LineBatchTests|MediatorPriceTests
tsan: deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	$(SWIFT) build $(TOOLS) --build-tests --sanitize=thread --scratch-path .build-tsan-tools
	SWIFT=$(SWIFT) TSAN_TESTS='$(TSAN_TESTS)' ./scripts/tsan.sh
	SWIFT=$(SWIFT) ./scripts/tsan-selfcheck.sh

# The proof that ThreadSanitizer sees the project's code (scripts/tsan-selfcheck.sh), on the build `make tsan` uses.
.PHONY: tsan-selfcheck
tsan-selfcheck: deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	SWIFT=$(SWIFT) ./scripts/tsan-selfcheck.sh

# The public API of the library products against the last release (scripts/api-baseline), breakages made on purpose
# listed in scripts/api-allowed-breakages.txt (scripts/api-check.sh). Two debug builds in .build-api.
api-check: deps
	SWIFT=$(SWIFT) ./scripts/api-check.sh

# A quick subset of the benchmarks against the committed baselines (Benchmarks/baselines.json: ratios with a
# tolerance, docs/BENCHMARKS.md): transport CPU vs AsyncHTTPClient, mediator cost per line, 100k-request compare.
# Release builds of the Benchmarks package and `mediate`, then a few minutes. Not run in CI.
.PHONY: bench-check
bench-check: deps
	cd Benchmarks && $(SWIFT) build -c release && $(SWIFT) build -c release --product mediate \
		&& .build/release/app-bench check baselines.json
