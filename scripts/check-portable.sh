#!/usr/bin/env bash
# `make portable-check`: the modules an app links (the core, the adapters, storage, presentation, the configuration
# file form, the URLSession transport, the conformance kit and the testing helpers) must build on Apple platforms too.
# Fails with file:line when one of them
#   - imports a platform module (Glibc, Musl, Darwin, …) outside an `#if canImport(...)` / `#if os(...)` branch, or
#   - calls a Linux-only API (eventfd, epoll, getrandom, CLOCK_BOOTTIME, /proc, MSG_NOSIGNAL, Glibc.…) outside a branch
#     taken only on Linux (`#if os(Linux)`, `#if canImport(Glibc)`, `#if canImport(Musl)`).
# Excluded, as Linux/server-only by design: CurlTransport, CCurl, CurlShim, DemandSandbox, MediateKit, mediate.
# Comments are not code: `//` lines and trailing `//` comments are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

portable=(
    Sources/AdMediation Sources/AdapterSupport Sources/AdStorage Sources/ObliviousHTTP Sources/AdPresentation
    Sources/URLSessionTransport Sources/AdNetworkConformance Sources/AdMediationTesting Sources/MediationFileFormat
    Sources/AdapterKit Sources/AdUIModels Sources/AdPrivacy Sources/AdTransport
    Adapters
)
dirs=()
for dir in "${portable[@]}"; do [ -d "$dir" ] && dirs+=("$dir"); done

find "${dirs[@]}" -name '*.swift' -print0 | sort -z | xargs -0 awk '
    FNR == 1 { depth = 0 }
    {
        line = $0
        sub(/^[ \t]+/, "", line)
        if (line ~ /^\/\//) next
        sub(/[ \t]+\/\/.*$/, "", line)
    }
    line ~ /^#if[ \t]/ { depth++; cond[depth] = line; next }
    line ~ /^#elseif[ \t]/ { cond[depth] = line; next }
    line ~ /^#else/ { cond[depth] = "#else " cond[depth]; next }
    line ~ /^#endif/ { if (depth > 0) depth--; next }
    {
        guarded = 0; linuxOnly = 0
        for (i = 1; i <= depth; i++) {
            c = cond[i]
            if (c ~ /canImport\(|os\(/) guarded = 1
            if (c ~ /^#else( |$)/) continue
            if (c ~ /canImport\((Glibc|Musl)\)|os\((Linux|Android)\)/ && c !~ /!/) linuxOnly = 1
        }
    }
    line ~ /^(@preconcurrency[ \t]+|@_exported[ \t]+)?import[ \t]+(Glibc|Musl|Darwin|WinSDK|Android|Bionic|SwiftGlibc)([ \t.]|$)/ && !guarded {
        printf "%s:%d: platform module imported outside an #if canImport(...) branch: %s\n", FILENAME, FNR, line
        bad = 1
    }
    line ~ /(^|[^A-Za-z0-9_])(eventfd|epoll_[a-z_]+|getrandom|inotify_[a-z_]+|signalfd|timerfd_[a-z_]+|accept4|pipe2|sched_getaffinity|prctl)[ \t]*\(|CLOCK_BOOTTIME|MSG_NOSIGNAL|"\/proc\/|Glibc\.|Musl\./ && !linuxOnly {
        printf "%s:%d: Linux-only API outside a Linux branch (use the platform shim): %s\n", FILENAME, FNR, line
        bad = 1
    }
    END { exit bad }
' && echo "portable-check: no unguarded platform import or Linux-only API in ${#dirs[@]} module folders"
