#!/usr/bin/python3
"""The fault harness of issue 34: PostgreSQL failover, partitions, latency; a workload; a history.

    harness.py --bin DIR [--short] [--budget SECONDS] [--history FILE] [--keep DIR]

Needs root (network namespaces, nftables). `Tests/faults/faults.sh` runs it (`make faults`,
`make soak`); docs/postgres.md, "Faults, checked", says what it does and what it found.

The machine (all of it inside network namespaces of this run, named swf<RID>-*; nothing on the
host's own network):

    router ns  br0 10.77.0.1, the latency proxy (proxy.py): :15432 -> pg1, :25432 -> pg2
    pg1 ns     10.77.0.11  PostgreSQL 15, first the primary
    pg2 ns     10.77.0.12  PostgreSQL 15, first the synchronous standby (synchronous_standby_names='*')
    d1..d3 ns  10.77.0.21-23  swiped --postgres 'host=10.77.0.1,10.77.0.1 port=15432,25432
               target_session_attrs=read-write …'; their sockets are files under the run's
               directory, which the clients (threads of this process, in the host namespace) use.

Each node is joined to the router's bridge by a veth pair. Faults: a link set down (the
router's end), nftables drop rules in a node's namespace (table `inet swf`, silent drops, and
`numgen random mod 100 < 5` loss), the proxy's delay, kill -9, pg_ctl promote, pg_rewind.

Every way out (normal end, an exception, SIGINT, SIGTERM) stops every process this run started
(each in a process group of its own, killed by group and reaped) and deletes every namespace it
made (which deletes their links and nft tables with them). faults.sh also calls `--cleanup RID`
as a backstop should this process itself be killed.
"""
import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PGBIN = os.environ.get("SWIPED_PG_BINDIR", "/usr/lib/postgresql/15/bin")
NET = "10.77.0"
ADDR = {"r": NET + ".1", "pg1": NET + ".11", "pg2": NET + ".12", "d1": NET + ".21", "d2": NET + ".22",
        "d3": NET + ".23"}
PROXY_PORT = {"pg1": 15432, "pg2": 25432}
DAEMONS = ["d1", "d2", "d3"]
# What docs/postgres.md ("A synchronous standby") tells operators to set, so that a standby cut
# off from its primary comes back within about a second of the heal (every commit waits for it):
# the stream given up after 5 s of silence, not the 60 s default, and tried again 0.2 s later,
# not 5 s; each try given up by tcp_user_timeout after 2 s (the WAL receiver ignores
# connect_timeout) so that the next one sends a SYN at once instead of waiting for the kernel's
# next retransmission (3, 7 or 15 s after the first on Debian 12's kernel).
STANDBY_SETTINGS = ("wal_sender_timeout = '5s'\nwal_receiver_timeout = '5s'\n"
                    "wal_retrieve_retry_interval = '200ms'\n")
STANDBY_CONNINFO = " keepalives_idle=2 keepalives_interval=1 keepalives_count=3 tcp_user_timeout=2000"
AS_POSTGRES = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"]


def log(*args):
    print(time.strftime("%H:%M:%S"), *args, file=sys.stderr, flush=True)


class History:
    """The history file: JSON lines (check.py's docstring has the format). `t` is seconds since
    the run started (monotonic clock)."""

    def __init__(self, path):
        self.file = open(path, "w")
        self.lock = threading.Lock()
        self.t0 = time.monotonic()

    def now(self):
        return time.monotonic() - self.t0

    def add(self, record, t=None):
        record = dict(record)
        record["t"] = round(self.now() if t is None else t, 4)
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
        with self.lock:
            self.file.write(line + "\n")

    def close(self):
        with self.lock:
            self.file.close()


def run(cmd, check=True, timeout=120, ns=None, quiet=False, **kw):
    if ns:
        cmd = ["ip", "netns", "exec", ns] + cmd
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stdout.strip()[-2000:]}")
    if not quiet and p.returncode != 0:
        log(f"(exit {p.returncode}) {' '.join(cmd)}: {p.stdout.strip()[-300:]}")
    return p


class Net:
    """The namespaces, the bridge and the nft tables."""

    def __init__(self, rid):
        self.rid = rid
        self.made = []

    def ns(self, node):
        return f"swf{self.rid}-{node}"

    def setup(self):
        for node in ADDR:
            run(["ip", "netns", "add", self.ns(node)])
            self.made.append(self.ns(node))
            run(["ip", "-n", self.ns(node), "link", "set", "lo", "up"])
        r = self.ns("r")
        run(["ip", "-n", r, "link", "add", "br0", "type", "bridge"])
        run(["ip", "-n", r, "addr", "add", ADDR["r"] + "/24", "dev", "br0"])
        run(["ip", "-n", r, "link", "set", "br0", "up"])
        for node in ADDR:
            if node == "r":
                continue
            run(["ip", "-n", r, "link", "add", "v" + node, "type", "veth", "peer", "name", "eth0", "netns",
                 self.ns(node)])
            run(["ip", "-n", r, "link", "set", "v" + node, "master", "br0", "up"])
            run(["ip", "-n", self.ns(node), "addr", "add", ADDR[node] + "/24", "dev", "eth0"])
            run(["ip", "-n", self.ns(node), "link", "set", "eth0", "up"])
            self.nft_reset(node)

    def link(self, node, up):
        run(["ip", "-n", self.ns("r"), "link", "set", "v" + node, "up" if up else "down"])

    def nft_reset(self, node):
        """An empty table `inet swf` with input and output chains (policy accept)."""
        script = ("table inet swf\ndelete table inet swf\ntable inet swf {\n"
                  " chain input { type filter hook input priority 0; policy accept; }\n"
                  " chain output { type filter hook output priority 0; policy accept; }\n}\n")
        run(["nft", "-f", "-"], ns=self.ns(node), input=script)

    def nft_add(self, node, chain, rule):
        run(["nft", "add", "rule", "inet", "swf", chain] + rule.split(), ns=self.ns(node))

    def drop_between(self, node, peer_addr, port=None):
        """Silently drops what node sends to peer_addr (to its port) and what comes back."""
        if port is None:
            self.nft_add(node, "output", f"ip daddr {peer_addr} drop")
            self.nft_add(node, "input", f"ip saddr {peer_addr} drop")
        else:
            self.nft_add(node, "output", f"ip daddr {peer_addr} tcp dport {port} drop")
            self.nft_add(node, "input", f"ip saddr {peer_addr} tcp sport {port} drop")

    def teardown(self):
        # What is left in a namespace (a server's backends, which are not in the postmaster's
        # process group) is killed before the namespace goes.
        for ns in reversed(self.made):
            for p in run(["ip", "netns", "pids", ns], check=False, quiet=True).stdout.split():
                try:
                    os.kill(int(p), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
            run(["ip", "netns", "del", ns], check=False, quiet=True)
        self.made = []


def cleanup_rid(rid):
    """The backstop: every process in a namespace of run RID killed, every such namespace deleted."""
    out = run(["ip", "netns", "list"], check=False, quiet=True).stdout
    for line in out.splitlines():
        name = line.split()[0] if line.split() else ""
        if name.startswith(f"swf{rid}-"):
            pids = run(["ip", "netns", "pids", name], check=False, quiet=True).stdout.split()
            for p in pids:
                try:
                    os.kill(int(p), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
            run(["ip", "netns", "del", name], check=False, quiet=True)


class Procs:
    """Every process of the run, each in a session (and process group) of its own."""

    def __init__(self):
        self.lock = threading.Lock()
        self.procs = []

    def start(self, cmd, out, ns=None, **kw):
        if ns:
            cmd = ["ip", "netns", "exec", ns] + cmd
        f = open(out, "ab")
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, **kw)
        f.close()
        with self.lock:
            self.procs.append(p)
        return p

    def kill_all(self):
        with self.lock:
            procs = list(self.procs)
        for p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    pass
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                log(f"pid {p.pid} did not exit after SIGKILL")


class Postgres:
    """One PostgreSQL server in its node's namespace."""

    def __init__(self, h, node):
        self.h, self.node = h, node
        self.dir = os.path.join(h.dir, node)
        self.data = os.path.join(self.dir, "data")
        self.sock = os.path.join(self.dir, "sock")
        self.logfile = os.path.join(self.dir, "server.log")
        self.proc = None
        os.makedirs(self.sock, exist_ok=True)
        shutil.chown(self.dir, "postgres", "postgres")
        shutil.chown(self.sock, "postgres", "postgres")

    def pg(self, prog, args, check=True, timeout=300):
        return run(AS_POSTGRES + [os.path.join(PGBIN, prog)] + args, ns=self.h.net.ns(self.node), check=check,
                   timeout=timeout, cwd=self.dir)

    def initdb(self):
        self.pg("initdb", ["-D", self.data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C",
                           "--no-instructions"])
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n# issue 34's harness\nlisten_addresses = '*'\nwal_level = replica\nmax_wal_senders = 10\n"
                    "wal_log_hints = on\nsynchronous_commit = on\nfsync = on\n"
                    "hot_standby = on\nwal_keep_size = '512MB'\nmax_connections = 100\n"
                    + STANDBY_SETTINGS +
                    "log_line_prefix = '%m [%p] '\nlog_timezone = 'UTC'\n")
            for setting in self.h.args.pg_set or []:
                name, value = setting.split("=", 1)
                f.write(f"{name} = '{value}'\n")
        with open(os.path.join(self.data, "pg_hba.conf"), "a") as f:
            f.write(f"host all all {NET}.0/24 trust\nhost replication all {NET}.0/24 trust\n")

    def start(self):
        self.proc = self.h.procs.start(AS_POSTGRES + [os.path.join(PGBIN, "postgres"), "-D", self.data, "-k",
                                                      self.sock], self.logfile, ns=self.h.net.ns(self.node))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.node}: postgres exited {self.proc.returncode}; see {self.logfile}")
            if run([os.path.join(PGBIN, "pg_isready"), "-q", "-h", self.sock, "-U", "postgres"],
                   check=False, quiet=True).returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError(f"{self.node}: postgres not ready in 120 s")

    def psql(self, sql, db="postgres", timeout=30, check=True, quiet=False):
        p = run([os.path.join(PGBIN, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", self.sock,
                 "-U", "postgres", "-d", db, "-c", sql], check=check, timeout=timeout, quiet=quiet)
        return p.stdout.strip()

    def kill9(self):
        """kill -9 of every process of the server: PostgreSQL's children call setsid(), so the
        postmaster's process group is the postmaster alone; all of them are in this node's
        namespace, and nothing else is."""
        pids = run(["ip", "netns", "pids", self.h.net.ns(self.node)], check=False, quiet=True).stdout.split()
        for p in pids:
            try:
                os.kill(int(p), signal.SIGKILL)
            except (OSError, ValueError):
                pass
        if self.proc:
            self.proc.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and run(["ip", "netns", "pids", self.h.net.ns(self.node)], check=False,
                                                  quiet=True).stdout.split():
            time.sleep(0.05)

    def stop_fast(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def base_backup_from(self, source):
        if os.path.exists(self.data):
            shutil.rmtree(self.data)
        self.pg("pg_basebackup", ["-h", ADDR[source.node], "-U", "postgres", "-D", self.data, "-R", "-X", "stream",
                                  "-c", "fast"], timeout=600)
        self.tune_standby()

    def tune_standby(self):
        """Adds STANDBY_CONNINFO to the primary_conninfo that `-R` wrote (the last line wins)."""
        path = os.path.join(self.data, "postgresql.auto.conf")
        with open(path) as f:
            lines = [ln for ln in f.read().splitlines() if ln.startswith("primary_conninfo = '")]
        if not lines:
            raise RuntimeError(f"{self.node}: no primary_conninfo in {path}")
        with open(path, "a") as f:
            f.write(lines[-1][:-1] + STANDBY_CONNINFO + "'\n")

    def rejoin_as_standby_of(self, source):
        """After kill -9: crash recovery in single-user mode (pg_rewind wants a clean shutdown),
        then pg_rewind from the new primary, then started as its standby. When that fails, or the
        server does not stream within 30 s, a fresh base backup instead. Returns how it rejoined."""
        notes = os.path.join(self.h.dir, "rejoin.log")
        try:
            p = run(AS_POSTGRES + [os.path.join(PGBIN, "postgres"), "--single", "-D", self.data, "-k", self.sock,
                                   "postgres"], ns=self.h.net.ns(self.node), input="", timeout=300, cwd=self.dir)
            # A just-promoted server's control file names its new timeline only after a
            # checkpoint; before it pg_rewind finds "the same timeline" and rewinds nothing.
            source.psql("CHECKPOINT")
            q = self.pg("pg_rewind", ["--target-pgdata", self.data, "-R", "--source-server",
                                      f"host={ADDR[source.node]} user=postgres dbname=postgres"], timeout=600)
            self.tune_standby()
            with open(notes, "a") as f:
                f.write(f"--- {self.node} single-user recovery:\n{p.stdout}\n--- pg_rewind:\n{q.stdout}\n")
            self.start()
            if self.streams_from(source, 30):
                return "pg_rewind"
            log(f"{self.node}: not streaming 30 s after pg_rewind; fresh base backup")
            self.stop_fast()
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            with open(notes, "a") as f:
                f.write(f"--- {self.node} pg_rewind failed: {e}\n")
            log(f"{self.node}: pg_rewind failed ({str(e)[-300:]}); fresh base backup")
        self.base_backup_from(source)
        self.start()
        return "pg_basebackup"

    def streams_from(self, source, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if source.psql("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'",
                           check=False) not in ("", "0"):
                return True
            time.sleep(0.3)
        return False


class Daemon:
    def __init__(self, h, name):
        self.h, self.name = h, name
        self.sock = os.path.join(h.dir, name + ".sock")
        self.logfile = os.path.join(h.dir, name + ".log")
        self.proc = None
        self.lock = threading.Lock()
        self.expected_down = False  # the harness stopped it on purpose

    def conninfo(self):
        return (f"host={ADDR['r']},{ADDR['r']} port={PROXY_PORT['pg1']},{PROXY_PORT['pg2']} dbname=swiped "
                f"user=postgres target_session_attrs=read-write application_name=swiped-{self.name}")

    def start(self, wait=True, timeout=120):
        """Starts it (again); retries while it cannot start (the database unreachable)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                os.unlink(self.sock)
            except FileNotFoundError:
                pass
            p = self.h.procs.start([self.h.bin + "/swiped", "--socket", self.sock, "--state",
                                    os.path.join(self.h.dir, self.name + "-state"), "--postgres", self.conninfo()],
                                   self.logfile, ns=self.h.net.ns(self.name))
            with self.lock:
                self.proc = p
                self.expected_down = False
            if not wait:
                return
            while p.poll() is None and not os.path.exists(self.sock):
                time.sleep(0.05)
            if p.poll() is None:
                self.h.history.add({"type": "daemon", "daemon": self.name, "what": "started", "pid": p.pid})
                return
            self.h.history.add({"type": "daemon", "daemon": self.name, "what": "start-failed",
                                "rc": p.returncode})
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} cannot start; see {self.logfile}")
            time.sleep(1)

    def kill(self, sig):
        with self.lock:
            self.expected_down = True
            p = self.proc
        if p and p.poll() is None:
            os.killpg(p.pid, sig)
        return p


# --- Clients ------------------------------------------------------------------------------------

class Conn:
    """One client connection to a daemon's socket: requests with ids, replies matched by id."""

    def __init__(self, path, timeout):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.connect(path)
        self.buf = b""
        self.next_id = 1
        self.hello = self.line()

    def line(self):
        while b"\n" not in self.buf:
            data = self.s.recv(65536)
            if not data:
                raise ConnectionError("closed by the daemon")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, request):
        rid = self.next_id
        self.next_id += 1
        self.s.sendall((json.dumps(dict(request, id=rid)) + "\n").encode())
        while True:
            msg = self.line()
            if msg.get("id") == rid:
                return msg

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


class View:
    """What the clients know of the movies (from the subscribers' events): whom to toggle, what
    to restore, which version to expect. Shared by every client thread."""

    def __init__(self):
        self.lock = threading.Lock()
        self.movies = {}  # id -> (version, removed)

    def apply(self, movie, removed):
        with self.lock:
            old = self.movies.get(movie["id"])
            if old is None or old[0] < movie["version"]:
                self.movies[movie["id"]] = (movie["version"], removed)

    def pick(self, rng, removed):
        with self.lock:
            ids = [(i, v) for i, (v, r) in self.movies.items() if r == removed]
        if not ids:
            return None
        # Most writes on a few movies, so that writers race on them.
        hot = sorted(ids)[:12]
        return rng.choice(hot if rng.random() < 0.7 else ids)


def writer(h, daemon, wid, rng):
    client = f"{daemon.name}w{wid}"
    conn = None
    n = 0
    while not h.stop_workload.is_set():
        n += 1
        key = f"{client}-{n}"
        roll = rng.random()
        if roll < 0.12:
            op = {"op": "add", "title": f"{client} movie {n}"}
        elif roll < 0.22:
            pick = h.view.pick(rng, removed=False)
            op = {"op": "remove", "movie": pick[0]} if pick else {"op": "add", "title": f"{client} movie {n}"}
        elif roll < 0.34:
            pick = h.view.pick(rng, removed=True)
            op = ({"op": "restore", "movie": pick[0], "expect": pick[1]} if pick else
                  {"op": "add", "title": f"{client} movie {n}"})
        else:
            pick = h.view.pick(rng, removed=False)
            if not pick:
                time.sleep(0.1)
                continue
            kind = "toggle-watched" if rng.random() < 0.7 else "toggle-watched-with-friends"
            op = {"op": kind, "movie": pick[0]}
            if rng.random() < 0.4:
                op["expect"] = pick[1]
        op["key"] = key
        attempt = 0
        while True:
            attempt += 1
            if conn is None:
                try:
                    conn = Conn(daemon.sock, h.reply_timeout)
                except OSError:
                    conn = None
                    if h.stop_workload.is_set():
                        h.history.add({"type": "giveup", "client": client, "key": key})
                        return
                    time.sleep(0.2)
                    attempt -= 1
                    continue
            h.history.add({"type": "call", "client": client, "daemon": daemon.name, "key": key,
                           "attempt": attempt, "op": op})
            try:
                reply = conn.call(op)
            except (OSError, ConnectionError, ValueError) as e:
                why = "timeout" if isinstance(e, socket.timeout) else "connection"
                h.history.add({"type": "ret", "client": client, "key": key, "attempt": attempt,
                               "result": "indoubt", "why": why, "detail": str(e)[:100]})
                conn.close()
                conn = None
                if h.stop_workload.is_set():
                    h.history.add({"type": "giveup", "client": client, "key": key})
                    return
                time.sleep(0.1)
                continue
            if reply.get("ok"):
                h.history.add({"type": "ret", "client": client, "key": key, "attempt": attempt, "result": "ok",
                               "seq": reply["seq"], "movie": reply["movie"]})
                break
            err = reply.get("error", {})
            code = err.get("code")
            if code == "unavailable":
                h.history.add({"type": "ret", "client": client, "key": key, "attempt": attempt,
                               "result": "unavailable"})
                # Sometimes the op is given up after `unavailable` (check.py then requires that
                # the key is nowhere in the log); otherwise sent again with the same key.
                if rng.random() < 0.25 or h.stop_workload.is_set():
                    h.history.add({"type": "abandon", "client": client, "key": key})
                    break
                time.sleep(0.1)
                continue
            if code == "storage":
                h.history.add({"type": "ret", "client": client, "key": key, "attempt": attempt,
                               "result": "indoubt", "why": "storage", "detail": err.get("message", "")[:100]})
                time.sleep(0.2)
                continue
            h.history.add({"type": "ret", "client": client, "key": key, "attempt": attempt, "result": "fail",
                           "code": code, "reason": err.get("reason")})
            break
        time.sleep(rng.uniform(0.0, 0.02))
    if conn:
        conn.close()


def subscriber(h, daemon):
    """Subscribes from 0, records every movie event; after a lost connection subscribes again
    from the last seq it was shown."""
    last = 0
    while not h.stop_subscribers.is_set():
        try:
            conn = Conn(daemon.sock, 2.0)
            reply = conn.call({"op": "subscribe", "from": last})
        except (OSError, ConnectionError, ValueError):
            time.sleep(0.2)
            continue
        if not reply.get("ok"):
            err = reply.get("error", {})
            h.history.add({"type": "sub-refused", "sub": daemon.name, "from": last, "code": err.get("code"),
                           "message": err.get("message", "")[:200]})
            conn.close()
            time.sleep(0.3)
            continue
        h.history.add({"type": "sub", "sub": daemon.name, "from": last, "seq": reply["seq"]})
        try:
            while not h.stop_subscribers.is_set():
                try:
                    msg = conn.line()
                except socket.timeout:
                    continue
                if msg.get("event") == "movie":
                    if h.args.doctor == "drop-event" and daemon.name == "d1" and msg["seq"] == 1000:
                        # The checker shown failing on purpose: one event the subscriber was
                        # shown is left out of the history (a gap).
                        last = msg["seq"]
                        continue
                    rec = {"type": "event", "sub": daemon.name, "seq": msg["seq"], "kind": msg["kind"],
                           "movie": msg["movie"], "at": msg.get("at")}
                    if "undoes" in msg:
                        rec["undoes"] = msg["undoes"]
                    h.history.add(rec)
                    last = msg["seq"]
                    with h.history.lock:
                        h.sub_heads[daemon.name] = last
                    h.view.apply(msg["movie"], msg["kind"] == "removed")
                elif msg.get("event") == "bye":
                    h.history.add({"type": "sub-lost", "sub": daemon.name, "why": "bye " + str(msg.get("reason"))})
                    break
        except (OSError, ConnectionError, ValueError) as e:
            h.history.add({"type": "sub-lost", "sub": daemon.name, "why": str(e)[:100]})
        conn.close()


def prober(h, daemon, rng):
    """Reads and swipes on one connection, every 100 ms: what a client is served during a fault."""
    conn = None
    while not h.stop_workload.is_set():
        if conn is None:
            try:
                conn = Conn(daemon.sock, 5.0)
            except OSError:
                time.sleep(0.2)
                continue
        try:
            t = time.monotonic()
            reply = conn.call({"op": "list"})
            rec = {"type": "read", "daemon": daemon.name, "op": "list", "ok": bool(reply.get("ok")),
                   "lat": round(time.monotonic() - t, 4)}
            if reply.get("ok"):
                rec["seq"] = reply["seq"]
                if rng.random() < 0.2:  # check.py compares these with the fold of the log
                    rec["movies"] = reply["movies"]
            h.history.add(rec)
            movies = reply.get("movies") or []
            if movies:
                movie = rng.choice(movies)["id"]
                t = time.monotonic()
                r1 = conn.call({"op": "drag", "movie": movie, "dx": -30})
                r2 = conn.call({"op": "release", "movie": movie})
                h.history.add({"type": "read", "daemon": daemon.name, "op": "swipe",
                               "ok": bool(r1.get("ok")) and (bool(r2.get("ok")) or
                                                             r2.get("error", {}).get("code") == "not-found"),
                               "lat": round(time.monotonic() - t, 4)})
        except (OSError, ConnectionError, ValueError) as e:
            h.history.add({"type": "read", "daemon": daemon.name, "op": "list", "ok": False, "lat": None,
                           "detail": str(e)[:80]})
            conn.close()
            conn = None
        time.sleep(0.1)
    if conn:
        conn.close()


# --- The harness ----------------------------------------------------------------------------------

class Harness:
    def __init__(self, args):
        self.args = args
        self.bin = os.path.abspath(args.bin)
        self.rid = "%04x" % random.randrange(0x10000)
        self.dir = tempfile.mkdtemp(prefix=f"swiped-faults-{self.rid}.")
        os.chmod(self.dir, 0o755)
        self.net = Net(self.rid)
        self.procs = Procs()
        self.history = History(args.history)
        self.view = View()
        self.stop_workload = threading.Event()
        self.stop_subscribers = threading.Event()
        self.reply_timeout = args.reply_timeout
        self.threads = []
        self.pg = {}
        self.primary = "pg1"
        self.standby = "pg2"
        self.daemons = {}
        self.deadline = time.monotonic() + args.budget
        self.control = os.path.join(self.dir, "proxy.json")
        self.watching = True
        self.sub_heads = {}

    # Setup ---------------------------------------------------------------------------------------
    def setup(self):
        log(f"run {self.rid} in {self.dir}")
        self.history.add({"type": "meta", "rid": self.rid, "short": self.args.short, "bin": self.bin,
                          "pg_set": self.args.pg_set or [], "only": self.args.only,
                          "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                          "load": open("/proc/loadavg").read().split()[0]})
        self.net.setup()
        with open(self.control, "w") as f:
            json.dump({"delay_ms": 0, "jitter_ms": 0}, f)
        self.proxy = self.procs.start(
            ["/usr/bin/python3", os.path.join(HERE, "proxy.py"), self.control,
             f"{ADDR['r']}:{PROXY_PORT['pg1']}={ADDR['pg1']}:5432",
             f"{ADDR['r']}:{PROXY_PORT['pg2']}={ADDR['pg2']}:5432"],
            os.path.join(self.dir, "proxy.log"), ns=self.net.ns("r"))
        pg1, pg2 = Postgres(self, "pg1"), Postgres(self, "pg2")
        self.pg = {"pg1": pg1, "pg2": pg2}
        pg1.initdb()
        pg1.start()
        pg1.psql("CREATE DATABASE swiped")
        pg2.base_backup_from(pg1)
        pg2.start()
        # Synchronous only once the standby is there (before, every COMMIT would wait for it).
        pg1.psql("ALTER SYSTEM SET synchronous_standby_names = '*'")
        pg1.psql("SELECT pg_reload_conf()")
        self.wait_sync()
        log("primary pg1, synchronous standby pg2 streaming")
        for name in DAEMONS:
            self.daemons[name] = Daemon(self, name)
        for name in DAEMONS:
            self.daemons[name].start()
        log("daemons d1 d2 d3 ready")
        threading.Thread(target=self.watch_daemons, daemon=True).start()

    def wait_sync(self, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.pg[self.primary].psql("SELECT string_agg(sync_state, ',') FROM pg_stat_replication",
                                               check=False)
            if "sync" in state.split(","):
                return time.monotonic()
            time.sleep(0.2)
        raise RuntimeError("the standby is not a synchronous standby after 120 s")

    def watch_daemons(self):
        """Like systemd's Restart=on-failure: a daemon that exits on its own is logged and started
        again after 1 s."""
        while self.watching:
            for d in list(self.daemons.values()):
                with d.lock:
                    p, expected = d.proc, d.expected_down
                if p is not None and p.poll() is not None and not expected:
                    self.history.add({"type": "daemon", "daemon": d.name, "what": "exited", "rc": p.returncode})
                    log(f"{d.name} exited by itself, status {p.returncode}; see {d.logfile}; restarting")
                    time.sleep(1)
                    try:
                        d.start(timeout=60)
                    except RuntimeError as e:
                        log(str(e))
            time.sleep(0.1)

    def start_workload(self):
        for name, d in self.daemons.items():
            t = threading.Thread(target=subscriber, args=(self, d), daemon=True)
            t.start()
            self.sub_threads = getattr(self, "sub_threads", []) + [t]
            for w in range(self.args.writers):
                t = threading.Thread(target=writer, args=(self, d, w, random.Random(f"{name}{w}{self.rid}")),
                                     daemon=True)
                t.start()
                self.threads.append(t)
            t = threading.Thread(target=prober, args=(self, d, random.Random(name)), daemon=True)
            t.start()
            self.threads.append(t)

    # Faults -------------------------------------------------------------------------------------
    def fault(self, kind, phase, **detail):
        self.history.add(dict({"type": "fault", "kind": kind, "phase": phase}, **detail))
        log(f"fault {kind} {phase} {detail if detail else ''}")
        if phase == "heal":
            threading.Thread(target=self.snapshot_activity, args=(f"{kind} healed + 5 s",), daemon=True).start()

    def snapshot_activity(self, label):
        """What the primary's sessions do 5 s after a heal, into activity.log (a stall's cause)."""
        time.sleep(5)
        try:
            out = self.pg[self.primary].psql(
                "SELECT pid, application_name, client_port, state, wait_event_type, wait_event, "
                "round(extract(epoch FROM now() - xact_start)::numeric, 2) AS xact_s, "
                "(SELECT string_agg(locktype || ':' || mode, ',') FROM pg_locks l WHERE l.pid = a.pid AND granted "
                "AND locktype IN ('advisory', 'tuple')) AS locks, left(query, 50) "
                "FROM pg_stat_activity a WHERE datname = 'swiped' AND pid <> pg_backend_pid()", db="swiped",
                timeout=10, check=False, quiet=True)
        except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
            out = str(e)
        with open(os.path.join(self.dir, "activity.log"), "a") as f:
            f.write(f"--- t={self.history.now():.1f} {label}, primary {self.primary}\n{out}\n")

    def sleep(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            time.sleep(max(0.0, min(0.1, end - time.monotonic())))

    def f_part_link(self, dur, d):
        self.net.link(d, False)
        self.fault("part-link", "start", daemon=d)
        self.sleep(dur)
        self.net.link(d, True)
        self.fault("part-link", "heal", daemon=d)

    def f_part_nft(self, dur, d):
        self.net.drop_between(d, ADDR["r"], PROXY_PORT[self.primary])
        self.fault("part-nft", "start", daemon=d, primary=self.primary)
        self.sleep(dur)
        self.net.nft_reset(d)
        self.fault("part-nft", "heal", daemon=d)

    def f_isolate_primary(self, dur):
        p = self.primary
        self.net.nft_add(p, "input", "iifname eth0 drop")
        self.net.nft_add(p, "output", "oifname eth0 drop")
        for d in DAEMONS:
            self.net.drop_between(d, ADDR["r"], PROXY_PORT[p])
        self.fault("isolate-primary", "start", primary=p, daemons=DAEMONS)
        self.sleep(dur)
        for node in DAEMONS + [p]:
            self.net.nft_reset(node)
        self.fault("isolate-primary", "heal", primary=p, daemons=DAEMONS)

    def f_flap(self, dur, d, rng):
        self.fault("flap", "start", daemon=d)
        end = time.monotonic() + dur
        up = True
        while time.monotonic() < end:
            up = not up
            self.net.link(d, up)
            self.sleep(rng.uniform(0.5, 2.0))
        self.net.link(d, True)
        self.fault("flap", "heal", daemon=d)

    def f_latency(self, dur):
        self.fault("latency", "start", delay_ms=50, jitter_ms=20, loss_pct=5, daemons=DAEMONS)
        with open(self.control, "w") as f:
            json.dump({"delay_ms": 50, "jitter_ms": 20}, f)
        for d in DAEMONS:
            self.net.nft_add(d, "output", f"ip daddr {ADDR['r']} numgen random mod 100 < 5 drop")
            self.net.nft_add(d, "input", f"ip saddr {ADDR['r']} numgen random mod 100 < 5 drop")
        self.sleep(dur)
        with open(self.control, "w") as f:
            json.dump({"delay_ms": 0, "jitter_ms": 0}, f)
        for d in DAEMONS:
            self.net.nft_reset(d)
        self.fault("latency", "heal", daemons=DAEMONS)

    def failover(self, kind, wait_before_rejoin):
        """kill -9 of the primary (its whole process group: the host is gone), promotion of the
        standby, then the old primary back as the new one's synchronous standby."""
        old, new = self.primary, self.standby
        self.fault(kind, "kill", primary=old)
        self.pg[old].kill9()
        self.failover_after_kill(old, new, kind, wait_before_rejoin)

    def f_failover(self, dur):
        self.failover("failover", dur)

    def f_kill_daemon(self, dur, d):
        self.fault("kill-daemon", "start", daemon=d)
        p = self.daemons[d].kill(signal.SIGKILL)
        if p:
            p.wait()
        self.sleep(dur)
        self.daemons[d].start()
        self.fault("kill-daemon", "heal", daemon=d)

    def f_sync_part(self, dur):
        p, s = self.primary, self.standby
        self.net.drop_between(p, ADDR[s])
        self.net.drop_between(s, ADDR[p])
        self.fault("sync-part", "start", primary=p, standby=s)
        self.sleep(dur)
        self.net.nft_reset(p)
        self.net.nft_reset(s)
        self.fault("sync-part", "heal", primary=p, standby=s)

    def f_sync_part_failover(self, dur):
        """The standby cut off (the primary's commits wait for it), then the primary lost: what
        the daemons handed over early while the standby could not have it is gone."""
        p, s = self.primary, self.standby
        self.net.drop_between(p, ADDR[s])
        self.net.drop_between(s, ADDR[p])
        self.fault("sync-part-failover", "start", primary=p, standby=s)
        self.sleep(dur)
        # The primary dies while the standby is still cut off from it: what the primary had
        # flushed and the standby never got is gone once the standby is promoted.
        self.fault("sync-part-failover", "kill", primary=p)
        self.pg[p].kill9()
        self.net.nft_reset(p)
        self.net.nft_reset(s)
        self.failover_after_kill(p, s, "sync-part-failover", dur)

    def f_failover_silent(self, dur):
        """The primary's host goes silent (powered off: every packet to it dropped, no RST, its
        server killed) and, 10 s later (a failover manager's detection), the standby is
        promoted: the daemons find their connections dead by their own bounds, and then the
        first host of their CONNINFO costs each attempt its connect_timeout before the second."""
        old = self.primary
        self.net.nft_add(old, "input", "iifname eth0 drop")
        self.net.nft_add(old, "output", "oifname eth0 drop")
        for d in DAEMONS:
            self.net.drop_between(d, ADDR["r"], PROXY_PORT[old])
        self.fault("failover-silent", "kill", primary=old)
        self.pg[old].kill9()
        self.sleep(10)

        def back():
            for node in DAEMONS + [old]:
                self.net.nft_reset(node)
        self.failover_after_kill(old, self.standby, "failover-silent", dur, before_rejoin=back)

    def failover_after_kill(self, old, new, kind, wait_before_rejoin, before_rejoin=None):
        # Only one standby: once promoted, the new primary would wait at every COMMIT for a
        # synchronous standby that is not there yet. Operators drop the requirement until the
        # old primary is back; so does the harness (and sets it again after the rejoin).
        self.pg[new].psql("ALTER SYSTEM SET synchronous_standby_names = ''")
        self.pg[new].psql("SELECT pg_reload_conf()")
        self.pg[new].pg("pg_ctl", ["promote", "-w", "-D", self.pg[new].data])
        self.primary, self.standby = new, old
        self.fault(kind, "promoted", primary=new)
        self.sleep(wait_before_rejoin)
        if before_rejoin:
            before_rejoin()
        how = self.pg[old].rejoin_as_standby_of(self.pg[new])
        self.pg[new].psql("ALTER SYSTEM SET synchronous_standby_names = '*'")
        self.pg[new].psql("SELECT pg_reload_conf()")
        self.wait_sync()
        self.fault(kind, "heal", primary=new, standby=old, rejoined_by=how)

    def f_sigterm_cut(self, dur, d):
        self.net.link(d, False)
        self.fault("sigterm-cut", "start", daemon=d)
        self.sleep(dur)
        t = time.monotonic()
        p = self.daemons[d].kill(signal.SIGTERM)
        try:
            rc = p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            rc = p.wait()
        took = time.monotonic() - t
        self.fault("sigterm-cut", "exited", daemon=d, seconds=round(took, 3), rc=rc)
        self.net.link(d, True)
        self.daemons[d].start()
        self.fault("sigterm-cut", "heal", daemon=d)

    def f_combo(self, dur, rng):
        """Several at once: latency and loss everywhere, one daemon's link flapping, another
        killed."""
        ds = rng.sample(DAEMONS, 2)
        th = [threading.Thread(target=self.f_latency, args=(dur,)),
              threading.Thread(target=self.f_flap, args=(dur, ds[0], rng)),
              threading.Thread(target=self.f_kill_daemon, args=(dur / 2, ds[1]))]
        self.fault("combo", "start", parts=["latency", f"flap {ds[0]}", f"kill-daemon {ds[1]}"])
        for t in th:
            t.start()
        for t in th:
            t.join()
        self.fault("combo", "heal")

    def schedule(self, short):
        rng = random.Random(self.rid)
        kinds = ["part-link", "part-nft", "isolate-primary", "flap", "latency", "failover", "kill-daemon",
                 "sync-part", "sigterm-cut", "combo", "sync-part-failover", "failover-silent"]
        if short:
            # Three minutes: the failover and the synchronous standby's partition come as one,
            # sync-part-failover (the standby cut off, then the primary killed and the standby
            # promoted, then the old primary rejoined).
            kinds = ["part-link", "part-nft", "isolate-primary", "flap", "latency", "kill-daemon",
                     "sync-part-failover", "combo", "sigterm-cut"]
        if self.args.only:
            kinds = self.args.only.split(",")
        if self.args.cuts:
            return self.cuts(rng)
        cycle = 0
        while True:
            cycle += 1
            for kind in kinds:
                # Partitions last longer than the ≈ 15 s the store's keepalives take to notice.
                long_ = 16 if short else rng.uniform(18, 40)
                brief = 4 if short else rng.uniform(5, 20)
                d = rng.choice(DAEMONS)
                need = {"failover": brief + 25, "failover-silent": brief + 35, "sync-part-failover": brief * 2 + 25, "sync-part": long_ + 5,
                        "sigterm-cut": 10}.get(kind, (brief if kind in ("flap", "latency", "combo", "kill-daemon")
                                                      else long_) + 5)
                if time.monotonic() + need + self.args.reserve > self.deadline:
                    log(f"time budget: stopping the faults before {kind} (cycle {cycle})")
                    return
                {
                    "part-link": lambda: self.f_part_link(long_, d),
                    "part-nft": lambda: self.f_part_nft(long_, d),
                    "isolate-primary": lambda: self.f_isolate_primary(long_),
                    "flap": lambda: self.f_flap(brief, d, rng),
                    "latency": lambda: self.f_latency(brief),
                    "failover": lambda: self.f_failover(brief),
                    "failover-silent": lambda: self.f_failover_silent(brief),
                    "kill-daemon": lambda: self.f_kill_daemon(brief / 2, d),
                    "sync-part": lambda: self.f_sync_part(8 if short else long_),
                    "sigterm-cut": lambda: self.f_sigterm_cut(3, d),
                    "combo": lambda: self.f_combo(brief, rng),
                    "sync-part-failover": lambda: self.f_sync_part_failover(brief),
                }[kind]()
                self.sleep(2 if short else rng.uniform(3, 8))
            if short:
                return

    def cuts(self, rng):
        """--cuts N: N silent cuts (part-nft: every packet between one daemon and the primary
        dropped) of --cut-seconds each, a daemon at a time in turn, 4 s apart: how long a write
        waits for `unavailable` in a silent cut, measured again and again (issue 40: ≤ 8 s in every
        cut, protocol.md's 5 s + 3 s)."""
        for i in range(self.args.cuts):
            if time.monotonic() + self.args.cut_seconds + 4 + self.args.reserve > self.deadline:
                log(f"time budget: stopping after {i} cuts")
                return
            self.f_part_nft(self.args.cut_seconds, DAEMONS[i % len(DAEMONS)])
            self.sleep(4)

    # The end ---------------------------------------------------------------------------------------
    def finish(self):
        """Lets the writers finish their ops (in-doubt ones retried until answered), waits until
        every subscriber has reached the head, then records the final log."""
        self.stop_workload.set()
        for t in self.threads:
            t.join(timeout=self.reply_timeout + 5)
        # The head, from the primary; then wait for each subscriber to have been shown it.
        head = int(self.pg[self.primary].psql("SELECT seq FROM swiped_head", db="swiped"))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            seen = self.subscriber_heads()
            if all(seen.get(d, 0) >= head for d in DAEMONS):
                break
            time.sleep(0.2)
        self.stop_subscribers.set()
        for t in getattr(self, "sub_threads", []):
            t.join(timeout=5)
        # The final log from a daemon first, then the keys of those very positions, then the
        # head: commands still queued in a daemon (their clients gone) may commit meanwhile, and
        # the log read is a prefix of the table either way.
        events = self.read_history()
        last = events[-1]["seq"] if events else 0
        rows = self.pg[self.primary].psql(
            "SELECT json_build_object('seq', seq, 'key', key) FROM swiped_events WHERE seq <= %d ORDER BY seq" % last,
            db="swiped")
        keys = {}
        for line in rows.splitlines():
            r = json.loads(line)
            keys[r["seq"]] = r["key"]
        head = int(self.pg[self.primary].psql("SELECT seq FROM swiped_head", db="swiped"))
        for e in events:
            rec = {"type": "final", "seq": e["seq"], "kind": e["kind"], "movie": e["movie"],
                   "key": keys.get(e["seq"]), "at": e.get("at")}
            if "undoes" in e:
                rec["undoes"] = e["undoes"]
            self.history.add(rec)
        self.history.add({"type": "final-end", "head": head, "events": len(events), "rows": len(keys)})
        log(f"final log: {len(events)} events (head {head}, {len(keys)} rows up to {last})")

    def subscriber_heads(self):
        with self.history.lock:
            return dict(self.sub_heads)

    def read_history(self):
        for name in DAEMONS:
            try:
                conn = Conn(self.daemons[name].sock, 30)
                events, after = [], 0
                while True:
                    reply = conn.call({"op": "history", "from": after, "limit": 1000})
                    if not reply.get("ok"):
                        raise RuntimeError(f"history: {reply}")
                    if not reply["events"]:
                        break
                    events += reply["events"]
                    after = reply["events"][-1]["seq"]
                conn.close()
                return events
            except (OSError, ConnectionError, RuntimeError) as e:
                log(f"reading the final log from {name}: {e}")
        raise RuntimeError("no daemon answered `history`")

    def teardown(self):
        self.watching = False
        self.stop_workload.set()
        self.stop_subscribers.set()
        self.procs.kill_all()
        self.net.teardown()
        # Reap what the kills above orphaned and made this process's (none, mostly: the
        # servers' children belong to their postmasters).
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        self.history.close()
        if self.args.keep:
            dest = os.path.join(self.args.keep, f"faults-{self.rid}")
            shutil.copytree(self.dir, dest, ignore=shutil.ignore_patterns("data", "sock", "*.sock"),
                            dirs_exist_ok=True)
            log(f"logs kept in {dest}")
        shutil.rmtree(self.dir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", help="the directory holding swiped (a debug or release build)")
    ap.add_argument("--short", action="store_true", help="one fault of each kind, short ones (make soak)")
    ap.add_argument("--budget", type=float, default=1800, help="seconds for the whole run")
    ap.add_argument("--reserve", type=float, default=60, help="seconds of the budget kept for the end")
    ap.add_argument("--history", default="faults-history.jsonl")
    ap.add_argument("--writers", type=int, default=8, help="writers per daemon")
    ap.add_argument("--reply-timeout", type=float, default=30,
                    help="seconds a writer waits for a reply before it counts the op in doubt")
    ap.add_argument("--only", help="comma-separated fault kinds, in this order")
    ap.add_argument("--cuts", type=int, default=0,
                    help="instead of the schedule: this many silent cuts (part-nft), a daemon at a time")
    ap.add_argument("--cut-seconds", type=float, default=11, help="how long each of --cuts lasts")
    ap.add_argument("--keep", help="copy the run's logs (not the data) into this directory")
    ap.add_argument("--pg-set", action="append", metavar="NAME=VALUE",
                    help="a server setting for both servers (e.g. idle_in_transaction_session_timeout=5s)")
    ap.add_argument("--doctor", choices=["drop-event"],
                    help="record a wrong history on purpose (drop-event: d1's subscriber's seq 1000 left out), "
                         "so that check.py fails")
    ap.add_argument("--cleanup", metavar="RID", help="only delete what run RID left behind")
    args = ap.parse_args()
    if args.cleanup:
        cleanup_rid(args.cleanup)
        return 0
    if os.geteuid() != 0:
        print("harness.py: needs root (network namespaces, nftables)", file=sys.stderr)
        return 2
    h = Harness(args)
    print(f"RID={h.rid}", flush=True)

    def on_signal(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    status = 0
    try:
        h.setup()
        h.start_workload()
        h.sleep(5)
        if args.short and args.reserve == 60:
            args.reserve = 20
        h.schedule(args.short)
        h.sleep(5)
        h.finish()
    except KeyboardInterrupt as e:
        log(f"interrupted ({e}); cleaning up")
        status = 130
    except Exception as e:  # everything is cleaned up either way; the error is the run's result
        import traceback
        traceback.print_exc()
        status = 1
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        h.teardown()
    return status


if __name__ == "__main__":
    sys.exit(main())
