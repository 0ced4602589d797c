#!/usr/bin/env bash
# Issue 32's figures: export, import and verify of a 1,000,000-event log, a backup of it, and the
# p99 of durable toggles while backups of it run, against their p99 without (BENCHMARKS.md).
#   Benchmarks/data-moves.sh [BIN]      (BIN: .build/release; make bench runs it)
set -euo pipefail
BIN=${1:-.build/release}
EVENTS=${BENCH_EVENTS:-1000000}
DUR=${BENCH_DURATION:-5}
TMP=$(mktemp -d /tmp/swiped-moves-bench.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT

seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err" >&2; exit 1; }
  t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'; }
under() { awk -v a="$1" -v g="$2" 'BEGIN { print (a <= g) ? "yes" : "**no**" }'; }

"$BIN/loadgen" --fill "$TMP/big" --events "$EVENTS" >&2
T_VERIFY=$(seconds "$BIN/swiped" verify --state "$TMP/big")
T_EXPORT=$(seconds "$BIN/swiped" export --state "$TMP/big" --to "$TMP/big.jsonl")
SIZE_EXPORT=$(stat -c %s "$TMP/big.jsonl")
T_VERIFY_EXPORT=$(seconds "$BIN/swiped" verify --backup "$TMP/big.jsonl")
T_IMPORT=$(seconds "$BIN/swiped" import --state "$TMP/imported" "$TMP/big.jsonl")
T_BACKUP=$(seconds "$BIN/swiped" backup --state "$TMP/big" "$TMP/big.sqlite3")

# Durable toggles on the big log, without and then with backups running back to back.
"$BIN/swiped" --socket "$TMP/s.sock" --state "$TMP/big" 2>"$TMP/daemon.log" & PIDS+=($!)
for _ in $(seq 600); do [[ -S $TMP/s.sock ]] && break; sleep 0.1; done
p99() { "$BIN/loadgen" --socket "$TMP/s.sock" --op toggle -c 4 -w 1 -d "$DUR" --warmup 1 | grep '^RESULT' | tr ' ' '\n' | sed -n 's/^p99_us=//p'; }
P99_QUIET=$(p99)
( n=0; while true; do rm -f "$TMP/during.sqlite3"; "$BIN/swiped" backup --state "$TMP/big" "$TMP/during.sqlite3" >/dev/null 2>&1 || true; n=$((n+1)); echo $n >"$TMP/backups"; done ) & BACKUPS=$!; PIDS+=("$BACKUPS")
sleep 0.5
P99_BACKUP=$(p99)
kill "$BACKUPS"; wait "$BACKUPS" 2>/dev/null || true

cat <<TABLE
| $EVENTS events | seconds | goal |
|---|---|---|
| verify --state (integrity_check, fold, snapshots, digest) | $T_VERIFY | ≤ 5 s: $(under "$T_VERIFY" 5) |
| export --to FILE ($((SIZE_EXPORT / 1000000)) MB) | $T_EXPORT | ≤ 10 s: $(under "$T_EXPORT" 10) |
| verify --backup of the export | $T_VERIFY_EXPORT | ≤ 5 s: $(under "$T_VERIFY_EXPORT" 5) |
| import --state of the export (then verified) | $T_IMPORT | ≤ 10 s: $(under "$T_IMPORT" 10) |
| backup --state (VACUUM INTO, then verified) | $T_BACKUP | - |
| durable toggles, 4 clients: p99 without a backup / while backups run ($(cat "$TMP/backups" 2>/dev/null || echo 0) started) | ${P99_QUIET} µs / ${P99_BACKUP} µs | ≤ 2×: $(awk -v a="$P99_BACKUP" -v b="$P99_QUIET" 'BEGIN { print (a <= 2 * b) ? "yes" : "**no**" }') |
TABLE
