#!/bin/sh
# Runs the plain test suites (the library package's, then Tools/'s without TimingTests) N times with two CPU-bound
# processes beside them, as a developer's busy machine or a shared CI runner would, and names every test that failed.
# The burners are bounded (an hour at most) and killed on exit.
# Usage: scripts/suite-under-load.sh [N]   (default 3; SWIFT=… to pick the toolchain)
set -u
N=${1:-3}
SWIFT=${SWIFT:-swift}
for where in . Tools; do
    "$SWIFT" build --package-path "$where" --build-tests >/dev/null 2>&1 \
        || { echo "the build failed: run $SWIFT build --package-path $where --build-tests" >&2; exit 1; }
done
pids=""
cleanup() { [ -n "$pids" ] && kill $pids 2>/dev/null; }
trap cleanup EXIT INT TERM
for _ in 1 2; do
    timeout 3600 sh -c 'while :; do :; done' &
    pids="$pids $!"
done
failed=0
run=1
while [ "$run" -le "$N" ]; do
    log=$(mktemp)
    if "$SWIFT" test --skip-build >"$log" 2>&1 \
        && "$SWIFT" test --package-path Tools --skip-build --skip TimingTests >>"$log" 2>&1; then
        echo "run $run of $N: passed ($(grep -E 'Test run with' "$log" | tail -2 | tr '\n' ' '))"
    else
        failed=$((failed + 1))
        echo "run $run of $N: FAILED"
        grep -E '^✘ Test ' "$log" | sed -E 's/ (failed after|recorded an issue).*//' | sort -u | sed 's/^/    /'
        mkdir -p .build
        cp "$log" ".build/suite-under-load-$run.log"
        echo "    (the run's whole output: .build/suite-under-load-$run.log)"
    fi
    rm -f "$log"
    run=$((run + 1))
done
echo "$failed of $N runs failed with two CPU-bound processes beside the suite"
[ "$failed" -eq 0 ]
