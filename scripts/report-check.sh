#!/usr/bin/env bash
# `make report-check`: renders `mediate compare --format html` (and `mediate load --format html`) in headless
# Chromium at 1400 and 390 px and checks the pages (scripts/report-check.py): no console errors, no external
# requests, every chart's SVG draws its marks, no text outside its box. Chromium is Debian's `chromium` package:
# as root it is installed with apt-get (like scripts/ensure-deps.sh installs libcurl); otherwise the script prints the
# exact command and stops. `SCREENSHOTS=dir` also writes a screenshot of each page at both widths there (the ones in
# docs/images/ come from `SCREENSHOTS=docs/images make report-check`). `SCRATCH_PATH` picks the build folder.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
browser=""
for candidate in chromium chromium-browser; do
  if command -v "$candidate" >/dev/null 2>&1; then browser=$(command -v "$candidate"); break; fi
done
if [ -z "$browser" ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "report-check: installing chromium" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    apt-get install -y -q chromium >&2
    browser=$(command -v chromium)
  else
    echo "report-check: missing system package: chromium" >&2
    echo "report-check: run this once, then try again:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y chromium" >&2
    exit 1
  fi
fi
scratch=()
if [ -n "${SCRATCH_PATH:-}" ]; then scratch=(--scratch-path "$SCRATCH_PATH"); fi
"$SWIFT" build --package-path Tools --product mediate "${scratch[@]}" >&2
mediate="$("$SWIFT" build --package-path Tools --show-bin-path "${scratch[@]}")/mediate"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A short seeded run of two demo placements (long source names, errors, a winner per line) against a baseline run with
# another seed, and one traced request; run inside the work folder, so the report names its files without a path.
(
  cd "$work"
  "$mediate" compare --placement home_tile --placement main_banner --requests 60 --seed 7 --quiet \
    --format json --output baseline.json
  "$mediate" compare --placement home_tile --placement main_banner --requests 60 --seed 8 --quiet \
    --baseline baseline.json --format html --output compare.html
  "$mediate" load --placement main_banner --format html > load.html
)
python3 scripts/report-check.py --browser "$browser" ${SCREENSHOTS:+--screenshots "$SCREENSHOTS"} \
  "$work/compare.html" "$work/load.html"
