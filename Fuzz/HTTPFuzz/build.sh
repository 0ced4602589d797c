#!/bin/bash
# Builds the HTTP fuzzer (libFuzzer + AddressSanitizer) into .build/fuzz/http-fuzz: the HTTPScrape
# module (the metrics and web listeners' heads, the page's static files), with coverage
# instrumentation, linked with the fuzzer's entry point (as Fuzz/RequestFuzz/build.sh does for the
# request path).
set -euo pipefail
cd "$(dirname "$0")/../.."
SWIFTC=${SWIFTC:-swiftc}
OUT=.build/fuzz
mkdir -p "$OUT"
FLAGS=(-O -g -sanitize=fuzzer,address -parse-as-library -I "$OUT" -swift-version 6 -use-ld=lld -package-name swiped)
"$SWIFTC" "${FLAGS[@]}" -module-name HTTPScrape -wmo -emit-module -emit-module-path "$OUT/HTTPScrape.swiftmodule" \
    -emit-object -o "$OUT/HTTPScrape.o" Sources/HTTPScrape/*.swift
"$SWIFTC" "${FLAGS[@]}" -module-name HTTPFuzz Fuzz/HTTPFuzz/main.swift "$OUT/HTTPScrape.o" -o "$OUT/http-fuzz"
echo "built $OUT/http-fuzz"
