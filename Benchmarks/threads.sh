#!/usr/bin/env bash
# Where a durable toggle's time goes, per thread of swiped, unpinned (issue 12): CPU time, time
# waiting in the run queue, time slices and context switches, per acknowledged toggle, from
# /proc/PID/task/*/schedstat and status over a 4 s load (after 1 s of warm-up).
#   Benchmarks/threads.sh [CONNECTIONS WINDOW]     (default 16 1; release build)
set -euo pipefail
cd "$(dirname "$0")/.."
C=${1:-16}
W=${2:-1}
BIN=${BIN:-.build/release}
T=$(mktemp -d)
"$BIN/swiped" --socket "$T/s.sock" --state "$T/st" 2>/dev/null &
P=$!
trap 'kill $P 2>/dev/null; wait $P 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do [[ -S $T/s.sock ]] && break; sleep 0.05; done
"$BIN/loadgen" --socket "$T/s.sock" --op toggle -c "$C" -w "$W" -d 1 --warmup 0 >/dev/null
snap() {
  for t in /proc/$P/task/*; do
    read -r run wait slices <"$t/schedstat"
    echo "$(cat "$t/comm") $run $wait $slices $(awk '/^voluntary_ctxt_switches/ { v = $2 } /^nonvoluntary_ctxt_switches/ { n = $2 } END { print v, n }' "$t/status")"
  done | sort
}
snap >"$T/a"
rps=$("$BIN/loadgen" --socket "$T/s.sock" --op toggle -c "$C" -w "$W" -d 4 --warmup 0 | sed -n 's/^RESULT.* rps=\([0-9]*\).*/\1/p')
snap >"$T/b"
echo "durable toggles ${C}×${W}, unpinned: $rps/s"
join "$T/a" "$T/b" | awk -v n=$((rps * 4)) '{
  printf "  %-14s CPU %6.2f µs, run-queue wait %5.2f µs, slices %.3f, voluntary switches %.3f, involuntary %.3f (per toggle)\n",
    $1, ($7 - $2) / 1000 / n, ($8 - $3) / 1000 / n, ($9 - $4) / n, ($10 - $5) / n, ($11 - $6) / n }'
