#!/usr/bin/env bash
# Makes sure the system packages the build needs are present (libcurl's development files).
# As root it installs them with apt-get; otherwise it prints the exact command and stops.
set -euo pipefail
missing=()
if ! pkg-config --exists libcurl 2>/dev/null; then missing+=(libcurl4-openssl-dev); fi
if ! command -v pkg-config >/dev/null 2>&1; then missing+=(pkg-config); fi
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q "${missing[@]}" >&2
else
  echo "ensure-deps: missing system packages: ${missing[*]}" >&2
  echo "ensure-deps: run this once, then try again:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
