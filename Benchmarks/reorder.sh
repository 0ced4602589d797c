#!/usr/bin/env bash
# Issue 48's figures: a move and a list page at 100,000 movies. In process (reorder-bench: the
# loop's own work per move, a list page, the snapshot both ways), then the daemon: random moves
# over the socket (durable: each a commit), and start-up from a snapshot of 100,000 movies whose
# keys moves made long (MVS4). Prints a Markdown table for BENCHMARKS.md ("Reordering").
#   Benchmarks/reorder.sh [BIN]      (BIN: .build/release; make bench runs it)
set -euo pipefail
BIN=${1:-.build/release}
MOVIES=${BENCH_MOVIES:-100000}
DUR=${BENCH_DURATION:-5}
TMP=$(mktemp -d /tmp/swiped-reorder-bench.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT
field() { grep '^RESULT' | tr ' ' '\n' | sed -n "s/^$1=//p"; }

echo "## reorder-bench (in process)"
"$BIN/reorder-bench" --movies "$MOVIES" | tee "$TMP/inproc"

# The log: the seed and MOVIES - 10 added movies (movie_1…), as loadgen --fill writes them.
"$BIN/loadgen" --fill "$TMP/st" --movies $((MOVIES - 10)) >&2
# 128 random movies, each moved after one random movie then after another, sent in turn by
# every connection: each move takes its movie from one random place to another (sent again, a
# line would move a movie to where it already is, which shifts nothing).
rnd() { echo $(( (RANDOM * 32768 + RANDOM) % (MOVIES - 10) + 1 )); }
LINES=()
for _ in $(seq 128); do
  a=$(rnd); b=$(rnd); c=$(rnd)
  [ "$a" = "$b" ] && b=$(( a % (MOVIES - 10) + 1 ))
  [ "$a" = "$c" ] && c=$(( a % (MOVIES - 10) + 1 ))
  LINES+=(--line "{\"op\":\"move\",\"movie\":\"movie_$a\",\"after\":\"movie_$b\"}")
  LINES+=(--line "{\"op\":\"move\",\"movie\":\"movie_$a\",\"after\":\"movie_$c\"}")
done

"$BIN/swiped" --socket "$TMP/s.sock" --state "$TMP/st" 2>"$TMP/daemon.log" & PIDS+=($!)
DAEMON=$!
for _ in $(seq 600); do [[ -S $TMP/s.sock ]] && break; sleep 0.1; done
ONE=$("$BIN/loadgen" --socket "$TMP/s.sock" "${LINES[@]}" --label move-1x1 -c 1 -w 1 -d "$DUR" --pid "$DAEMON")
echo "$ONE"
MANY=$("$BIN/loadgen" --socket "$TMP/s.sock" "${LINES[@]}" --label move-16x16 -c 16 -w 16 -d "$DUR" --pid "$DAEMON")
echo "$MANY"
kill -TERM "$DAEMON"; wait "$DAEMON" || true; PIDS=()

# Start-up from the snapshot written on stop (MVS4: the moves made keys with tails), three times.
STARTS=()
for _ in 1 2 3; do
  out=$("$BIN/loadgen" --socket "$TMP/s.sock" --startup -- "$BIN/swiped" --socket "$TMP/s.sock" --state "$TMP/st" 2>>"$TMP/daemon.log")
  STARTS+=("$(echo "$out" | field hello_ms)")
done
KIND=$(python3 - "$TMP/st/events.sqlite3" <<'PY'
import sqlite3, sys
row = sqlite3.connect(sys.argv[1]).execute("SELECT substr(data, 1, 4) FROM snapshots ORDER BY seq DESC LIMIT 1").fetchone()
print(bytes(row[0]).decode() if row else "none")
PY
)

MOVE_P99=$(sed -n 's/^a move on the loop.*p99 \([0-9.]*\) µs.*/\1/p' "$TMP/inproc")
yes_no() { awk -v a="$1" -v g="$2" 'BEGIN { print (a <= g) ? "yes" : "**no**" }'; }
SORTED=$(printf '%s\n' "${STARTS[@]}" | sort -n | tr '\n' ' ')
MEDIAN=$(printf '%s\n' "${STARTS[@]}" | sort -n | sed -n 2p)
echo
echo "| figure ($MOVIES movies, unpinned, load $(cut -d' ' -f1 /proc/loadavg)) | value | target |"
echo "|---|---|---|"
echo "| a move on the loop, p99 (in process: decide and apply at submit, apply at commit) | $MOVE_P99 µs | ≤ 1,000 µs: $(yes_no "$MOVE_P99" 1000) |"
echo "| a move over the socket, 1 client × 1 in flight (durable: a commit each): requests/s, p50 / p99 | $(echo "$ONE" | field rps)/s, $(echo "$ONE" | field p50_us) / $(echo "$ONE" | field p99_us) µs, daemon CPU $(echo "$ONE" | field server_cpu_us) µs a move | – |"
echo "| moves over the socket, 16 clients × 16 in flight: requests/s, p99 | $(echo "$MANY" | field rps)/s, $(echo "$MANY" | field p99_us) µs, daemon CPU $(echo "$MANY" | field server_cpu_us) µs a move | – |"
echo "| start-up from the snapshot ($KIND) to hello, ms (3 runs: $SORTED) | $MEDIAN ms | ≤ 1,000 ms: $(yes_no "$MEDIAN" 1000) |"
