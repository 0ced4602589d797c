"""Issue 48 on the web page, in headless Chromium: moving movies up and down the list. A mouse and
a touch drag on a row's handle reorder it (the daemon's `list`, read over its Unix socket, says the
same order as the page); the handle decides by its first movement: sideways, a mouse, pen or
touch on it swipes the row as from its body (it opens; past half the row a touch deletes), mostly
up or down it reorders, and a press or a tap does neither; a swipe does not reorder; Escape puts the
row back; a drag to the bottom edge of a long list scrolls it and the row lands far down; Alt+↓ and
Alt+↑ move the focused movie and say where; another client's move shows at once while another row
stays open, and a row being swiped that moves keeps its swipe; a restore goes where the `restored`
event says; a refused move is put back and said; a reader has no handles and Alt+↓ says
read-only; axe finds nothing serious.

Run by `make test-web` with test_web.py, or: /usr/bin/python3 -m unittest -v Tests/web/test_reorder.py
"""
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import add_movies, axe, click_undo, wait_until  # noqa: E402
from test_web import COUNT_FOCUS_LOST, MOVIE_IDS, ROWS, SEED_TITLES, WebTestCase  # noqa: E402

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.actions import interaction  # noqa: E402
from selenium.webdriver.common.actions.action_builder import ActionBuilder  # noqa: E402
from selenium.webdriver.common.actions.pointer_input import PointerInput  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

# Every line the page sends, kept in the page (a wrapper installed before its scripts run); with
# `spoilExpect` set, a `move` is sent expecting version 1, which the daemon refuses (conflict);
# while `heldMoves` is an array, a `move` waits there until sendHeldMoves().
WIRE = """window.sentLines = []; window.spoilExpect = false; window.heldMoves = null;
    const Original = WebSocket;
    window.WebSocket = class extends Original {
      send(data) {
        const m = JSON.parse(data);
        if (spoilExpect && m.op === 'move') { m.expect = 1; data = JSON.stringify(m); }
        sentLines.push(data);
        if (heldMoves && m.op === 'move') { heldMoves.push([this, data]); return; }
        return super.send(data);
      }
    };
    window.sendHeldMoves = () => { const held = heldMoves; heldMoves = null; for (const [s, d] of held) Original.prototype.send.call(s, d); };"""


class ReorderTestCase(WebTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WIRE})

    def order(self):
        """The daemon's list order: a fresh `list` over its Unix socket."""
        with self.daemon.client() as client:
            reply = client.request("list")
        self.assertTrue(reply["ok"], reply)
        return [m["id"] for m in reply["movies"]]

    def page_order(self):
        """The page's rows in the DOM, by their aria-rowindex (each checked to be its place)."""
        rows = sorted(self.page.js(ROWS), key=lambda r: r[1])
        return [r[0] for r in rows]

    def moves_sent(self):
        return [m for m in map(json.loads, self.page.js("return sentLines")) if m.get("op") == "move"]

    def said(self):
        return self.page.js("return document.getElementById('announce').textContent")

    def toast(self):
        toast = self.driver.find_element("id", "toast")
        return toast.text if toast.is_displayed() else ""

    def axe_clean(self, checker, state):
        """axe finds nothing serious or critical in the page as it is (`state` says how, if not)."""
        bad = [v for v in checker.run()["violations"] if v["impact"] in ("serious", "critical")]
        self.assertEqual(bad, [], f"{state}: {checker.report(bad)}")

    def handle(self, movie):
        return self.page.row(movie).find_element("css selector", ".handle")

    def press_handle(self, movie, kind="mouse"):
        """A pointer down on the movie's handle: the actions (more moves go on them), and where."""
        left, top, width, height = self.page.rect(self.handle(movie))
        x, y = int(left + width / 2), int(top + height / 2)
        kind_name = {"touch": interaction.POINTER_TOUCH, "pen": interaction.POINTER_PEN}.get(kind, interaction.POINTER_MOUSE)
        actions = ActionBuilder(self.driver, mouse=PointerInput(kind_name, kind), duration=16)
        actions.pointer_action.move_to_location(x, y).pointer_down()
        return actions, x, y

    def drag_handle(self, movie, to_y, kind="mouse", steps=12, lift=True):
        """Drags the movie's handle straight up or down to `to_y` (the window's y), and lifts."""
        actions, x, y = self.press_handle(movie, kind)
        for i in range(1, steps + 1):
            actions.pointer_action.move_to_location(x, int(y + (to_y - y) * i / steps))
        if lift:
            actions.pointer_action.pause(0.05)
            actions.pointer_action.pointer_up()
        actions.perform()
        return actions

    def between(self, upper, lower):
        """The window's y of the line between two rows next to each other on the page."""
        _, top, _, height = self.page.rect(self.page.row(upper))
        return top + height

    def wait_order(self, expected, what):
        """Waits for the page to show `expected` and the daemon to hold it."""
        wait_until(lambda: self.page_order() == expected, what=f"the page's order ({what})")
        wait_until(lambda: self.order() == expected, what=f"the daemon's order ({what})")


class ReorderTests(ReorderTestCase):
    window = (500, 960)  # the ten rows in the list's box, unscrolled

    def setUp(self):
        super().setUp()
        self.page.js(COUNT_FOCUS_LOST)

    def tearDown(self):
        # The seed's order back, for the next test.
        with self.daemon.client() as client:
            for i, movie in enumerate(MOVIE_IDS):
                reply = client.request("move", movie=movie, after=MOVIE_IDS[i - 1] if i else None)
                self.assertTrue(reply["ok"], reply)

    def test_a_mouse_drag_on_the_handle_reorders(self):
        self.assertEqual(self.page_order(), MOVIE_IDS)
        with self.daemon.client() as client:
            version = client.movies()["godfather"]["version"]
        # The Godfather, first, dropped a little below the line between Forrest Gump and Inception.
        target = self.between("forrest_gump", "inception") + 10
        actions = self.drag_handle("godfather", target, lift=False)
        # Held: the row follows the pointer over the others, and a line shows where it lands.
        row_top = self.page.rect(self.page.row("godfather"))[1]
        self.assertAlmostEqual(row_top + 28, target, delta=3)
        self.assertTrue(self.page.js("return document.querySelector('#list .row[data-movie=\"godfather\"]').classList.contains('lifted')"))
        line = self.page.rect(self.driver.find_element("id", "drop-line"))
        self.assertAlmostEqual(line[1] + line[3] / 2, self.between("forrest_gump", "inception"), delta=2)
        self.assertEqual(self.moves_sent(), [])
        actions.pointer_action.pointer_up()
        actions.perform()
        expected = ["dark_knight", "pulp_fiction", "forrest_gump", "godfather", *MOVIE_IDS[4:]]
        self.wait_order(expected, "the Godfather after Forrest Gump")
        self.assertEqual(self.moves_sent(), [{"op": "move", "movie": "godfather", "after": "forrest_gump", "expect": version,
                                             "id": self.moves_sent()[0]["id"]}])
        self.assertFalse(self.driver.find_element("id", "drop-line").is_displayed())
        wait_until(lambda: self.said() == "Moved “The Godfather” to position 4 of 10.", what="the move said")
        # Nothing swiped, nothing left lifted or out of place, and the focus never fell to <body>.
        self.assertEqual(set(self.page.js("return [...document.querySelectorAll('#list .row')].map(r => r.dataset.phase)")), {"closed"})
        self.assertEqual(self.page.js("return document.querySelectorAll('#list .row.lifted, #list .row[style*=\"translate\"]').length"), 0)
        self.assertEqual(self.page.js("return focusLost"), [])
        # A reload lists what the daemon says.
        self.page.load()
        self.assertEqual(self.page_order(), expected)

    def test_a_touch_drag_on_the_handle_reorders(self):
        # The Green Mile, last, dragged by a finger to the top: first.
        target = int(self.page.rect(self.page.row("godfather"))[1] + 8)
        self.drag_handle("the_green_mile", target, kind="touch")
        self.wait_order(["the_green_mile", *MOVIE_IDS[:-1]], "the Green Mile first")
        self.assertEqual([(m["movie"], m["after"]) for m in self.moves_sent()], [("the_green_mile", None)])
        self.assertEqual(set(self.page.js("return [...document.querySelectorAll('#list .row')].map(r => r.dataset.phase)")), {"closed"})
        # And a pen, back down one place (after the Godfather).
        self.drag_handle("the_green_mile", self.between("godfather", "dark_knight") + 10, kind="pen")
        self.wait_order(["godfather", "the_green_mile", *MOVIE_IDS[1:-1]], "the Green Mile second")

    def sent(self, op):
        return [m for m in map(json.loads, self.page.js("return sentLines")) if m.get("op") == op]

    def swipe_from_handle(self, movie, dx, kind, steps=12, dy=0, hold_ms=0):
        """Presses the movie's handle and moves it by (dx, dy) in `steps` moves, then lifts."""
        actions, x, y = self.press_handle(movie, kind)
        for i in range(1, steps + 1):
            actions.pointer_action.move_to_location(int(x + dx * i / steps), int(y + dy * i / steps))
        if hold_ms:
            actions.pointer_action.pause(hold_ms / 1000)
        actions.pointer_action.pointer_up()
        actions.perform()

    def test_sideways_on_the_handle_swipes_and_a_swipe_does_not_reorder(self):
        # The handle decides by its first movement: sideways, a mouse or a pen swipes the row as one
        # pressed on its body does (the page sends the same drags and release), and it opens on
        # its trailing edge, Delete shown; nothing moves.
        for kind, movie in (("mouse", "inception"), ("pen", "matrix")):
            self.page.js("sentLines.length = 0")
            self.swipe_from_handle(movie, -90, kind, dy=6, hold_ms=150)
            wait_until(lambda: self.page.phase(movie) == "open", what=f"{movie} open ({kind})")
            button = self.page.row(movie).find_element("css selector", '.buttons button[data-action="delete"]')
            wait_until(lambda: abs(self.page.rect(button)[2] - 70) < 0.5, what=f"Delete shown at 70 points ({kind})")
            self.assertTrue(button.is_displayed())
            self.assertEqual(button.text, "Delete")
            drags = self.sent("drag")
            self.assertTrue(drags, kind)
            self.assertTrue(all(m["movie"] == movie and m["dx"] < 0 and "dy" in m for m in drags), drags)
            self.assertEqual([m["movie"] for m in self.sent("release")], [movie])
            self.assertEqual(self.page.js("return document.querySelectorAll('#list .row.lifted').length"), 0)
            self.assertFalse(self.driver.find_element("id", "drop-line").is_displayed())
            self.assertEqual(self.moves_sent(), [])
            self.assertEqual(self.page_order(), MOVIE_IDS)
            # Not a tap on the handle either (which says how to move the row).
            self.assertNotIn("Drag the handle", self.said())
            self.page.row(movie).find_element("css selector", ".title").click()  # a tap closes it
            wait_until(lambda: self.page.phase(movie) == "closed", what=f"{movie} closed")
        self.assertEqual(self.order(), MOVIE_IDS)
        # A swipe on the row's body from right next to the handle, down and sideways: a swipe,
        # the order as it was.
        left, top, width, height = self.page.rect(self.page.row("inception"))
        self.page.drag_at(int(left + width - 70), int(top + height / 2), -150, 40, "mouse")
        wait_until(lambda: self.page.phase("inception") == "open", what="inception open")
        self.assertEqual(self.moves_sent(), [])
        self.assertEqual(self.page_order(), MOVIE_IDS)
        self.page.row("inception").find_element("css selector", ".title").click()
        wait_until(lambda: self.page.phase("inception") == "closed", what="inception closed")

    def test_a_touch_from_the_handle_past_half_the_row_deletes(self):
        # On a phone a swipe to Delete starts at the row's end, on the handle: past half the row
        # it is a full swipe, and letting go deletes, as from the body.
        with self.daemon.client() as client:
            self.assertIn("seven", client.movies())
        self.swipe_from_handle("seven", -320, "touch", dy=-10)
        wait_until(lambda: "seven" not in self.movies(), what="Se7en removed in the daemon")
        wait_until(lambda: not self.page.has_row("seven"), what="the row to go")
        wait_until(lambda: "Se7en" in self.toast(), what="the Undo toast")
        self.assertEqual(self.moves_sent(), [])
        drags = self.sent("drag")
        self.assertTrue(drags and all(m["movie"] == "seven" for m in drags), drags)
        self.assertLess(drags[-1]["dx"], -250)
        self.assertEqual([m["movie"] for m in self.sent("release")], ["seven"])
        click_undo(self.driver)
        self.wait_order(MOVIE_IDS, "Se7en back at its place")

    def test_a_press_or_a_tap_on_the_handle_moves_and_swipes_nothing(self):
        for kind in ("mouse", "touch", "pen"):
            # Pressed, trembling less than 8 px, held, lifted.
            self.swipe_from_handle("forrest_gump", -4, kind, steps=2, dy=3, hold_ms=300)
            self.handle("forrest_gump").click()
        time.sleep(0.3)
        # A tap on the handle only says how to move the row.
        self.assertIn("Drag the handle to move “Forrest Gump”", self.said())
        self.assertEqual(self.sent("drag"), [])
        self.assertEqual(self.sent("release"), [])
        self.assertEqual(self.moves_sent(), [])
        self.assertEqual(set(self.page.js("return [...document.querySelectorAll('#list .row')].map(r => r.dataset.phase)")), {"closed"})
        self.assertEqual(self.page.js("return document.querySelectorAll('#list .row.lifted').length"), 0)
        self.assertEqual(self.order(), MOVIE_IDS)

    def test_a_mostly_vertical_drag_on_the_handle_reorders_and_swipes_nothing(self):
        # Down and a little sideways (a finger is never straight): a move, never a swipe.
        actions, x, y = self.press_handle("pulp_fiction", "touch")
        target = self.between("matrix", "seven") + 10
        for i in range(1, 13):
            actions.pointer_action.move_to_location(int(x - 30 * i / 12), int(y + (target - y) * i / 12))
        actions.pointer_action.pause(0.05)
        actions.pointer_action.pointer_up()
        actions.perform()
        expected = ["godfather", "dark_knight", "forrest_gump", "inception", "matrix", "pulp_fiction", *MOVIE_IDS[6:]]
        self.wait_order(expected, "Pulp Fiction after the Matrix")
        self.assertEqual(self.sent("drag"), [])
        self.assertEqual(set(self.page.js("return [...document.querySelectorAll('#list .row')].map(r => r.dataset.phase)")), {"closed"})

    def test_escape_puts_the_row_back(self):
        actions = self.drag_handle("matrix", self.between("saving_private_ryan", "the_green_mile"), lift=False)
        self.assertTrue(self.driver.find_element("id", "drop-line").is_displayed())
        ActionChains(self.driver).send_keys(Keys.ESCAPE).perform()
        self.assertFalse(self.driver.find_element("id", "drop-line").is_displayed())
        self.assertEqual(self.page.js("return document.querySelectorAll('#list .row.lifted').length"), 0)
        actions.pointer_action.pointer_up()
        actions.perform()
        time.sleep(0.3)
        self.assertEqual(self.moves_sent(), [])
        self.assertEqual(self.page_order(), MOVIE_IDS)
        self.assertEqual(self.order(), MOVIE_IDS)
        # A drop where it was sends nothing either.
        self.drag_handle("matrix", self.page.rect(self.handle("matrix"))[1] + 30)
        time.sleep(0.3)
        self.assertEqual(self.moves_sent(), [])

    def test_alt_arrows_move_the_focused_movie_and_say_where(self):
        self.page.focus_movie("seven")
        ActionChains(self.driver).key_down(Keys.ALT).send_keys(Keys.ARROW_DOWN).key_up(Keys.ALT).perform()
        wait_until(lambda: self.said() == "Moved “Se7en” to position 8 of 10.", what="the first move said")
        ActionChains(self.driver).key_down(Keys.ALT).send_keys(Keys.ARROW_DOWN).key_up(Keys.ALT).perform()
        moved = [*MOVIE_IDS[:6], "silence_of_lambs", "saving_private_ryan", "seven", "the_green_mile"]
        self.wait_order(moved, "Se7en two down")
        wait_until(lambda: self.said() == "Moved “Se7en” to position 9 of 10.", what="the second move said")
        self.assertEqual(self.page.focused(), ("seven", "movie"))
        self.assertEqual([(m["movie"], m["after"]) for m in self.moves_sent()],
                         [("seven", "silence_of_lambs"), ("seven", "saving_private_ryan")])
        # The second expected the version the first made.
        first, second = self.moves_sent()
        self.assertGreater(second["expect"], first["expect"])
        # Up three, pressed at once, from an action cell: the focus stays on that cell.
        ActionChains(self.driver).send_keys(Keys.ARROW_RIGHT).perform()
        self.assertEqual(self.page.focused(), ("seven", "action watched"))
        chain = ActionChains(self.driver).key_down(Keys.ALT)
        for _ in range(3):
            chain.send_keys(Keys.ARROW_UP)
        chain.key_up(Keys.ALT).perform()
        moved = [*MOVIE_IDS[:5], "seven", "matrix", "silence_of_lambs", "saving_private_ryan", "the_green_mile"]
        self.wait_order(moved, "Se7en three up")
        wait_until(lambda: self.said() == "Moved “Se7en” to position 6 of 10.", what="the last move said")
        self.assertEqual(self.page.focused(), ("seven", "action watched"))
        self.assertEqual(self.page.js("return focusLost"), [])
        # The first row up: nothing to do, and said so.
        self.page.focus_movie("godfather")
        ActionChains(self.driver).key_down(Keys.ALT).send_keys(Keys.ARROW_UP).key_up(Keys.ALT).perform()
        wait_until(lambda: self.said() == "“The Godfather” is already first.", what="already first")
        self.assertEqual(len(self.moves_sent()), 5)
        # The keys are said where the page says its keys.
        self.assertIn("Alt with Up or Down arrow moves the movie", self.page.js("return document.getElementById('row-help').textContent"))
        self.assertIn("Alt+ArrowDown", self.page.row("godfather").find_element("css selector", ".content").get_attribute("aria-keyshortcuts"))
        checker = axe(self.driver)
        checker.inject()
        self.axe_clean(checker, "after moves by the keys")

    def test_another_clients_move_shows_at_once_and_open_rows_stay_open(self):
        offset = """return new DOMMatrix(getComputedStyle(document.querySelector(
            '#list .row[data-movie="inception"] .content')).transform).m41"""
        self.page.drag("inception", -90, kind="mouse", hold_ms=150)
        wait_until(lambda: self.page.phase("inception") == "open", what="inception open")
        wait_until(lambda: self.page.js(offset) == -70, what="inception settled open")
        with self.daemon.client() as client:
            self.assertTrue(client.request("move", movie="the_green_mile", after=None)["ok"])
            wait_until(lambda: self.page_order() == ["the_green_mile", *MOVIE_IDS[:-1]], timeout=1, what="the move shown")
            # Inception, open, stays open where it is (one row lower now), drawn open.
            self.assertEqual(self.page.phase("inception"), "open")
            self.assertEqual(self.page.js(offset), -70)
            # A finger swiping a row (which closes Inception: the daemon's rule), while another
            # movie moves past it, then its own movie: still being swiped, at its new place.
            actions = self.page.hold("pulp_fiction", -60, kind="touch")
            wait_until(lambda: self.page.phase("pulp_fiction") == "dragging", what="pulp fiction dragged")
            self.assertTrue(client.request("move", movie="godfather", after="forrest_gump")["ok"])
            wait_until(lambda: self.page_order()[4] == "godfather", timeout=1, what="the Godfather after Forrest Gump")
            self.assertEqual(self.page.phase("pulp_fiction"), "dragging")
            self.assertTrue(client.request("move", movie="pulp_fiction", after=None)["ok"])
            wait_until(lambda: self.page_order()[0] == "pulp_fiction", timeout=1, what="pulp fiction first")
            self.assertEqual(self.page.phase("pulp_fiction"), "dragging")
            actions.clear_actions()  # lifts: past 0.8 of the button, it opens
            wait_until(lambda: self.page.phase("pulp_fiction") == "open", what="pulp fiction open after the lift")
            expected = ["pulp_fiction", "the_green_mile", "dark_knight", "forrest_gump", "godfather", *MOVIE_IDS[4:-1]]
            self.assertEqual(self.page_order(), expected)
            self.assertEqual(self.order(), expected)
            # An undo of a move is a `moved` event too.
            history = client.request("history", **{"from": 0, "limit": 1000})["events"]
            self.assertTrue(client.request("undo", seq=history[-1]["seq"])["ok"])
            wait_until(lambda: self.page_order() == ["the_green_mile", "dark_knight", "pulp_fiction", "forrest_gump", "godfather",
                                                     *MOVIE_IDS[4:-1]], timeout=1, what="the undo shown")
            self.assertEqual(self.page.phase("pulp_fiction"), "open")
        self.page.row("pulp_fiction").find_element("css selector", ".title").click()
        wait_until(lambda: self.page.phase("pulp_fiction") == "closed", what="pulp fiction closed")

    def test_a_restored_movie_goes_where_the_event_says(self):
        # Removed before the page listed: the page never saw its place. The `restored` event says
        # it (right after Forrest Gump), where an older daemon's sent it to the end.
        self.daemon.swipectl("remove", "inception")
        self.page.load()
        self.assertEqual(self.page_order(), [m for m in MOVIE_IDS if m != "inception"])
        self.daemon.swipectl("restore", "inception")
        self.wait_order(MOVIE_IDS, "Inception back at its place")
        # Removed while the page is open, and the movie it followed moved away meanwhile: it goes
        # back where the daemon puts it, which the page learns from `after`.
        with self.daemon.client() as client:
            removed = client.request("remove", movie="matrix")
            self.assertTrue(removed["ok"])
            wait_until(lambda: "matrix" not in self.page_order(), what="the Matrix gone")
            self.assertTrue(client.request("move", movie="inception", after=None)["ok"])
            self.assertTrue(client.request("move", movie="seven", after="godfather")["ok"])
            restored = client.request("restore", movie="matrix")
            self.assertTrue(restored["ok"], restored)
        expected = self.order()
        self.assertEqual(expected[expected.index("matrix") - 1], restored["after"])
        wait_until(lambda: self.page_order() == expected, timeout=2, what="the Matrix where the daemon put it")

    def test_another_clients_move_while_the_pages_own_is_on_its_way(self):
        # The page's move (the Godfather after the Dark Knight) held on its way; meanwhile another
        # client puts Pulp Fiction after the Godfather, which the daemon applies first. The page
        # shows both at once, and ends with the daemon's order: its own move made again on top of
        # the other's (applied on top of its own, it would end with the Dark Knight first).
        self.page.js("heldMoves = []")
        self.page.focus_movie("godfather")
        ActionChains(self.driver).key_down(Keys.ALT).send_keys(Keys.ARROW_DOWN).key_up(Keys.ALT).perform()
        wait_until(lambda: self.page_order()[:3] == ["dark_knight", "godfather", "pulp_fiction"], what="the page's own move shown")
        with self.daemon.client() as client:
            self.assertTrue(client.request("move", movie="pulp_fiction", after="godfather")["ok"])
        expected = ["pulp_fiction", "dark_knight", "godfather", *MOVIE_IDS[3:]]
        wait_until(lambda: self.page_order() == expected, what="the other's move under the page's own")
        self.assertEqual(self.order(), ["godfather", "pulp_fiction", "dark_knight", *MOVIE_IDS[3:]])
        self.page.js("sendHeldMoves()")
        wait_until(lambda: self.said() == "Moved “The Godfather” to position 3 of 10.", what="the move said")
        self.wait_order(expected, "both moves")
        self.assertEqual(self.page.focused(), ("godfather", "movie"))
        self.page.load()
        self.assertEqual(self.page_order(), expected)

    def test_a_refused_move_is_put_back_and_said(self):
        self.page.js("spoilExpect = true")  # the move expects version 1: conflict
        self.drag_handle("dark_knight", self.between("matrix", "seven") + 10)
        wait_until(lambda: "Not moved" in self.toast(), what="the refusal said")
        self.assertEqual(self.toast().splitlines()[0], "Not moved: “The Dark Knight” changed meanwhile. Try again.")
        wait_until(lambda: self.page_order() == MOVIE_IDS, what="the Dark Knight back")
        self.assertEqual(self.order(), MOVIE_IDS)
        self.page.js("spoilExpect = false")


class LongListReorderTests(ReorderTestCase):
    """2,000 movies: a row dragged from the top to the list's bottom edge scrolls the list, stays
    under the pointer while rows come and go around it, and lands far down."""
    COUNT = 2000

    @classmethod
    def start_servers(cls):
        super().start_servers()
        add_movies(cls.daemon.socket, [f"Film {i:04d}" for i in range(1, cls.COUNT - len(SEED_TITLES) + 1)])

    def test_a_drag_to_the_bottom_edge_scrolls_and_the_row_lands_far_down(self):
        self.assertEqual(self.page.js("return +document.getElementById('list').getAttribute('aria-rowcount')"), self.COUNT)
        box = self.page.rect(self.driver.find_element("id", "list"))
        bottom = int(box[1] + box[3] - 6)  # inside the edge zone
        actions = self.drag_handle("godfather", bottom, kind="mouse", lift=False)
        # Held at the edge: the list scrolls, faster as it goes, past a few screens.
        wait_until(lambda: self.page.js("return document.getElementById('list').scrollTop") > 150 * 56,
                   timeout=10, what="the list to scroll past 150 rows")
        # The row stays in the DOM, under the pointer, while the rows around it are others now.
        row = self.page.rect(self.page.row("godfather"))
        self.assertAlmostEqual(row[1] + row[3] / 2, bottom, delta=4)
        rows = self.page.js(ROWS)
        self.assertLessEqual(len(rows), 60, "a few screens of rows in the DOM")
        self.assertTrue(self.driver.find_element("id", "drop-line").is_displayed())
        # Back up from the edge (the list stops), then dropped.
        actions.pointer_action.move_to_location(int(box[0] + box[2] - 20), int(box[1] + box[3] / 2))
        actions.pointer_action.pause(0.1)
        actions.pointer_action.pointer_up()
        actions.perform()
        wait_until(lambda: self.moves_sent(), what="the move sent")
        wait_until(lambda: self.order()[0] != "godfather", what="the daemon's order")
        order = self.order()
        landed = order.index("godfather")
        self.assertGreater(landed, 150)
        self.assertEqual(self.moves_sent()[0]["after"], order[landed - 1])
        # The page: the row at that place, between the same movies as the daemon's.
        wait_until(lambda: self.page.js("return document.querySelector('#list .row[data-movie=\"godfather\"]')?.getAttribute('aria-rowindex')")
                   == str(landed + 1), what="the row at its place")
        shown = {r[1] - 1: r[0] for r in self.page.js(ROWS)}
        for index in range(landed - 3, landed + 4):
            self.assertEqual(shown[index], order[index], index)
        self.assertEqual(self.page.js("return document.querySelectorAll('#list .row.lifted').length"), 0)
        with self.daemon.client() as client:
            self.assertTrue(client.request("move", movie="godfather", after=None)["ok"])


class ReaderReorderTests(ReorderTestCase):
    """An anonymous page of a daemon as the installed units run it: a reader."""
    anonymous = None

    def test_a_reader_has_no_handle_and_alt_arrows_say_read_only(self):
        wait_until(lambda: self.page.js("return document.body.classList.contains('read-only')"), what="read-only")
        self.assertFalse(self.handle("seven").is_displayed())
        self.assertEqual(self.page.js("return [...document.querySelectorAll('#list .handle')].filter(h => h.getClientRects().length).length"), 0)
        self.page.focus_movie("seven")
        ActionChains(self.driver).key_down(Keys.ALT).send_keys(Keys.ARROW_DOWN).key_up(Keys.ALT).perform()
        wait_until(lambda: self.toast() == "Read-only: sign in as a writer to change the movies.", what="read-only said")
        self.assertEqual(self.moves_sent(), [])
        self.assertEqual(self.page_order(), MOVIE_IDS)
        self.assertEqual(self.page.focused(), ("seven", "movie"))
        checker = axe(self.driver)
        checker.inject()
        self.axe_clean(checker, "read-only, without handles")


if __name__ == "__main__":
    unittest.main()
