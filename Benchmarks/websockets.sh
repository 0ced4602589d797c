#!/usr/bin/env bash
# Many browsers (issue 44), as `make bench` runs them (after a release build and
# .build/bench/wsload): WebSockets opened by Benchmarks/wsload (C, one thread, epoll; the RFC 6455
# handshake and masked frames; spread over loopback source addresses), unpinned, on this machine:
#   1. one daemon (SQLite) at its file limit: WS_ONE WebSockets (19,000) greeted and subscribed;
#      the daemon's RSS per connection; WS_ROUNDS changes (Unix toggles, 1 s apart) fanned out to
#      all of them; Unix clients' ping round trips meanwhile (loadgen, 4 × 1);
#   2. WS_TOTAL WebSockets (100,000) over WS_DAEMONS daemons (6) sharing one PostgreSQL database,
#      each its own port (no SO_REUSEPORT: each daemon's browsers are its own), one wsload
#      process per daemon (a process holds at most 20,000 files here); a change made on daemon 1
#      reaching every browser of every daemon; the daemons' RSS together;
#   3. a connect storm: 10,000 WebSockets opened at once on a fresh daemon;
#   4. drag round trips, 16 clients × window 16, over WebSockets and over the Unix socket, same
#      daemon, interleaved (WS_DRAG_RUNS each);
#   5. websocketd + socat (the bridge before issue 43, its cap raised): connections until it
#      refuses (WS_BRIDGE at most), RSS per connection (websocketd and every socat), drag round
#      trips.
# Prints a markdown table for BENCHMARKS.md. About three minutes:
#   WS_ONE=19000 WS_TOTAL=100000 WS_DAEMONS=6 WS_ROUNDS=5 WS_DRAG_RUNS=3 Benchmarks/websockets.sh
# WS_ONLY=drag runs part 4 alone (about 12 s a run pair); WS_PINNED=1 adds part 4 again with the
# daemon on CPU 1 and the load generators on CPU 0 (taskset), its rows marked "pinned";
# WS_AFUNIX=1 adds it again with the WebSockets on an AF_UNIX web socket that
# systemd-socket-activate passes (as a proxy on the same machine may reach the daemon): the same
# framing without the kernel's TCP.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.build/release}
WSLOAD=${WSLOAD:-.build/bench/wsload}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
ONE=${WS_ONE:-19000}
TOTAL=${WS_TOTAL:-100000}
DAEMONS=${WS_DAEMONS:-6}
ROUNDS=${WS_ROUNDS:-5}
DRAG_RUNS=${WS_DRAG_RUNS:-3}
BRIDGE=${WS_BRIDGE:-19000}
ONLY=${WS_ONLY:-}
PINNED=${WS_PINNED:-}
AFUNIX=${WS_AFUNIX:-}
[[ -z $ONLY || $ONLY = drag ]] || { echo "websockets.sh: WS_ONLY is 'drag' or unset" >&2; exit 1; }

for f in "$BIN/swiped" "$BIN/loadgen" "$WSLOAD" "$PGBIN/postgres"; do
  [[ -x $f ]] || { echo "websockets.sh: $f is missing: run 'make bench'" >&2; exit 1; }
done

TMP=$(mktemp -d /tmp/swiped-wsbench.XXXXXX)
PIDS=()
PG_PID=""
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  if [[ -n $PG_PID ]]; then kill -QUIT "$PG_PID" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT

load() { cut -d' ' -f1 /proc/loadavg; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_socket() { for _ in $(seq 600); do [[ -S $1 ]] && return 0; sleep 0.05; done; echo "websockets.sh: no socket $1" >&2; exit 1; }
# wait_line FILE PATTERN SECONDS: until FILE has a line matching PATTERN.
wait_line() {
  for _ in $(seq $(( $3 * 20 ))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  echo "websockets.sh: no '$2' in $1 within $3 s:" >&2; cat "$1" >&2; exit 1
}
kv() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'; }
median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
row() { printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4"; }

echo "| figure | value | target | load |"
echo "|---|---|---|---|"

# 1. One daemon at its file limit.
if [[ -z $ONLY ]]; then
PORT=$(free_port)
"$BIN/swiped" --socket "$TMP/one.sock" --state "$TMP/one" --web "127.0.0.1:$PORT" 2>"$TMP/one.log" &
D1=$!; PIDS+=("$D1")
wait_socket "$TMP/one.sock"
sleep 0.5
IDLE=$(rss_kb "$D1")
HOLD=$(( 30 + 2 * ROUNDS ))
"$WSLOAD" --port "$PORT" --clients "$ONE" --subscribe --hold "$HOLD" --events "$ROUNDS" >"$TMP/one.out" &
W1=$!; PIDS+=("$W1")
wait_line "$TMP/one.out" '^ready' 120
READY=$(grep '^ready' "$TMP/one.out")
FULL=$(rss_kb "$D1")
PER=$(awk -v a="$IDLE" -v b="$FULL" -v n="$(kv "$READY" ready)" 'BEGIN { printf "%.1f", (b - a) / n }')
row "one daemon: WebSockets greeted and subscribed" "$(kv "$READY" ready) of $ONE in $(kv "$READY" seconds) s, $(kv "$READY" failed) failed" "about 19,000 (the file limit)" "$(load)"
row "one daemon: RSS per WebSocket (VmRSS $((IDLE / 1024)) → $((FULL / 1024)) MB)" "$PER KB" "≤ 20 KB" "$(load)"
"$BIN/loadgen" --socket "$TMP/one.sock" --op ping -c 4 -w 1 -d $(( ROUNDS + 2 )) >"$TMP/ping.out" 2>&1 &
LG=$!
SENT=()
sleep 1
for _ in $(seq "$ROUNDS"); do
  T=$("$WSLOAD" --unix "$TMP/one.sock" --toggle matrix)
  SENT+=("$(kv "$T" sent_ns)")
  sleep 1
done
wait "$LG" || true
wait_line "$TMP/one.out" "^event k=$((ROUNDS - 1))" 60
FAN=()
for k in $(seq 0 $((ROUNDS - 1))); do
  E=$(grep "^event k=$k " "$TMP/one.out")
  FAN+=("$(ms "${SENT[$k]}" "$(kv "$E" last_ns)")")
  [[ $(kv "$E" had) = "$(kv "$READY" ready)" ]] || echo "websockets.sh: event $k reached $(kv "$E" had) of $(kv "$READY" ready)" >&2
done
row "one daemon: a change sent → every WebSocket had it ($ROUNDS changes)" "median $(echo "${FAN[*]}" | median) ms (each: ${FAN[*]} ms)" "≤ 200 ms" "$(load)"
PING=$(grep -m1 'p99' "$TMP/ping.out" || true)
row "one daemon: Unix pings meanwhile (loadgen 4 × 1)" "$(sed -n 's/.*\(p50[^,]*\), \(p99[^)]*\).*/\1, \2/p' <<<"$PING")" "answered" "$(load)"
kill "$W1" 2>/dev/null || true; wait "$W1" 2>/dev/null || true
kill "$D1"; wait "$D1" 2>/dev/null || true
fi

# 3. A connect storm, on a fresh daemon. The kernel's accept queue holds at most
# net.core.somaxconn connections (4,096 by default): past it their SYNs are dropped and come back
# a second later. A site that expects 10,000 at once raises it (docs/web.md); so does this
# script while it runs, as root, and puts it back.
SOMAX=$(cat /proc/sys/net/core/somaxconn)
if [[ $(id -u) = 0 && $SOMAX -lt 16384 ]]; then
  sysctl -qw net.core.somaxconn=16384
  trap 'sysctl -qw net.core.somaxconn='"$SOMAX"'; cleanup' EXIT
fi
PORT=$(free_port)
"$BIN/swiped" --socket "$TMP/storm.sock" --state "$TMP/storm" --web "127.0.0.1:$PORT" 2>"$TMP/storm.log" &
D3=$!; PIDS+=("$D3")
wait_socket "$TMP/storm.sock"
if [[ -z $ONLY ]]; then
S=$("$WSLOAD" --port "$PORT" --clients 10000 --storm || true)
row "connect storm: 10,000 WebSockets opened at once (somaxconn $(cat /proc/sys/net/core/somaxconn))" "$(kv "$S" ready) greeted in $(kv "$S" seconds) s, $(kv "$S" failed) refused or failed" "≤ 2 s, none refused" "$(load)"
fi

# 4. Drag round trips, WebSocket against the Unix socket, same daemon, interleaved: both send
# loadgen's drag line ({"op":"drag","movie":"matrix","dx":-60}), wsload as a browser's masked
# frames, each after a warm-up of 1 s. drag_runs PORT SOCKET LABEL [TASKSET ARGS…]
drag_runs() {
  local port=$1 sock=$2 label=$3; shift 3
  local wsr=() uxr=() wsp=() uxp=() r wsm uxm to=(--port "$port")
  [[ $port = /* ]] && to=(--ws-unix "$port")
  for _ in $(seq "$DRAG_RUNS"); do
    r=$("$@" "$WSLOAD" "${to[@]}" --clients 16 --window 16 --drag 5 | grep '^drag')
    wsr+=("$(kv "$r" rps)"); wsp+=("$(kv "$r" p99_us)")
    r=$("$@" "$BIN/loadgen" --socket "$sock" --op drag -c 16 -w 16 -d 5 2>&1 | grep -m1 "^RESULT" || true)
    uxr+=("$(kv "$r" rps)"); uxp+=("$(kv "$r" p99_us)")
  done
  wsm=$(echo "${wsr[*]}" | median); uxm=$(echo "${uxr[*]}" | median)
  row "drag 16 × 16 over WebSockets$label (runs: ${wsr[*]})" "$wsm replies/s, p99 $(echo "${wsp[*]}" | median) µs" "≥ 0.8× the Unix socket's: $(awk -v a="$wsm" -v b="$uxm" 'BEGIN { printf "%.2f×", a / b }')" "$(load)"
  row "drag 16 × 16 over the Unix socket, same daemon$label (runs: ${uxr[*]})" "$uxm replies/s, p99 $(echo "${uxp[*]}" | median) µs" "-" "$(load)"
}
drag_runs "$PORT" "$TMP/storm.sock" ""
kill "$D3"; wait "$D3" 2>/dev/null || true
if [[ -n $PINNED ]]; then
  PORT=$(free_port)
  taskset -c 1 "$BIN/swiped" --socket "$TMP/pin.sock" --state "$TMP/pin" --web "127.0.0.1:$PORT" 2>"$TMP/pin.log" &
  DP=$!; PIDS+=("$DP")
  wait_socket "$TMP/pin.sock"
  drag_runs "$PORT" "$TMP/pin.sock" ", pinned (daemon CPU 1, load CPU 0)" taskset -c 0
  kill "$DP"; wait "$DP" 2>/dev/null || true
fi
if [[ -n $AFUNIX ]]; then
  systemd-socket-activate -l "$TMP/ux.sock" -l "$TMP/ux-web.sock" --fdname=protocol:web -- \
    "$BIN/swiped" --state "$TMP/ux" 2>"$TMP/ux.log" &
  DU=$!; PIDS+=("$DU")
  wait_socket "$TMP/ux-web.sock"
  sleep 0.5
  drag_runs "$TMP/ux-web.sock" "$TMP/ux.sock" ", the WebSockets on an AF_UNIX web socket"
  kill "$DU"; wait "$DU" 2>/dev/null || true
fi
[[ $ONLY = drag ]] && exit 0

# 5. websocketd + socat, the bridge of before issue 43, its cap raised.
if command -v websocketd >/dev/null; then
  PORT=$(free_port)
  "$BIN/swiped" --socket "$TMP/br.sock" --state "$TMP/br" --max-clients 19000 2>"$TMP/br.log" &
  D5=$!; PIDS+=("$D5")
  wait_socket "$TMP/br.sock"
  websocketd --address 127.0.0.1 --port "$PORT" --maxforks "$BRIDGE" socat - "UNIX-CONNECT:$TMP/br.sock" \
    >"$TMP/websocketd.log" 2>&1 &
  WD=$!; PIDS+=("$WD")
  sleep 1
  "$WSLOAD" --port "$PORT" --clients "$BRIDGE" --subscribe --hold 20 >"$TMP/br.out" &
  W5=$!
  wait_line "$TMP/br.out" '^ready' 120
  B=$(grep '^ready' "$TMP/br.out")
  KB=$(( $(rss_kb "$WD") + $(pgrep -P "$WD" | while read -r p; do rss_kb "$p"; done | awk '{ s += $1 } END { print s + 0 }') ))
  row "websocketd + socat: connections greeted of $BRIDGE" "$(kv "$B" ready) ($(kv "$B" failed) failed)" "-" "$(load)"
  row "websocketd + socat: RSS per connection (websocketd and each socat)" "$(awk -v k="$KB" -v n="$(kv "$B" ready)" 'BEGIN { printf "%.0f KB", k / (n ? n : 1) }')" "-" "$(load)"
  kill "$W5" 2>/dev/null || true; wait "$W5" 2>/dev/null || true
  sleep 2
  R=$("$WSLOAD" --port "$PORT" --clients 16 --window 16 --drag 5 | grep '^drag' || true)
  row "websocketd + socat: drag 16 × 16" "$(kv "$R" rps) replies/s, p99 $(kv "$R" p99_us) µs" "-" "$(load)"
  kill "$WD" 2>/dev/null || true; wait "$WD" 2>/dev/null || true
  kill "$D5"; wait "$D5" 2>/dev/null || true
else
  row "websocketd + socat" "not measured: websocketd is not installed (make deps-bench)" "-" "-"
fi

# 2. 100,000 WebSockets over several daemons on one PostgreSQL database.
if [[ $(id -u) = 0 ]]; then
  chown postgres: "$TMP"
  AS=(setpriv --reuid=postgres --regid=postgres --init-groups --); PGUSER_NAME=postgres
else
  AS=(); PGUSER_NAME=$(id -un)
fi
(cd "$TMP" && "${AS[@]}" "$PGBIN/initdb" -D "$TMP/data" -U "$PGUSER_NAME" --auth=trust --encoding=UTF8 \
  --locale=C --no-instructions >"$TMP/initdb.log" 2>&1) || { cat "$TMP/initdb.log" >&2; exit 1; }
(cd "$TMP" && exec "${AS[@]}" "$PGBIN/postgres" -D "$TMP/data" -k "$TMP" -c listen_addresses= \
  -c max_connections=100 >"$TMP/postgres.log" 2>&1) & PG_PID=$!
for _ in $(seq 600); do
  "$PGBIN/pg_isready" -q -h "$TMP" -U "$PGUSER_NAME" && break
  sleep 0.05
done
"$PGBIN/createdb" -h "$TMP" -U "$PGUSER_NAME" swiped
CONN="host=$TMP dbname=swiped user=$PGUSER_NAME"
PER_DAEMON=$(( (TOTAL + DAEMONS - 1) / DAEMONS ))
DS=(); WS=(); PORTS=()
for i in $(seq 1 "$DAEMONS"); do
  PORT=$(free_port); PORTS+=("$PORT")
  "$BIN/swiped" --socket "$TMP/pg$i.sock" --state "$TMP/pg$i" --postgres "$CONN" --web "127.0.0.1:$PORT" \
    2>"$TMP/pg$i.log" &
  DS+=("$!"); PIDS+=("$!")
  wait_socket "$TMP/pg$i.sock"
done
T0=$(date +%s.%N)
for i in $(seq 1 "$DAEMONS"); do
  "$WSLOAD" --port "${PORTS[$((i - 1))]}" --clients "$PER_DAEMON" --first-source "$i" --sources 1 --subscribe \
    --hold 60 >"$TMP/pgw$i.out" &
  WS+=("$!"); PIDS+=("$!")
done
GREETED=0
for i in $(seq 1 "$DAEMONS"); do
  wait_line "$TMP/pgw$i.out" '^ready' 180
  GREETED=$(( GREETED + $(kv "$(grep '^ready' "$TMP/pgw$i.out")" ready) ))
done
OPENED=$(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
RSS=0
for p in "${DS[@]}"; do RSS=$(( RSS + $(rss_kb "$p") )); done
row "$DAEMONS daemons on one PostgreSQL: WebSockets greeted and subscribed" "$GREETED of $((PER_DAEMON * DAEMONS)) in $OPENED s" "100,000" "$(load)"
row "$DAEMONS daemons: their RSS together" "$((RSS / 1024)) MB ($(awk -v k="$RSS" -v n="$GREETED" 'BEGIN { printf "%.1f", k / n }') KB a WebSocket)" "≤ 2 GB" "$(load)"
T=$("$WSLOAD" --unix "$TMP/pg1.sock" --toggle matrix)
LAST=0
for i in $(seq 1 "$DAEMONS"); do
  wait_line "$TMP/pgw$i.out" '^event k=0' 60
  L=$(kv "$(grep '^event k=0' "$TMP/pgw$i.out")" last_ns)
  (( L > LAST )) && LAST=$L
done
row "$DAEMONS daemons: a change on daemon 1 → all $GREETED browsers had it" "$(ms "$(kv "$T" sent_ns)" "$LAST") ms" "≤ 1 s" "$(load)"
