#!/usr/bin/env bash
# `make docs`: builds the DocC documentation of AdMediation, the conformance kit, the testing helpers, the file form
# of the configuration (MediationFileFormat) and the observable UI models (AdUIModels) with every warning an error
# (unresolved links, ambiguous symbols, articles that collide with symbols), and checks that every public declaration
# of Sources/ and Adapters/ has a documentation comment (swift-format's AllPublicDeclarationsHaveDocumentation rule,
# alone: scripts/doc-comments.swift-format turns every other rule off).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT="${SWIFT:-swift}"

ADMEDIATION_DOCS=1 "$SWIFT" package generate-documentation --target AdMediation --target AdNetworkConformance --target AdMediationTesting \
    --target MediationFileFormat --target AdUIModels \
    --warnings-as-errors

findings=$("$SWIFT" format lint --configuration scripts/doc-comments.swift-format --recursive Sources Adapters 2>&1 \
    | grep '\[AllPublicDeclarationsHaveDocumentation\]' || true)
if [ -n "$findings" ]; then
    echo "public declarations without a documentation comment:" >&2
    echo "$findings" >&2
    exit 1
fi
echo "docs: DocC built without warnings; every public declaration is documented"
