#!/usr/bin/env bash
# Builds the package and its tests, and fails when the compiler warned about the project's own sources (warnings are
# errors for Sources, Adapters, Tests and Examples; dependencies under .build are not ours to fix; the few reviewed
# exceptions are in scripts/allowed-warnings). A clean build — CI's — compiles, and so checks, every file; an
# incremental one checks the files it recompiled.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"${SWIFT:-swift}" build --build-tests "$@" 2>&1 | tee "$log"
allowed=$(grep -v -E '^(#|$)' scripts/allowed-warnings || true)
warnings=$(grep -E '^[^ ]*/(Sources|Adapters|Tests|Examples)/[^:]*:[0-9]+:[0-9]+: warning:' "$log" \
    | grep -v '/\.build' | sort -u || true)
if [ -n "$allowed" ] && [ -n "$warnings" ]; then
    warnings=$(printf '%s\n' "$warnings" | grep -v -E -f <(printf '%s\n' "$allowed") || true)
fi
if [ -n "$warnings" ]; then
    echo "error: the compiler warned about the project's own sources (warnings are errors here):" >&2
    echo "$warnings" >&2
    exit 1
fi
