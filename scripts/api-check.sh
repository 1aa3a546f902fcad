#!/usr/bin/env bash
# The public API of every library product against the last release (the commit in scripts/api-baseline), with
# `swift package diagnose-api-breaking-changes`. A breakage fails unless scripts/api-allowed-breakages.txt lists its
# exact message: a release that breaks its API on purpose says so there, line by line, and moves the baseline at
# the next landing. Builds both revisions in .build-api (slow: two debug builds of the libraries).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
base=$(grep -v '^#' scripts/api-baseline | head -n 1 | tr -d '[:space:]')
if [ "$(git rev-parse --is-shallow-repository)" = "true" ]; then
    git fetch --unshallow --quiet
fi
if ! git cat-file -e "${base}^{commit}" 2>/dev/null; then
    echo "api-check: the baseline ${base} (scripts/api-baseline) is not in this clone's history" >&2
    exit 1
fi
echo "api-check: the public API against ${base}"
"$SWIFT" package --scratch-path .build-api diagnose-api-breaking-changes "$base" \
    --breakage-allowlist-path scripts/api-allowed-breakages.txt
