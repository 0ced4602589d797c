"""check.py (issue 34's history checker) holds on a good history and fails on doctored ones.

    python3 -m unittest Tests/faults/test_check.py       (make test runs it; pure Python, < 1 s)
"""
import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check  # noqa: E402


def movie(mid, version, watched=False, friends=False):
    return {"id": mid, "title": mid.upper(), "image": mid, "watched": watched, "watchedWithFriends": friends,
            "version": version}


def good_history():
    """Three movies added; toggles, an expect race, a remove answered `unavailable` and given up,
    one in doubt then replayed, a restore; two subscribers (one reconnects); a list."""
    t = [0.0]

    def r(**kw):
        t[0] += 0.01
        return dict(kw, t=round(t[0], 3))

    log = [
        (1, "added", movie("a", 1), None),
        (2, "added", movie("b", 2), None),
        (3, "added", movie("c", 3), None),
        (4, "watched-toggled", movie("a", 4, watched=True), "k1"),
        (5, "watched-toggled", movie("a", 5, watched=False), "k2"),
        (6, "removed", movie("b", 6), "k5"),
        (7, "restored", movie("b", 7), "k6"),
    ]
    events = [{"seq": s, "kind": k, "movie": m} for s, k, m, _ in log]
    h = [r(type="meta", rid="test", short=True, bin="-", started="-", load="0")]

    def op(key, request, *results, daemon="d1"):
        for n, res in enumerate(results, 1):
            h.append(r(type="call", client="d1w0", daemon=daemon, key=key, attempt=n, op=dict(request, key=key)))
            h.append(r(type="ret", client="d1w0", key=key, attempt=n, **res))

    h.append(r(type="sub", sub="d1", **{"from": 0}, seq=3))
    h.append(r(type="sub", sub="d2", **{"from": 0}, seq=3))
    for e in events[:3]:
        h.append(r(type="event", sub="d1", **e))
        h.append(r(type="event", sub="d2", **e))
    h.append(r(type="fault", kind="part-nft", phase="start", daemon="d1"))
    op("k1", {"op": "toggle-watched", "movie": "a"}, {"result": "ok", "seq": 4, "movie": movie("a", 4, True)})
    op("k2", {"op": "toggle-watched", "movie": "a", "expect": 4},
       {"result": "ok", "seq": 5, "movie": movie("a", 5)})
    op("k3", {"op": "toggle-watched", "movie": "a", "expect": 4}, {"result": "fail", "code": "conflict",
                                                                     "reason": "version"}, daemon="d2")
    op("k4", {"op": "remove", "movie": "b"}, {"result": "unavailable"})
    h.append(r(type="abandon", client="d1w0", key="k4"))
    op("k5", {"op": "remove", "movie": "b"}, {"result": "indoubt", "why": "connection"},
       {"result": "ok", "seq": 6, "movie": movie("b", 6)})
    h.append(r(type="fault", kind="part-nft", phase="heal", daemon="d1"))
    op("k6", {"op": "restore", "movie": "b", "expect": 6}, {"result": "ok", "seq": 7, "movie": movie("b", 7)})
    h.append(r(type="sub-lost", sub="d2", why="closed"))
    h.append(r(type="sub", sub="d2", **{"from": 3}, seq=7))
    for e in events[3:]:
        h.append(r(type="event", sub="d1", **e))
        h.append(r(type="event", sub="d2", **e))
    h.append(r(type="read", daemon="d3", op="list", ok=True, lat=0.001, seq=5,
               movies=[movie("a", 5), movie("b", 2), movie("c", 3)]))
    for s, k, m, key in log:
        h.append(r(type="final", seq=s, kind=k, movie=m, key=key))
    h.append(r(type="final-end", head=7, events=7, rows=7))
    return h


def find(h, **match):
    """The index of the first record with these fields."""
    for i, rec in enumerate(h):
        if all(rec.get(k) == v for k, v in match.items()):
            return i
    raise LookupError(match)


class CheckTests(unittest.TestCase):
    def problems(self, h):
        return check.check(h)[0]

    def assertFails(self, h, words):
        problems = self.problems(h)
        self.assertTrue(problems, "the doctored history passed")
        self.assertTrue(any(words in p for p in problems), f"no problem says {words!r}: {problems}")

    def test_a_good_history_holds(self):
        problems, stats = check.check(good_history())
        self.assertEqual(problems, [])
        self.assertEqual(stats["acknowledged"], 4)
        self.assertEqual(stats["lost"], 0)
        self.assertEqual(stats["expect races (same movie and expect, 2+ ops)"], 1)
        self.assertEqual(stats["subscriber events"], 14)

    def test_an_acknowledged_write_missing_from_the_final_log(self):
        h = good_history()
        h[find(h, type="final", seq=4)]["key"] = None
        self.assertFails(h, "was acknowledged at seq 4")

    def test_a_lost_tail(self):
        h = good_history()
        del h[find(h, type="final", seq=7)]
        h[find(h, type="final-end")].update(head=6, events=6, rows=6)
        self.assertFails(h, "was acknowledged at seq 7")
        self.assertFails(h, "which the final log (head 6) does not have")

    def test_an_unavailable_answer_that_wrote(self):
        h = good_history()
        end = find(h, type="final-end")
        h.insert(end, dict(type="final", seq=8, kind="removed", movie=movie("b", 8), key="k4", t=9))
        h[end + 1].update(head=8, events=8, rows=8)
        self.assertFails(h, "was answered only `unavailable`")

    def test_a_key_written_twice(self):
        h = good_history()
        end = find(h, type="final-end")
        h.insert(end, dict(type="final", seq=8, kind="watched-toggled", movie=movie("c", 8, True), key="k1", t=9))
        h[end + 1].update(head=8, events=8, rows=8)
        self.assertFails(h, "wrote 2 times")

    def test_two_ops_with_one_expect_both_through(self):
        h = good_history()
        end = find(h, type="final-end")
        h.insert(end, dict(type="final", seq=8, kind="watched-toggled", movie=movie("a", 8, True), key="k3", t=9))
        h[end + 1].update(head=8, events=8, rows=8)
        self.assertFails(h, "all went through")
        self.assertFails(h, "where the movie's version before it was 5")

    def test_a_final_log_longer_than_the_table(self):
        h = good_history()
        h[find(h, type="final-end")].update(rows=6)
        self.assertFails(h, "the table has 6 rows")

    def test_a_gap_in_a_subscription(self):
        h = good_history()
        del h[find(h, type="event", sub="d1", seq=5)]
        self.assertFails(h, "gap: shown seq 6 where 5 was next")

    def test_a_duplicate_in_a_subscription(self):
        h = good_history()
        i = find(h, type="event", sub="d2", seq=4)
        h.insert(i + 1, copy.deepcopy(h[i]))
        self.assertFails(h, "duplicate: shown seq 4 where 5 was next")

    def test_a_subscriber_shown_what_the_log_does_not_have(self):
        h = good_history()
        h[find(h, type="event", sub="d1", seq=7)]["movie"] = movie("b", 7, watched=True)
        self.assertFails(h, "subscriber d1: shown seq 7 as restored")

    def test_a_subscriber_shown_an_event_lost_then_written_again_alike(self):
        h = good_history()
        h[find(h, type="final", seq=7)]["at"] = "2026-12-03T09:00:00.000002Z"
        h[find(h, type="event", sub="d2", seq=7)]["at"] = "2026-12-03T09:00:00.000001Z"
        self.assertFails(h, "subscriber d2: shown seq 7 as restored")
        h[find(h, type="event", sub="d2", seq=7)]["at"] = "2026-12-03T09:00:00.000002Z"
        self.assertEqual(self.problems(h), [])

    def test_a_refused_resubscription(self):
        h = good_history()
        h.append({"type": "sub-refused", "sub": "d2", "from": 9, "code": "bad-request", "message": "from", "t": 99})
        self.assertFails(h, "refused")

    def test_an_event_that_does_not_follow_from_the_state_before_it(self):
        h = good_history()
        for i in [find(h, type="final", seq=5), find(h, type="event", sub="d1", seq=5),
                  find(h, type="event", sub="d2", seq=5), find(h, type="ret", key="k2")]:
            h[i]["movie"]["watched"] = True  # a toggle that did not flip
        h[find(h, type="read", op="list")]["movies"][0]["watched"] = True
        self.assertFails(h, "event 5 does not follow from the state before it")

    def test_a_restore_of_a_movie_not_removed(self):
        h = good_history()
        end = find(h, type="final-end")
        h.insert(end, dict(type="final", seq=8, kind="restored", movie=movie("c", 8), key=None, t=9))
        h[end + 1].update(head=8, events=8, rows=8)
        self.assertFails(h, "restores 'c', which is not removed")

    def test_an_ack_with_another_movie_than_stored(self):
        h = good_history()
        h[find(h, type="ret", key="k6")]["movie"] = movie("b", 7, friends=True)
        self.assertFails(h, "op k6: acknowledged with movie")

    def test_a_list_that_is_not_the_state_at_its_seq(self):
        h = good_history()
        h[find(h, type="read", op="list")]["seq"] = 4
        self.assertFails(h, "a list on d3 at seq 4")

    def test_the_command_exits_0_and_1(self):
        for doctor, want in ((False, 0), (True, 1)):
            h = good_history()
            if doctor:
                h[find(h, type="final", seq=4)]["key"] = None
            with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
                for rec in h:
                    f.write(json.dumps(rec) + "\n")
            try:
                p = subprocess.run([sys.executable, check.__file__, f.name], capture_output=True, text=True)
            finally:
                os.unlink(f.name)
            self.assertEqual(p.returncode, want, p.stdout + p.stderr)


if __name__ == "__main__":
    unittest.main()
