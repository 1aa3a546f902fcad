#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets (AddressSanitizer + coverage, in .build-fuzz) and runs each target the
# binary lists for FUZZ_RUNS inputs from its seed corpus in Tests/Fuzz/Corpus. Ends with one line, `fuzz: N inputs, C crashes`, and fails on a
# crash (the input is kept under .build-fuzz/crashes/ and the target's output is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT="${SWIFT:-swift}"
RUNS="${FUZZ_RUNS:-20000}"
TARGET_FILTER="${FUZZ_TARGETS:-}"

swiftc_path="$(command -v swiftc)"
toolchain_lib="$(dirname "$(readlink -f "$swiftc_path")")/../lib/swift/clang/lib/linux"
fuzzer_lib="$toolchain_lib/libclang_rt.fuzzer_no_main-$(uname -m).a"
if [[ ! -f "$fuzzer_lib" ]]; then
    echo "fuzz: libFuzzer's driver library is not in this toolchain ($fuzzer_lib)" >&2
    exit 1
fi

echo "fuzz: building (AddressSanitizer + libFuzzer coverage) in .build-fuzz" >&2
ADMEDIATION_FUZZ=1 ADMEDIATION_FUZZER_LIB="$fuzzer_lib" \
    "$SWIFT" build --package-path Tools --scratch-path .build-fuzz --product fuzz-decoders >&2
binary=".build-fuzz/debug/fuzz-decoders"

work=".build-fuzz/run"
rm -rf "$work"
mkdir -p "$work" .build-fuzz/crashes
total=0
crashes=0
# The targets are the binary's own (its decoders, and one per network of the registry of built-in networks); each
# starts from its seed corpus in Tests/Fuzz/Corpus/<target>, or from `{}` when it has none.
targets="$(FUZZ_TARGET= SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="detect_leaks=0" "$binary" --list)"
for target in $targets; do
    if [[ -n "$TARGET_FILTER" && ",$TARGET_FILTER," != *",$target,"* ]]; then continue; fi
    corpus="$work/$target"
    mkdir -p "$corpus"
    if [[ -d "Tests/Fuzz/Corpus/$target" ]]; then
        cp "Tests/Fuzz/Corpus/$target/"* "$corpus/"
    else
        printf '{}' >"$corpus/empty-object.json"
    fi
    log="$work/$target.log"
    # SWIFT_BACKTRACE=enable=no: Swift's own crash backtracer must not take over libFuzzer's crash handling.
    # A hard wall-clock limit per target keeps a wedged input from hanging CI; it counts as a crash.
    status=0
    FUZZ_TARGET="$target" SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="symbolize=0:detect_leaks=0:abort_on_error=0" \
        timeout -s KILL "${FUZZ_TARGET_SECONDS:-900}" "$binary" -runs="$RUNS" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 -artifact_prefix=".build-fuzz/crashes/$target-" "$corpus" >"$log" 2>&1 || status=$?
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    runs="${runs:-0}"
    total=$((total + runs))
    if [[ $status -ne 0 ]]; then
        crashes=$((crashes + 1))
        echo "fuzz: $target crashed after $runs inputs (exit $status); its output:" >&2
        tail -n 40 "$log" >&2
    else
        echo "fuzz: $target: $runs inputs, corpus $(ls "$corpus" | wc -l) files" >&2
    fi
done
echo "fuzz: $total inputs, $crashes crashes"
[[ $crashes -eq 0 ]]
