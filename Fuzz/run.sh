#!/usr/bin/env bash
# Builds the libFuzzer target on the Wire codec and runs it for SECONDS (default 60).
#   Fuzz/run.sh 60
# Seeds are in Fuzz/corpus (committed); inputs libFuzzer finds go to .build/fuzz-corpus, crashes
# to .build/fuzz-crash-*. A crash must become a regression test in Tests/WireTests.
#
# The build is plain swiftc, not SwiftPM: the codec files import only the C library, so they are
# compiled into a module named Wire with the harness, whatever else the Wire target comes to
# depend on. Add a file here only if it keeps to that rule.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
binary=.build/wire-fuzz
mkdir -p .build/fuzz-corpus

sources=(Sources/Wire/JSON.swift Sources/Wire/JSONError.swift Sources/Wire/JSONParser.swift
         Sources/Wire/JSONWriter.swift Sources/Wire/LineFramer.swift Sources/Wire/RFC3339.swift
         Fuzz/WireFuzz/WireFuzz.swift)
if [ ! -x "$binary" ] || [ -n "$(find "${sources[@]}" "$0" -newer "$binary")" ]; then
    echo "run.sh: building $binary"
    # ld.gold warns about every ASan symbol it cannot export; those lines are noise.
    swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name Wire \
        "${sources[@]}" -o "$binary" 2>&1 | { grep -v "Cannot export local symbol" || true; }
    [ -x "$binary" ] || { echo "run.sh: build failed" >&2; exit 1; }
fi

"$binary" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -dict=Fuzz/wire.dict -artifact_prefix=.build/fuzz-crash- -print_final_stats=1 \
    .build/fuzz-corpus Fuzz/corpus
