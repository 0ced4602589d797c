#!/usr/bin/env bash
# The fault harness of issue 34 (`make faults`, and `make soak` with --short): PostgreSQL 15
# primary and synchronous standby, three daemons, each in a network namespace of its own, a
# workload, faults, then Tests/faults/check.py over the recorded history. Needs root.
#
#   Tests/faults/faults.sh BIN_DIR [--short] [--budget SECONDS] [harness.py options…]
#
# BIN_DIR holds swiped (a debug or a release build). The history is kept in
# ${FAULTS_OUT:-.build/faults}/history-<time>.jsonl (with the daemons' and servers' logs next to
# it) so that it can be checked again: Tests/faults/check.py FILE. Budget: 1,800 s by default,
# 175 s with --short (setup and the check included; the harness stops injecting faults in time).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${1:?usage: faults.sh BIN_DIR [--short] [harness options]}
shift
[[ $(id -u) = 0 ]] || { echo "faults.sh: needs root (network namespaces, nftables)" >&2; exit 2; }
[[ -x $BIN/swiped ]] || { echo "faults.sh: $BIN/swiped is missing" >&2; exit 2; }
[[ -x /usr/lib/postgresql/15/bin/postgres ]] || { echo "faults.sh: PostgreSQL 15 is missing (apt-get install postgresql)" >&2; exit 2; }
command -v nft >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nftables >/dev/null
command -v nft >/dev/null || { echo "faults.sh: nft is missing (apt-get install nftables)" >&2; exit 2; }

OUT=${FAULTS_OUT:-.build/faults}
mkdir -p "$OUT"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
HISTORY=$OUT/history-$STAMP.jsonl
BUDGET=1800
for a in "$@"; do [[ $a = --short ]] && BUDGET=175; done

# The harness cleans up after itself on every way out; should it be killed outright, the trap
# deletes what its run id names (namespaces, and with them their links and nft tables, and the
# processes in them).
RID=""
HPID=""
cleanup() {
  trap - EXIT INT TERM
  if [[ -n $HPID ]] && kill -0 "$HPID" 2>/dev/null; then kill -TERM "$HPID" 2>/dev/null || true; wait "$HPID" 2>/dev/null || true; fi
  if [[ -n $RID ]]; then /usr/bin/python3 "$HERE/harness.py" --cleanup "$RID" || true; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

/usr/bin/python3 "$HERE/harness.py" --bin "$BIN" --budget "$BUDGET" --history "$HISTORY" --keep "$OUT" "$@" \
  > >(tee "$OUT/harness-$STAMP.out") &
HPID=$!
# The run id is the harness's first line.
for _ in $(seq 100); do
  RID=$(sed -n 's/^RID=//p' "$OUT/harness-$STAMP.out" 2>/dev/null || true)
  [[ -n $RID ]] && break
  sleep 0.1
done
set +e
wait "$HPID"; STATUS=$?
HPID=""
set -e
[[ $STATUS = 0 ]] || { echo "faults.sh: the harness failed (status $STATUS); history so far: $HISTORY" >&2; exit "$STATUS"; }
echo "faults.sh: history $HISTORY"
/usr/bin/python3 "$HERE/check.py" "$HISTORY"
