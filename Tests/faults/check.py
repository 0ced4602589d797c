#!/usr/bin/python3
"""Checks a history recorded by the fault harness (issue 34); exit 0 when it holds, 1 when not.

    Tests/faults/check.py HISTORY [--quiet] [--json]

Prints what was violated (each with the records that show it), then what a client saw during
each kind of fault (docs/postgres.md, "Faults, checked").

THE HISTORY FILE: one JSON object per line, in the order the harness recorded them. Every record
has `type` and `t` (seconds since the run started, one monotonic clock for every record).

  meta        rid, short, bin, started (UTC), load (the 1-minute load average at the start)
  call        client, daemon, key, attempt (1, 2, …), op: the request sent (without `id`).
              Every op has a `key` of its own; attempts of one op resend it with the same key.
  ret         client, key, attempt, result: the answer to that attempt:
                "ok"          seq, movie: the reply's
                "fail"        code, reason: a refusal (`conflict`, `not-found`, …): nothing written
                "unavailable" nothing was written (protocol.md: `unavailable`)
                "indoubt"     why: "timeout" (no reply in time), "connection" (lost before the
                              reply), "storage" (the daemon said the outcome is unknown)
              A call without a ret (the run ended during it) is in doubt too.
  abandon     client, key: the op was given up after an `unavailable` answer (not sent again).
  giveup      client, key: the run ended with the op still in doubt.
  sub         sub (the subscriber's daemon), from, seq: a `subscribe` from `from` was answered
              (seq = the daemon's head then); the events that follow must be from+1, from+2, …
  sub-refused sub, from, code, message: a `subscribe` was refused (retried).
  sub-lost    sub, why: the subscription's connection ended (the next `sub` starts again from
              the last seq shown).
  event       sub, seq, kind, movie, at, [undoes]: a `movie` event the subscriber was shown.
  read        daemon, op ("list" or "swipe": a drag and a release), ok, lat (seconds, or null when
              the connection broke), [seq, movies]: a `list` answer (movies only sometimes).
  fault       kind, phase ("start", "kill", "promoted", "exited", "heal"), and what it hit.
  daemon      daemon, what ("started", "start-failed", "exited"), [rc, pid].
  final       seq, kind, movie, key, at, [undoes]: the final log, from `history` on a daemon after
              every fault was healed, with each event's `key` from swiped_events. In seq order.
  final-end   events (read), rows (rows of swiped_events up to the last event read), head
              (swiped_head on the primary, read after them: commands still queued may have committed).

WHAT IS CHECKED (each a violation, exit 1):
  - the final log is positions 1…n without a gap, every one of them a row of the table, and n is
    at most the head;
  - every event follows from the state before it (the log folded from empty): `added` a new id
    (never seen before), not watched; a toggle flips its flag of a present movie and nothing
    else; `removed` a present movie, unchanged; `restored` a removed movie, as it was; each with
    version = its seq;
  - every acknowledged op (an `ok`) is in the final log exactly once, at the seq it was told,
    with the movie it was told, of the op's kind and movie; no key is in the log twice;
  - an op whose answers were only `unavailable` or refusals (nothing in doubt) is not in the log:
    `unavailable` changed nothing (protocol.md says so: "nothing was written"), and a refusal
    given after an attempt in doubt must be a replay, never a refusal of a committed key;
  - an op sent with `expect` went through only if the movie's version right before it was that
    expect (so of several ops that raced with the same expect at most one went through);
  - each subscriber's events: after each `sub`, exactly from+1, from+2, … (no gap, no duplicate),
    each identical to the final log's event at that seq (so what was shown is a prefix of the
    final log: nothing shown was lost, also across a failover); a resubscription refused with
    `bad-request` (the daemon is now behind what it showed) is a violation too;
  - a `list` answer with movies is the fold of the final log at its seq.
"""
import json
import sys

KIND_OF_OP = {"add": "added", "toggle-watched": "watched-toggled",
              "toggle-watched-with-friends": "watched-with-friends-toggled", "remove": "removed",
              "restore": "restored"}
FLAG_OF_KIND = {"watched-toggled": "watched", "watched-with-friends-toggled": "watchedWithFriends"}
SAME_FIELDS = ("id", "title", "image", "watched", "watchedWithFriends")


def load(path):
    records = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except ValueError as e:
                raise SystemExit(f"check.py: {path}:{n}: not JSON ({e})")
    return records


def follows(state, ever, seq, kind, movie):
    """Why the event does not follow from the state before it, or None."""
    mid = movie.get("id")
    prev = state.get(mid)
    if movie.get("version") != seq:
        return f"its movie's version is {movie.get('version')}, not its seq"
    if kind == "added":
        if mid in ever:
            return f"adds {mid!r}, an id that existed before"
        if movie.get("watched") or movie.get("watchedWithFriends"):
            return "adds a movie already watched"
        return None
    if prev is None:
        return f"{kind} of {mid!r}, which was never added"
    before, removed = prev
    if kind in FLAG_OF_KIND:
        if removed:
            return f"toggles {mid!r}, which is removed"
        flag = FLAG_OF_KIND[kind]
        for f in SAME_FIELDS:
            want = (not before[f]) if f == flag else before[f]
            if movie.get(f) != want:
                return f"{kind} of {mid!r}: {f} is {movie.get(f)!r}, the state before says it must be {want!r}"
        return None
    if kind in ("removed", "restored"):
        if kind == "removed" and removed:
            return f"removes {mid!r}, which is already removed"
        if kind == "restored" and not removed:
            return f"restores {mid!r}, which is not removed"
        for f in SAME_FIELDS:
            if movie.get(f) != before[f]:
                return f"{kind} of {mid!r} changed {f}: {before[f]!r} -> {movie.get(f)!r}"
        return None
    return f"unknown kind {kind!r}"


def apply(state, ever, kind, movie):
    state[movie["id"]] = (movie, kind == "removed")
    ever.add(movie["id"])


def same_event(a, b):
    """The same event: kind, movie, undoes, and `at` (the time it was stored) when both have it, so
    that an event lost and then written again alike at the same position (a retried toggle
    decided on the same state) still counts as a different event."""
    if a.get("at") is not None and b.get("at") is not None and a["at"] != b["at"]:
        return False
    return a["kind"] == b["kind"] and a["movie"] == b["movie"] and a.get("undoes") == b.get("undoes")


def check(records):
    problems = []
    stats = {}

    def problem(what):
        problems.append(what)

    # --- The final log, folded ------------------------------------------------------------------
    final = [r for r in records if r["type"] == "final"]
    ends = [r for r in records if r["type"] == "final-end"]
    if not final or not ends:
        problem("the history has no final log (the run did not finish?)")
        return problems, stats
    by_seq = {}
    pre_version = {}
    state, ever = {}, set()
    for i, e in enumerate(final, 1):
        if e["seq"] != i:
            problem(f"final log: position {i} holds seq {e['seq']} (a gap or a duplicate)")
            break
        by_seq[e["seq"]] = e
        mid = e["movie"].get("id")
        pre_version[e["seq"]] = state[mid][0]["version"] if mid in state else None
        why = follows(state, ever, e["seq"], e["kind"], e["movie"])
        if why:
            problem(f"final log: event {e['seq']} does not follow from the state before it: {why}")
        apply(state, ever, e["kind"], e["movie"])
    end = ends[-1]
    if end["head"] < len(final) or end["rows"] != len(final):
        problem(f"final log: {len(final)} events read from a daemon, but the table has {end['rows']} rows up "
                f"to the last of them and the head is {end['head']}")
    head = len(final)
    stats["final events"] = head

    key_seqs = {}
    for e in final:
        if e.get("key") is not None:
            key_seqs.setdefault(e["key"], []).append(e["seq"])
    for key, seqs in key_seqs.items():
        if len(seqs) > 1:
            problem(f"key {key!r} wrote {len(seqs)} times: seqs {seqs}")

    # --- Ops -------------------------------------------------------------------------------------
    ops = {}
    for r in records:
        if r["type"] == "call":
            o = ops.setdefault(r["key"], {"op": r["op"], "daemon": r["daemon"], "calls": {}, "rets": {},
                                          "abandon": False, "giveup": False})
            o["calls"][r["attempt"]] = r
        elif r["type"] == "ret":
            ops[r["key"]]["rets"][r["attempt"]] = r
        elif r["type"] == "abandon":
            ops[r["key"]]["abandon"] = True
        elif r["type"] == "giveup" and r["key"] in ops:
            ops[r["key"]]["giveup"] = True
    acked = lost = dup = unavailable_wrote = indoubt_ops = indoubt_committed = unavailable_answers = 0
    for key, o in ops.items():
        in_log = key_seqs.get(key, [])
        if len(in_log) > 1:
            dup += 1
        rets = [o["rets"].get(a) for a in sorted(o["calls"])]
        oks = [r for r in rets if r and r["result"] == "ok"]
        unavailable_answers += sum(1 for r in rets if r and r["result"] == "unavailable")
        doubt = any(r is None or r["result"] == "indoubt" for r in rets)
        if oks:
            acked += 1
            if len({r["seq"] for r in oks}) > 1:
                problem(f"op {key}: acknowledged at different seqs {[r['seq'] for r in oks]}")
            seq = oks[0]["seq"]
            if not in_log:
                lost += 1
                problem(f"op {key} ({o['op']}) was acknowledged at seq {seq} (t={oks[0]['t']}) but its key "
                        f"is not in the final log" + (f" (seq {seq} there is {by_seq[seq]})" if seq in by_seq else ""))
                continue
            if in_log[0] != seq:
                problem(f"op {key}: acknowledged at seq {seq}, but its key is at seq {in_log[0]} in the final log")
                continue
            e = by_seq[seq]
            if oks[0]["movie"] != e["movie"]:
                problem(f"op {key}: acknowledged with movie {oks[0]['movie']}, the final log has {e['movie']}")
            if e["kind"] != KIND_OF_OP.get(o["op"]["op"]):
                problem(f"op {key}: a {o['op']['op']} stored as {e['kind']}")
            if o["op"].get("movie") not in (None, e["movie"]["id"]):
                problem(f"op {key}: on {o['op']['movie']!r}, stored on {e['movie']['id']!r}")
            later = [r for r in rets[rets.index(oks[0]):] if r and r["result"] in ("fail", "unavailable")]
            if later:
                problem(f"op {key}: after its ok, an attempt with the same key was answered {later[0]['result']}")
        else:
            if doubt:
                indoubt_ops += 1
                if in_log:
                    indoubt_committed += 1
            if in_log and not doubt:
                if all(r["result"] == "unavailable" for r in rets):
                    unavailable_wrote += 1
                    problem(f"op {key} ({o['op']}) was answered only `unavailable` "
                            f"({len(rets)} times{', then given up' if o['abandon'] else ''}), yet it is in the "
                            f"final log at seq {in_log[0]}")
                else:
                    problem(f"op {key} ({o['op']}) was refused ({[r['result'] for r in rets]}, nothing in doubt), "
                            f"yet it is in the final log at seq {in_log[0]}")
            elif in_log and rets and rets[-1] is not None and rets[-1]["result"] == "fail":
                problem(f"op {key}: committed (seq {in_log[0]}) by an attempt in doubt, yet its retry with the "
                        f"same key was refused ({rets[-1]['code']} {rets[-1].get('reason')}) instead of replayed")
        # expect: the version right before it.
        if in_log and "expect" in o["op"]:
            before = pre_version.get(in_log[0])
            if before != o["op"]["expect"]:
                problem(f"op {key}: sent with expect {o['op']['expect']}, went through at seq {in_log[0]} where "
                        f"the movie's version before it was {before}")
    races = {}
    for key, o in ops.items():
        if "expect" in o["op"] and o["op"].get("movie"):
            races.setdefault((o["op"]["movie"], o["op"]["expect"]), []).append(key)
    raced = {k: v for k, v in races.items() if len(v) > 1}
    for (movie, expect), keys in raced.items():
        through = [k for k in keys if k in key_seqs]
        if len(through) > 1:
            problem(f"{len(through)} ops with expect {expect} on {movie!r} all went through: {through}")
    stats.update({"ops": len(ops), "acknowledged": acked, "lost": lost, "duplicated": dup,
                  "unavailable answers": unavailable_answers, "unavailable that wrote": unavailable_wrote,
                  "ops still in doubt at the end": indoubt_ops,
                  "of which committed": indoubt_committed,
                  "expect races (same movie and expect, 2+ ops)": len(raced)})

    # --- Subscribers ------------------------------------------------------------------------------
    anomalies = 0
    shown = {}
    nxt = {}
    for r in records:
        if r["type"] == "sub":
            nxt[r["sub"]] = r["from"] + 1
        elif r["type"] == "sub-refused" and r.get("code") == "bad-request":
            anomalies += 1
            problem(f"subscriber {r['sub']}: resubscribing from {r['from']} refused ({r['message']}): the "
                    f"daemon no longer has what it showed (t={r['t']})")
        elif r["type"] == "event":
            s = r["sub"]
            shown[s] = shown.get(s, 0) + 1
            want = nxt.get(s)
            if want is None:
                anomalies += 1
                problem(f"subscriber {s}: event {r['seq']} before any subscribe")
                continue
            if r["seq"] != want:
                anomalies += 1
                what = "duplicate" if r["seq"] < want else "gap"
                problem(f"subscriber {s}: {what}: shown seq {r['seq']} where {want} was next (t={r['t']})")
            e = by_seq.get(r["seq"])
            if e is None:
                anomalies += 1
                problem(f"subscriber {s}: shown seq {r['seq']} ({r['kind']} {r['movie'].get('id')}, t={r['t']}), "
                        f"which the final log (head {head}) does not have")
            elif not same_event(e, r):
                anomalies += 1
                problem(f"subscriber {s}: shown seq {r['seq']} as {r['kind']} {r['movie']} at {r.get('at')} "
                        f"(t={r['t']}), the final log has {e['kind']} {e['movie']} at {e.get('at')}")
            nxt[s] = r["seq"] + 1
    stats["subscriber events"] = sum(shown.values())
    stats["subscriber anomalies"] = anomalies

    # --- Lists against the fold ---------------------------------------------------------------------
    lists = sorted((r for r in records if r["type"] == "read" and r.get("movies") is not None),
                   key=lambda r: r["seq"])
    state, ever = {}, set()
    at = 0
    for r in lists:
        if r["seq"] > head:
            problem(f"a list on {r['daemon']} at seq {r['seq']} (t={r['t']}) is past the final log's head {head}")
            continue
        while at < r["seq"]:
            at += 1
            apply(state, ever, by_seq[at]["kind"], by_seq[at]["movie"])
        want = {m: v[0] for m, v in state.items() if not v[1]}
        got = {m["id"]: m for m in r["movies"]}
        if want != got:
            diff = [m for m in sorted(set(want) | set(got)) if want.get(m) != got.get(m)][:3]
            problem(f"a list on {r['daemon']} at seq {r['seq']} (t={r['t']}) is not the log's state there: "
                    f"{[(m, got.get(m), want.get(m)) for m in diff]}")
    stats["lists compared"] = len(lists)
    return problems, stats


# --- What a client saw ------------------------------------------------------------------------------

def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


# How long a write may wait for its answer while the store's server is away: the round trip's
# bound, 5 s and 3 s after the cancel (PGConnection.cancelAfterNanos, lostAfterCancelNanos), and
# half a second for the loop and the harness's own client.
BOUND_SECONDS = 8.5


def measure(records):
    """Per fault occurrence and daemon it hit: time to the first `unavailable`, writes, reads and
    swipes served meanwhile, time from the heal (or the promotion) to the first `ok`. The parts
    of a `combo` are measured as "KIND in combo": each one's heal comes while the others go on
    (a daemon started again under latency and loss), so they are not that kind's figures."""
    faults = []
    open_ = {}
    combo = False
    for r in records:
        if r["type"] != "fault":
            continue
        k = r["kind"]
        if k == "combo":
            combo = r["phase"] == "start"
        elif combo:
            k = f"{k} in combo"
        if r["phase"] == "start" or (r["phase"] == "kill" and k in ("failover", "failover-silent")):
            open_[k] = {"kind": k, "start": r["t"], "detail": r}
        elif k in open_:
            f = open_[k]
            f[r["phase"]] = r["t"]
            if r["phase"] == "exited":
                f["sigterm_seconds"] = r.get("seconds")
            if r["phase"] == "heal":
                faults.append(f)
                del open_[k]
    calls = {}
    rets = []
    for r in records:
        if r["type"] == "call":
            calls[(r["key"], r["attempt"])] = r
        elif r["type"] == "ret":
            c = calls.get((r["key"], r["attempt"]))
            if c:
                rets.append((c["daemon"], c["t"], r["t"], r["result"]))
    reads = [r for r in records if r["type"] == "read"]
    out = []
    starts = sorted(f["start"] for f in faults)
    for f in faults:
        d = f["detail"]
        hit = [d["daemon"]] if "daemon" in d else ["d1", "d2", "d3"]
        start, heal = f["start"], f["heal"]
        back_from = f.get("promoted", heal)
        # The daemons the fault did not hit: their longest stretch without an `ok` from the
        # start to 10 s after the heal or the next fault's start (a cut daemon's transaction
        # may hold the others up).
        others = [dn for dn in ("d1", "d2", "d3") if dn not in hit]
        until = min([heal + 10] + [s for s in starts if s > start] + [max(r["t"] for r in records)])
        stall = 0.0
        for dn in others:
            oks = sorted(x[2] for x in rets if x[0] == dn and x[3] == "ok" and start <= x[2] <= until)
            edges = [start] + oks + [until]
            stall = max([stall] + [b - a for a, b in zip(edges, edges[1:])])
        for dn in hit:
            mine = [x for x in rets if x[0] == dn]
            during = [x for x in mine if start <= x[2] <= heal]
            unav = [x for x in during if x[3] == "unavailable"]
            first_unav = min((x[2] for x in unav), default=None)
            oks_after = [x[2] for x in mine if x[2] >= back_from and x[3] == "ok"]
            rd = [r for r in reads if r["daemon"] == dn and start <= r["t"] <= heal]
            lst = [r for r in rd if r["op"] == "list"]
            sw = [r for r in rd if r["op"] == "swipe"]
            out.append({
                "kind": f["kind"], "daemon": dn, "t": round(start, 1), "length": round(heal - start, 1),
                "to_first_unavailable": None if first_unav is None else round(first_unav - start, 2),
                "longest_wait_for_unavailable": round(max((x[2] - x[1] for x in unav), default=0), 2) or None,
                "writes_ok": sum(1 for x in during if x[3] == "ok"), "unavailable": len(unav),
                "indoubt": sum(1 for x in during if x[3] == "indoubt"),
                "longest_write": round(max((x[2] - x[1] for x in during), default=0), 2),
                "lists_ok": sum(1 for r in lst if r["ok"]), "lists": len(lst),
                "list_p99": pct([r["lat"] for r in lst if r["ok"]], 99),
                "swipes_ok": sum(1 for r in sw if r["ok"]), "swipes": len(sw),
                "swipe_p99": pct([r["lat"] for r in sw if r["ok"]], 99),
                "recovery": None if not oks_after else round(min(oks_after) - back_from, 2),
                "recovery_from": "promotion" if "promoted" in f else "heal",
                "sigterm_seconds": f.get("sigterm_seconds"),
                "others_stall": round(stall, 2) if others else None,
            })
    return out


def summarize(rows):
    lines = []
    kinds = []
    for r in rows:
        if r["kind"] not in kinds:
            kinds.append(r["kind"])
    lines.append("| fault | injected | first `unavailable` after | longest wait for it | writes ok / unavailable / "
                 "in doubt meanwhile | lists ok, p99 | swipes ok, p99 | first ok after heal or promotion: "
                 "p50 / max | the other daemons: longest time without an ok |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for k in kinds:
        rs = [r for r in rows if r["kind"] == k]
        n = len({(r["t"]) for r in rs})
        tu = [r["to_first_unavailable"] for r in rs if r["to_first_unavailable"] is not None]
        lw = [r["longest_wait_for_unavailable"] for r in rs if r["longest_wait_for_unavailable"]]
        rec = [r["recovery"] for r in rs if r["recovery"] is not None]
        norec = sum(1 for r in rs if r["recovery"] is None)
        lp = [r["list_p99"] for r in rs if r["list_p99"] is not None]
        sp = [r["swipe_p99"] for r in rs if r["swipe_p99"] is not None]
        st = [r["others_stall"] for r in rs if r["others_stall"] is not None]

        def rng(v, unit="s"):
            return "–" if not v else (f"{min(v):.2f}–{max(v):.2f} {unit}" if len(v) > 1 else f"{v[0]:.2f} {unit}")
        lines.append(
            f"| {k} | {n} | {rng(tu)} | {rng(lw)} | {sum(r['writes_ok'] for r in rs)} / "
            f"{sum(r['unavailable'] for r in rs)} / {sum(r['indoubt'] for r in rs)} | "
            f"{sum(r['lists_ok'] for r in rs)}/{sum(r['lists'] for r in rs)}, {max(lp) * 1000 if lp else 0:.0f} ms | "
            f"{sum(r['swipes_ok'] for r in rs)}/{sum(r['swipes'] for r in rs)}, {max(sp) * 1000 if sp else 0:.0f} ms | "
            f"{('%.2f / %.2f s' % (pct(rec, 50), max(rec))) if rec else '–'}"
            f"{f' ({norec} never)' if norec else ''} | {('%.2f s' % max(st)) if st else '–'} |")
    # The round trip's bound (protocol.md: 5 s, then 3 s after a cancel): no write of a daemon
    # that a fault hit waits longer for its answer, whatever the answer (issue 40).
    for k in kinds:
        rs = [r for r in rows if r["kind"] == k]
        longest = [r["longest_write"] for r in rs]
        over = [r for r in rs if r["longest_write"] > BOUND_SECONDS]
        lines.append(
            f"\n{k}: the longest write of a daemon hit waited {max(longest, default=0):.2f} s"
            f" (p50 of the cuts {pct(longest, 50) or 0:.2f} s); over {BOUND_SECONDS:.1f} s in {len(over)} of {len(rs)}"
            + (": " + ", ".join(f"{r['daemon']} at {r['t']} s ({r['longest_write']:.2f} s)" for r in over) if over else ""))
    sig = [r["sigterm_seconds"] for r in rows if r["sigterm_seconds"] is not None]
    if sig:
        lines.append(f"\nSIGTERM during a cut: exited after {', '.join('%.2f s' % s for s in sig)}.")
    return "\n".join(lines)


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    records = load(args[0])
    problems, stats = check(records)
    if "--json" in argv:
        print(json.dumps({"problems": problems, "stats": stats, "faults": measure(records)}, indent=1))
        return 1 if problems else 0
    for p in problems[:200]:
        print("VIOLATION:", p)
    if len(problems) > 200:
        print(f"… and {len(problems) - 200} more")
    if "--quiet" not in argv:
        meta = next((r for r in records if r["type"] == "meta"), {})
        print(f"run {meta.get('rid')} started {meta.get('started')} (load {meta.get('load')}):")
        for k, v in stats.items():
            print(f"  {k}: {v}")
        exits = [r for r in records if r["type"] == "daemon" and r["what"] == "exited"]
        for r in exits:
            print(f"  daemon {r['daemon']} exited by itself at t={r['t']} (status {r.get('rc')})")
        rows = measure(records)
        if rows:
            print(summarize(rows))
    print("check.py:", "OK" if not problems else f"{len(problems)} violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
