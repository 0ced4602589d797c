#!/usr/bin/env bash
# Builds the libFuzzer target on the JSON codec and runs it for SECONDS (default 60).
#   Fuzz/run.sh 60
# Seeds are in Fuzz/corpus (committed); inputs libFuzzer finds go to .build/fuzz-corpus, crashes
# to .build/fuzz-crash-*. A crash must become a regression test in Tests/JSONCodecTests.
#
# The build is plain swiftc, not SwiftPM: the JSONCodec module imports only the C library, so its
# files are compiled into a module named JSONCodec with the harness, which can then check
# internals too.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
binary=.build/json-codec-fuzz
mkdir -p .build/fuzz-corpus

sources=(Sources/JSONCodec/*.swift Fuzz/JSONCodecFuzz/JSONCodecFuzz.swift)
if [ ! -x "$binary" ] || [ -n "$(find "${sources[@]}" "$0" -newer "$binary")" ]; then
    echo "run.sh: building $binary"
    # ld.gold warns about every ASan symbol it cannot export; those lines are noise.
    swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name JSONCodec -package-name swiped \
        "${sources[@]}" -o "$binary" 2>&1 | { grep -v "Cannot export local symbol" || true; }
    [ -x "$binary" ] || { echo "run.sh: build failed" >&2; exit 1; }
fi

"$binary" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -dict=Fuzz/wire.dict -artifact_prefix=.build/fuzz-crash- -print_final_stats=1 \
    .build/fuzz-corpus Fuzz/corpus
