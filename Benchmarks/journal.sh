#!/usr/bin/env bash
# Durable toggles with journald running, as under systemd (issue 12: measure as deployed).
# A private systemd-journald in a mount namespace of its own (tmpfs over /run/systemd and
# /run/log, so the host's journal is neither seen nor written; Storage=volatile, journald's
# default rate limit kept), then the same loadgen runs against a fresh daemon three ways, in
# turn, ROUNDS times: no journald listening (the daemon's entries go nowhere), journald with the
# daemon at its default --log-level info, and journald with --log-level debug (one entry per
# change). Reports toggles/s, the daemon's CPU per toggle and journald's. Nothing pinned. Needs
# root (unshare, mount). journald's rate limit (RateLimitBurst=10000 per RateLimitIntervalSec=30s
# by default) applies per systemd unit, so it drops nothing here, where there is no unit; under
# systemd it would drop most of the debug runs' entries, after journald has received them.
#
#   Benchmarks/journal.sh [BUILD_DIR]          (default .build/release)
#   ROUNDS=3 DURATION=3 Benchmarks/journal.sh
set -euo pipefail
BIN=${1:-${SWIPED_BUILD_DIR:-.build/release}}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-3}
JOURNALD=/lib/systemd/systemd-journald
[ -x "$JOURNALD" ] || { echo "journal.sh: $JOURNALD is missing" >&2; exit 1; }

if [ "${JOURNAL_SH_INSIDE:-}" != 1 ]; then
  exec env JOURNAL_SH_INSIDE=1 unshare --mount --propagation private "$0" "$BIN"
fi

mount -t tmpfs tmpfs /run/systemd 2>/dev/null || { mkdir -p /run/systemd; mount -t tmpfs tmpfs /run/systemd; }
mkdir -p /run/log && mount -t tmpfs tmpfs /run/log
mkdir -p /run/systemd/journald.conf.d
printf '[Journal]\nStorage=volatile\nForwardToSyslog=no\nForwardToWall=no\nReadKMsg=no\n' \
  >/run/systemd/journald.conf.d/bench.conf
TMP=$(mktemp -d)
JPID= DPID=
cleanup() {
  [ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
  [ -n "$JPID" ] && kill "$JPID" 2>/dev/null && wait "$JPID" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
start_journald() {
  "$JOURNALD" & JPID=$!
  for _ in $(seq 100); do
    # Settled: journald's own start-up work (flushing, opening the journal) done first.
    [ -S /run/systemd/journal/socket ] && { sleep 1; return; }
    sleep 0.05
  done
  echo "journal.sh: journald did not start" >&2; exit 1
}
stop_journald() { kill "$JPID"; wait "$JPID" 2>/dev/null || true; JPID=; rm -f /run/systemd/journal/socket; }

# run LABEL C W [swiped options]: prints "rps server_cpu_us journald_us_per_toggle"
run() {
  local c=$1 w=$2; shift 2
  rm -rf "$TMP/state" "$TMP/s.sock"
  "$BIN/swiped" --socket "$TMP/s.sock" --state "$TMP/state" "$@" 2>"$TMP/swiped.log" & DPID=$!
  for _ in $(seq 100); do [ -S "$TMP/s.sock" ] && break; sleep 0.05; done
  local j0=0 j1=0 out
  [ -n "$JPID" ] && j0=$(ticks "$JPID")
  out=$("$BIN/loadgen" --socket "$TMP/s.sock" --op toggle -c "$c" -w "$w" -d "$DURATION" --warmup 0 --pid "$DPID" | grep '^RESULT')
  [ -n "$JPID" ] && j1=$(ticks "$JPID")
  kill "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
  local rps cpu replies
  rps=$(sed -n 's/.* rps=\([0-9.]*\).*/\1/p' <<<"$out")
  cpu=$(sed -n 's/.* server_cpu_us=\([0-9.]*\).*/\1/p' <<<"$out")
  replies=$(sed -n 's/.* replies=\([0-9]*\).*/\1/p' <<<"$out")
  awk -v r="$rps" -v c="$cpu" -v j=$((j1 - j0)) -v n="$replies" -v hz="$hz" \
    'BEGIN { printf "%.0f %s %.2f\n", r, c, (n > 0 ? j / hz * 1e6 / n : 0) }'
}

median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
ROWS=()
for cw in "16 1" "16 16"; do
  set -- $cw
  declare -a none_r=() none_c=() info_r=() info_c=() info_j=() debug_r=() debug_c=() debug_j=()
  for _ in $(seq "$ROUNDS"); do
    read -r r c _ < <(run "$1" "$2"); none_r+=("$r"); none_c+=("$c")
    start_journald
    read -r r c j < <(run "$1" "$2"); info_r+=("$r"); info_c+=("$c"); info_j+=("$j")
    read -r r c j < <(run "$1" "$2" --log-level debug); debug_r+=("$r"); debug_c+=("$c"); debug_j+=("$j")
    stop_journald
  done
  load=$(cut -d' ' -f1 /proc/loadavg)
  ROWS+=("| durable toggles $1×$2, no journald listening | $(median "${none_r[@]}")/s (runs: ${none_r[*]}), daemon CPU $(median "${none_c[@]}") µs/toggle | - | $load |")
  ROWS+=("| the same, journald running, \`--log-level info\` (default) | $(median "${info_r[@]}")/s (runs: ${info_r[*]}), daemon CPU $(median "${info_c[@]}") µs, journald $(median "${info_j[@]}") µs per toggle | $(awk -v a="$(median "${info_r[@]}")" -v b="$(median "${none_r[@]}")" 'BEGIN { printf "%.2f×", a / b }') | $load |")
  ROWS+=("| the same, journald running, \`--log-level debug\` (an entry per change) | $(median "${debug_r[@]}")/s (runs: ${debug_r[*]}), daemon CPU $(median "${debug_c[@]}") µs, journald $(median "${debug_j[@]}") µs per toggle | $(awk -v a="$(median "${debug_r[@]}")" -v b="$(median "${none_r[@]}")" 'BEGIN { printf "%.2f×", a / b }') | $load |")
  unset none_r none_c info_r info_c info_j debug_r debug_c debug_j
done
echo
echo "The journal under load (\`Benchmarks/journal.sh\`): a private systemd-journald (Storage=volatile, default rate limit); medians of $ROUNDS rounds of ${DURATION} s, in turn; nothing pinned; load = 1-min load average at the end."
echo
echo "| benchmark | figure | against no journald | load |"
echo "|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
