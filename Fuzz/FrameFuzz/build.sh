#!/bin/bash
# Builds the WebSocket frame fuzzer (libFuzzer + AddressSanitizer) into .build/fuzz/frame-fuzz:
# the HTTPScrape and WebSocket modules (FrameLink; Debian's libcrypto, for the handshake, is
# linked as it is, not instrumented), with coverage instrumentation, linked with the fuzzer's
# entry point. The C module is found by its module map (-I Sources/CCrypto).
set -euo pipefail
cd "$(dirname "$0")/../.."
SWIFTC=${SWIFTC:-swiftc}
OUT=.build/fuzz
mkdir -p "$OUT"
FLAGS=(-O -g -sanitize=fuzzer,address -parse-as-library -I "$OUT" -I Sources/CCrypto
    -swift-version 6 -use-ld=lld -package-name swiped)
for module in HTTPScrape WebSocket; do
    "$SWIFTC" "${FLAGS[@]}" -module-name "$module" -wmo -emit-module -emit-module-path "$OUT/$module.swiftmodule" \
        -emit-object -o "$OUT/$module-frames.o" Sources/$module/*.swift
done
"$SWIFTC" "${FLAGS[@]}" -module-name FrameFuzz Fuzz/FrameFuzz/main.swift "$OUT/HTTPScrape-frames.o" \
    "$OUT/WebSocket-frames.o" -lcrypto -o "$OUT/frame-fuzz"
echo "built $OUT/frame-fuzz"
