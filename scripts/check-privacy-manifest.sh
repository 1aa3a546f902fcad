#!/usr/bin/env bash
# `make privacy-check`: the Apple privacy manifest (Sources/AdMediation/PrivacyInfo.xcprivacy) parses as a property
# list, declares no tracking and no collected data types, and declares every required-reason API category the
# library's code uses (Sources/ and Adapters/, comments aside), each with a reason code. Fails naming what is wrong.
set -euo pipefail
cd "$(dirname "$0")/.."
manifest="${PRIVACY_MANIFEST:-Sources/AdMediation/PrivacyInfo.xcprivacy}"

# Apple's required-reason API categories and the calls that use them (extended regular expressions).
declare -A patterns=(
    [NSPrivacyAccessedAPICategoryUserDefaults]='\bUserDefaults\b|NSUserDefaults'
    [NSPrivacyAccessedAPICategoryFileTimestamp]='modificationDate|creationDate|\bf?stat\(|getattrlist|attributesOfItem'
    [NSPrivacyAccessedAPICategorySystemBootTime]='systemUptime|mach_absolute_time'
    [NSPrivacyAccessedAPICategoryDiskSpace]='volumeAvailableCapacity|systemFreeSize|systemSize|\bstatv?fs\('
    [NSPrivacyAccessedAPICategoryActiveKeyboards]='activeInputModes'
)

used=()
for category in "${!patterns[@]}"; do
    pattern="${patterns[$category]}"
    hits="$(grep -rnE "$pattern" Sources Adapters --include='*.swift' | grep -vE '^[^:]+:[0-9]+:\s*//' || true)"
    if [[ -n "$hits" ]]; then
        used+=("$category")
        echo "privacy-check: $category used at $(echo "$hits" | head -1 | cut -d: -f1,2)" >&2
    fi
done

python3 - "$manifest" "${used[@]}" <<'PY'
import plistlib, sys
path, used = sys.argv[1], sys.argv[2:]
try:
    with open(path, "rb") as f:
        manifest = plistlib.load(f)
except Exception as error:
    sys.exit(f"privacy-check: {path} is not a property list: {error}")
problems = []
if not isinstance(manifest, dict):
    sys.exit(f"privacy-check: {path}: the root is not a dictionary")
if manifest.get("NSPrivacyTracking") is not False:
    problems.append("NSPrivacyTracking must be false")
if manifest.get("NSPrivacyCollectedDataTypes") != []:
    problems.append("NSPrivacyCollectedDataTypes must be an empty array (the library collects none by default)")
declared = {}
for entry in manifest.get("NSPrivacyAccessedAPITypes", []):
    if not isinstance(entry, dict):
        problems.append("an NSPrivacyAccessedAPITypes entry is not a dictionary")
        continue
    reasons = entry.get("NSPrivacyAccessedAPITypeReasons")
    if not isinstance(reasons, list) or not reasons or not all(isinstance(r, str) and r for r in reasons):
        problems.append(f"{entry.get('NSPrivacyAccessedAPIType')}: no reason codes")
    declared[entry.get("NSPrivacyAccessedAPIType")] = reasons
for category in used:
    if category not in declared:
        problems.append(f"{category} is used in the code but not declared")
for problem in problems:
    print(f"privacy-check: {path}: {problem}", file=sys.stderr)
if problems:
    sys.exit(1)
print(f"privacy-check: {path} parses; {len(used)} API categories used, all declared ({', '.join(sorted(used))})")
PY
