#!/usr/bin/env bash
# Runs the conformance kit against the four adapters (and the mediator) RUNS times while a burner process keeps
# every core busy, and counts failures. Usage: scripts/kit-under-load.sh [RUNS] (default 20). Needs a prior
# `swift build --build-tests` in both packages (the root's and Tools/'s, where the adapters' tests are).
set -u
runs="${1:-20}"
cores="$(nproc)"
burners=()
for _ in $(seq "$cores"); do
    ( while :; do :; done ) &
    burners+=("$!")
done
trap 'kill "${burners[@]}" 2>/dev/null' EXIT
failed=0
logs="$(mktemp -d)"
echo "logs in $logs"
for i in $(seq "$runs"); do
    start=$(date +%s.%N)
    filter='adapterPassesTheConformanceKit|mediatorPassesTheConformanceKit'
    if timeout -s KILL 300 swift test --skip-build --filter "$filter" >"$logs/run-$i.log" 2>&1 \
        && timeout -s KILL 300 swift test --package-path Tools --skip-build --filter "$filter" \
            >>"$logs/run-$i.log" 2>&1; then
        result=pass
    else
        result=FAIL
        failed=$((failed + 1))
    fi
    printf 'run %2d/%d: %s in %.1f s\n' "$i" "$runs" "$result" "$(echo "$(date +%s.%N) - $start" | bc)"
done
echo "kit under load: $runs runs, $failed failed, $cores cores burned"
[ "$failed" -eq 0 ]
