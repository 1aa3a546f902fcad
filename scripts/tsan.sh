#!/usr/bin/env bash
# `make tsan`, after both ThreadSanitizer builds (.build-tsan for the library package, .build-tsan-tools for Tools/):
# runs the concurrency suites named in TSAN_TESTS in each package, one test at a time (the sanitizer slows code
# ~5-10x, and some tests bound wall time), with scripts/tsan-suppressions.txt. Fails on a failing test or on any
# ThreadSanitizer report; the logs are .build-tsan/tsan.log and .build-tsan-tools/tsan.log.
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
export TSAN_OPTIONS="suppressions=$PWD/scripts/tsan-suppressions.txt halt_on_error=0"
bad=0
for package in library tools; do
    scratch=.build-tsan
    where=()
    if [ "$package" = tools ]; then scratch=.build-tsan-tools; where=(--package-path Tools); fi
    log="$scratch/tsan.log"
    "$SWIFT" test "${where[@]}" --skip-build --sanitize=thread --scratch-path "$scratch" --no-parallel \
        --filter "$TSAN_TESTS" >"$log" 2>&1
    status=$?
    cat "$log"
    reports=$(grep -c 'WARNING: ThreadSanitizer' "$log")
    ran=$(grep -E 'Test run with [0-9]+ test' "$log" | tail -1)
    echo "tsan ($package package): exit status $status, $reports ThreadSanitizer report(s);" \
        "${ran:-no test run line} (log: $log)"
    if [ "$status" -ne 0 ] || [ "$reports" -ne 0 ]; then bad=1; fi
done
exit "$bad"
