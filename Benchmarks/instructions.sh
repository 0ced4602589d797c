#!/usr/bin/env bash
# Instructions the daemon's event loop executes per reply, in user space (callgrind counts
# instructions, not seconds: the figure does not depend on the machine's load, only on how
# requests batch per wake-up). Two runs of a fresh daemon under callgrind, loaded for 1 s and
# for 5 s; the difference of their main threads' totals over the difference of their replies
# cancels start-up, connecting and shutting down. (Zeroing or dumping callgrind's counters in
# the middle of a run gave figures that moved by hundreds between runs.) For toggles the log
# writer's thread is counted apart, on a line of its own. With --profile, the functions
# that cost most per reply in the 5 s run are listed too (start-up included).
#
#   Benchmarks/instructions.sh [--profile] [BUILD_DIR]   (default .build/release; needs valgrind)
set -euo pipefail
# Swift seeds its hashing per process: the movie table's probe lengths, and so a toggle's
# string compares, differed from run to run (≈ 150 instructions a toggle). One seed for all.
export SWIFT_DETERMINISTIC_HASHING=1
PROFILE=no
if [ "${1:-}" = --profile ]; then PROFILE=yes; shift; fi
BIN=${1:-.build/release}
LOADGEN=${LOADGEN:-$BIN/loadgen}
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"' EXIT

run() {  # op clients window seconds: prints "instructions replies", leaves the dump in $work/last
    local op=$1 c=$2 w=$3 d=$4
    rm -rf "$work/state" "$work"/cg.*
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$work/cg.%p" \
        "$BIN/swiped" --socket "$work/s.sock" --state "$work/state" 2>/dev/null &
    pid=$!
    for _ in $(seq 100); do [ -S "$work/s.sock" ] && break; sleep 0.2; done
    local replies
    replies=$("$LOADGEN" --socket "$work/s.sock" --op "$op" -c "$c" -w "$w" -d "$d" |
        sed -n 's/.*replies=\([0-9][0-9]*\).*/\1/p')
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    pid=
    cp "$(ls "$work"/cg.*-01)" "$work/last"; cp "$work/last" /tmp/cg.last 2>/dev/null || true
    cp "$(ls "$work"/cg.*-02 2>/dev/null | head -1)" /tmp/cg.writer 2>/dev/null || true
    # Thread 2 is the log writer (swiped-log-writer), started first by the SQLite store.
    local writer=0
    [ -e "$(ls "$work"/cg.*-02 2>/dev/null | head -1)" ] && writer=$(awk '/^summary:/ { print $2 }' "$(ls "$work"/cg.*-02)")
    echo "$(awk '/^summary:/ { print $2 }' "$work/last") $replies $writer"
}

measure() {  # op clients window
    local op=$1 c=$2 w=$3 short long
    short=($(run "$op" "$c" "$w" 1))
    long=($(run "$op" "$c" "$w" 5))
    local per=$(((long[0] - short[0]) / (long[1] - short[1])))
    echo "$op: $per instructions per reply (${short[1]} and ${long[1]} replies)"
    if [ "$op" = toggle ]; then
        echo "$op: the log writer's thread: $(((long[2] - short[2]) / (long[1] - short[1]))) instructions per event"
    fi
    if [ "$PROFILE" = yes ]; then
        callgrind_annotate --inclusive=no --auto=no --threshold=90 "$work/last" 2>/dev/null |
            awk -v r="${long[1]}" '/^ *[0-9,]+ \(/ { gsub(",", "", $1); printf "  %8.1f  %s\n", $1 / r, $3 }' |
            head -25
    fi
}

[ -n "${ONLY:-}" ] && { measure $ONLY; exit; }
measure ping 16 16
measure drag 16 16
measure toggle 16 1
