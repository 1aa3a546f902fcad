#!/usr/bin/env bash
# `make tsan-selfcheck` (and the end of `make tsan`): proves that ThreadSanitizer, with the project's suppressions,
# sees the project's code. In the ThreadSanitizer build (.build-tsan, already built), with TSAN_FIXTURE=1:
#   - TSanFixtureTests.racyCounterIsReported races an unsynchronised counter from two threads: ThreadSanitizer must
#     print a "WARNING: ThreadSanitizer:" report for it (on a class's stored property Swift's access instrumentation
#     reports it as a "Swift access race"); a suppression matching the project's code, or a blind build, hides it;
#   - TSanFixtureTests.lockedCounterIsNotReported does the same behind the project's `LockedValue`: ThreadSanitizer
#     must print nothing (it sees the pthread mutex's happens-before edge).
# Fails, with the log's path, when either does not hold.
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
logs=${TMPDIR:-/tmp}/tsan-selfcheck.$$
mkdir -p "$logs"
export TSAN_FIXTURE=1
export TSAN_OPTIONS="suppressions=$PWD/scripts/tsan-suppressions.txt halt_on_error=0"
run() {
    "$SWIFT" test --skip-build --sanitize=thread --scratch-path .build-tsan --no-parallel \
        --filter "TSanFixtureTests.$1" >"$logs/$1.log" 2>&1
}
bad=0
run racyCounterIsReported
racy=$(grep -c 'WARNING: ThreadSanitizer: ' "$logs/racyCounterIsReported.log")
if [ "$racy" -gt 0 ] && grep -q 'racyCounterIsReported' "$logs/racyCounterIsReported.log"; then
    echo "tsan-selfcheck: the deliberate race is reported ($racy report(s)); first lines of the first:"
    grep -m1 -A6 'WARNING: ThreadSanitizer: ' "$logs/racyCounterIsReported.log" | sed 's/^/    /'
else
    echo "tsan-selfcheck: FAILED: no ThreadSanitizer report for the deliberate race ($logs/racyCounterIsReported.log)"
    bad=1
fi
if run lockedCounterIsNotReported \
    && ! grep -q 'WARNING: ThreadSanitizer' "$logs/lockedCounterIsNotReported.log" \
    && grep -q 'lockedCounterIsNotReported' "$logs/lockedCounterIsNotReported.log"; then
    echo "tsan-selfcheck: the same counter behind LockedValue: no report, test passed"
else
    echo "tsan-selfcheck: FAILED: the locked counter was reported or failed ($logs/lockedCounterIsNotReported.log)"
    bad=1
fi
[ "$bad" -eq 0 ] && rm -rf "$logs"
exit "$bad"
