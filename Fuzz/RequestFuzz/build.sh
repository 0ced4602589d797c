#!/bin/bash
# Builds the request fuzzer (libFuzzer + AddressSanitizer) into .build/fuzz/request-fuzz.
# SwiftPM cannot give one executable -sanitize=fuzzer without giving it to every target, so the
# libraries it needs (SwipeEngine <- Movies <- Wire, and JSONCodec, Metrics <- Wire) are compiled here as
# modules of one package (Wire reads the parser's `package` internals), with coverage
# instrumentation, then linked with the fuzzer's entry point.
set -euo pipefail
cd "$(dirname "$0")/../.."
SWIFTC=${SWIFTC:-swiftc}
OUT=.build/fuzz
mkdir -p "$OUT"
FLAGS=(-O -g -sanitize=fuzzer,address -parse-as-library -I "$OUT" -swift-version 6 -use-ld=lld -package-name swiped)
for module in JSONCodec Metrics SwipeEngine Movies Wire; do
    "$SWIFTC" "${FLAGS[@]}" -module-name "$module" -wmo -emit-module -emit-module-path "$OUT/$module.swiftmodule" \
        -emit-object -o "$OUT/$module.o" Sources/$module/*.swift
done
"$SWIFTC" "${FLAGS[@]}" -module-name RequestFuzz Fuzz/RequestFuzz/main.swift \
    "$OUT/JSONCodec.o" "$OUT/Metrics.o" "$OUT/SwipeEngine.o" "$OUT/Movies.o" "$OUT/Wire.o" -o "$OUT/request-fuzz"
echo "built $OUT/request-fuzz"
