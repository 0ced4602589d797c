"""Issue 47 on the web page, in headless Chromium: scroll arbitration by the daemon (touch traces
that are mostly vertical scroll and open nothing, mostly horizontal ones swipe as before), the
threshold cues (a vibration and an outline), the full-swipe styles, and the hint (the first row
peeks once in a browser; "Hint" turns it off).

Run by `make test-web` with test_web.py, or: /usr/bin/python3 -m unittest -v Tests/web/test_gestures.py
"""
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import wait_until  # noqa: E402
from test_web import WebTestCase  # noqa: E402

# Every line the page sends and receives, kept in the page (a wrapper installed before its
# scripts run); and navigator.vibrate, recorded.
WIRE = """window.sentLines = []; window.receivedLines = []; window.vibrations = [];
    navigator.vibrate = (ms) => { vibrations.push(ms); return true; };
    const Original = WebSocket;
    window.WebSocket = class extends Original {
      constructor(...args) { super(...args); this.addEventListener('message', e => receivedLines.push(e.data)); }
      send(data) { sentLines.push(data); return super.send(data); }
    };"""


class GestureTests(WebTestCase):
    window = (500, 560)  # the list longer than the window: it can scroll

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WIRE})

    def setUp(self):
        super().setUp()
        self.page.js("document.getElementById('list').scrollTop = 0")

    def lines(self, which):
        return [json.loads(line) for line in self.page.js(f"return {which}Lines")]

    def scroll_top(self):
        return self.page.js("return document.getElementById('list').scrollTop")

    def phases(self):
        return set(self.page.js("return [...document.querySelectorAll('#list .row')].map(r => r.dataset.phase)"))

    def settled(self):
        """Waits for the list to stop (a touch's scroll goes on after the finger lifts)."""
        def still():
            before = self.scroll_top()
            time.sleep(0.15)
            return self.scroll_top() == before
        wait_until(still, what="the list to stop scrolling")

    def touch_trace(self, movie, dx, dy):
        """A straight touch trace from the middle of `movie`'s row (12 moves of 16 ms), lifted."""
        left, top, width, height = self.page.rect(self.page.row(movie))
        self.page.drag_at(int(left + width / 2), int(top + height / 2), dx, dy, "touch")

    def test_mostly_vertical_touch_traces_scroll_and_mostly_horizontal_ones_swipe(self):
        # Mostly vertical (more than 60° from the horizontal, either way, from the first rows):
        # the daemon says scroll, the page scrolls, no row opens.
        for movie, dx, dy in [("dark_knight", 30, -160), ("pulp_fiction", -45, -150), ("forrest_gump", 60, -170)]:
            self.page.js("document.getElementById('list').scrollTop = 0; sentLines.length = 0; receivedLines.length = 0")
            time.sleep(0.1)
            self.touch_trace(movie, dx, dy)
            wait_until(lambda: self.scroll_top() > 60, what=f"the list to scroll ({movie} {dx} {dy})")
            self.settled()
            self.assertEqual(self.phases(), {"closed"}, (movie, dx, dy))
            drags = [m for m in self.lines("sent") if m.get("op") == "drag"]
            self.assertTrue(drags and all("dy" in m for m in drags), drags)
            self.assertTrue(any(m.get("scroll") is True for m in self.lines("received")), "the daemon said scroll")
            # The touch ended in the daemon too: its release says scroll as well.
            releases = [m for m in self.lines("sent") if m.get("op") == "release"]
            self.assertEqual(len(releases), 1, releases)
        # Mostly horizontal (less than 30°): a swipe as before, the list where it was. (Where it
        # was once the last scroll's fling is over: it may still move the list a few points after
        # the test sets it back on a loaded machine.)
        self.page.js("document.getElementById('list').scrollTop = 0")
        self.settled()
        for movie, dx, dy in [("dark_knight", -150, 40), ("pulp_fiction", -140, -60), ("forrest_gump", 150, 30)]:
            self.page.js("sentLines.length = 0")
            before = self.scroll_top()
            self.touch_trace(movie, dx, dy)
            wait_until(lambda: self.page.phase(movie) == "open", what=f"{movie} to open ({dx} {dy})")
            self.assertEqual(self.scroll_top(), before)
            self.assertTrue(all("dy" in m for m in self.lines("sent") if m.get("op") == "drag"))

    def test_a_crossing_vibrates_a_touch_device_and_outlines_the_buttons(self):
        self.page.js("vibrations.length = 0")
        # Past 0.8 of a button (56) then past half the row, held: the row says how far it is.
        actions = self.page.hold("inception", 330, kind="touch", steps=12)
        wait_until(lambda: self.page.js("return document.querySelector('.row[data-movie=\"inception\"]').dataset.past") == "full",
                   what="the row past the full-swipe threshold")
        self.assertEqual(self.page.js("return vibrations"), [10, 20])  # open out, then full out
        outline = self.page.js("""return getComputedStyle(document.querySelector(
            '.row[data-movie="inception"] .buttons button')).boxShadow""")
        self.assertIn("inset", outline)
        crossed = [m["crossed"] for m in self.lines("received") if "crossed" in m]
        self.assertEqual(crossed, [[{"threshold": "open", "direction": "out"}], [{"threshold": "full", "direction": "out"}]])
        actions.clear_actions()  # lifts: watched fires
        wait_until(lambda: self.movies()["inception"]["watched"], what="inception watched")
        wait_until(lambda: self.page.js("return document.querySelector('.row[data-movie=\"inception\"]').dataset.past") is None,
                   what="the outline gone with the gesture")
        self.daemon.swipectl("toggle-watched", "inception")  # as it was

    def fired(self, action):
        """The reply that fired `action` (it comes once the change is durable)."""
        def reply():
            return next((m for m in self.lines("received") if m.get("fired", {}).get("action") == action), None)
        wait_until(lambda: reply() is not None, what=f"the reply that fired {action}")
        return reply()

    def test_the_full_swipe_style_is_a_setting(self):
        select = self.driver.find_element("id", "full-swipe")
        try:
            # close: the row closes as the action fires (no fired phase, no 0.5 s).
            self.driver.execute_script("arguments[0].value = 'close'; arguments[0].dispatchEvent(new Event('change'))", select)
            wait_until(lambda: any(m.get("layout", {}).get("fullSwipeStyleLeading") == "close" for m in self.lines("received")),
                       what="the layout with close")
            self.page.drag("matrix", 330, kind="touch")
            wait_until(lambda: self.movies()["matrix"]["watched"], what="matrix watched")
            fired = self.fired("watched")
            self.assertEqual(fired["row"]["phase"], "closed")
            self.daemon.swipectl("toggle-watched", "matrix")
            # dismiss: the row slides out with the delete, and goes.
            self.driver.execute_script("arguments[0].value = 'dismiss'; arguments[0].dispatchEvent(new Event('change'))", select)
            wait_until(lambda: any(m.get("layout", {}).get("fullSwipeStyleTrailing") == "dismiss" for m in self.lines("received")),
                       what="the layout with dismiss")
            self.page.drag("seven", -330, kind="touch")
            wait_until(lambda: "seven" not in self.movies(), what="seven deleted")
            fired = self.fired("delete")
            self.assertEqual((fired["row"]["phase"], abs(fired["row"]["offset"])), ("dismissed", self.page.list_width()))
            wait_until(lambda: not self.page.has_row("seven"), what="its row gone")
            # Kept in this browser: a reload sends it again.
            self.page.load()
            self.assertEqual(self.driver.find_element("id", "full-swipe").get_attribute("value"), "dismiss")
            wait_until(lambda: any(m.get("op") == "configure" and m.get("fullSwipeStyleTrailing") == "dismiss"
                                   for m in self.lines("sent")), what="the layout sent again")
        finally:
            with self.daemon.client() as client:
                client.request("restore", movie="seven")
            self.page.js("localStorage.removeItem('swiped.fullSwipe')")


class HintTests(WebTestCase):
    hint = True

    def peeks(self):
        with self.daemon.client() as client:
            return client.request("status")["status"]["requests"]["peek"]

    def test_the_first_row_peeks_once_in_a_browser_and_hint_turns_it_off(self):
        # The first page this browser loads: the first row peeks, then springs back.
        wait_until(lambda: self.page.phase("godfather") == "peeking", what="the peek")
        offset = self.page.js("""return new DOMMatrix(getComputedStyle(
            document.querySelector('.row[data-movie="godfather"] .content')).transform).m41""")
        self.assertLess(offset, 0)  # the trailing edge's Delete shows at the right
        wait_until(lambda: self.page.phase("godfather") == "closed", what="the row back")
        self.assertEqual(self.peeks(), 1)
        # Once: a reload peeks no more.
        self.page.load()
        time.sleep(1)
        self.assertEqual(self.peeks(), 1)
        self.driver.find_element("id", "more").click()  # the settings' popover
        box = self.driver.find_element("id", "swipe-hint")
        self.assertTrue(box.is_selected())
        # Off: kept in this browser; ticked again: once more, now.
        box.click()
        self.assertEqual(self.page.js("return localStorage.getItem('swiped.swipeHint')"), "off")
        self.page.load()
        self.assertFalse(self.driver.find_element("id", "swipe-hint").is_selected())
        self.driver.find_element("id", "more").click()
        self.driver.find_element("id", "swipe-hint").click()
        wait_until(lambda: self.peeks() == 2, what="the peek again")


if __name__ == "__main__":
    unittest.main()
