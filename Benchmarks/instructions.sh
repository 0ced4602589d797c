#!/usr/bin/env bash
# Instructions the daemon executes per reply, in user space (callgrind counts instructions, not
# seconds: the figure does not depend on the machine's load). Two runs of the load generator
# against one daemon under callgrind, 2 s and 6 s; the difference of the totals divided by the
# difference of the replies cancels connecting and everything else that is not per reply. For the
# toggle, only the event loop's thread is counted (the log writer is a thread of its own).
#
#   Benchmarks/instructions.sh [BUILD_DIR]      (default .build/release; needs valgrind)
set -euo pipefail
BIN=${1:-.build/release}
LOADGEN=${LOADGEN:-$BIN/loadgen}
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

# Instructions of the main thread (thread 1) since the last dump (a dump zeroes the counters).
main_thread_ir() {
    callgrind_control -d "$pid" >/dev/null 2>&1
    sleep 0.5
    local file
    file=$(ls -t "$work"/callgrind.out.*-01 2>/dev/null | head -1 || true)
    [ -n "$file" ] || file=$(ls -t "$work"/callgrind.out.* | head -1)
    awk '/^summary:/ { print $2 }' "$file" | tail -1
}

replies() { sed -n 's/.*replies=\([0-9][0-9]*\).*/\1/p' | tail -1; }

measure() {  # op clients window
    local op=$1 c=$2 w=$3
    rm -rf "$work/state" "$work"/callgrind.out.*
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$work/callgrind.out.%p" \
        "$BIN/swiped" --socket "$work/s.sock" --state "$work/state" 2>/dev/null &
    pid=$!
    for _ in $(seq 100); do [ -S "$work/s.sock" ] && break; sleep 0.2; done
    local a b ia ib
    ia=$(main_thread_ir)
    a=$("$LOADGEN" --socket "$work/s.sock" --op "$op" -c "$c" -w "$w" -d 2 | replies)
    ib=$(main_thread_ir)
    b=$("$LOADGEN" --socket "$work/s.sock" --op "$op" -c "$c" -w "$w" -d 6 | replies)
    local ic
    ic=$(main_thread_ir)
    kill "$pid"; wait "$pid" 2>/dev/null || true
    # ib: the 2 s run, ic: the 6 s run; their difference is (b - a) replies' worth.
    echo "$op: $(( (ic - ib) / (b - a) )) instructions per reply ($a and $b replies)"
}

measure ping 16 16
measure drag 16 16
measure toggle 16 1
