"""Regenerates the web guide's screenshots (docs/web.md, `make screenshots`): the list, an open
row, a full swipe, (issue 18) another client's finger as a ghost while this page records, and
(issue 29) a row asking before it deletes, (issue 45) signing in: the dialog over a reader's
read-only page, and the page signed in, and (issue 46) who changed what: a row's last change and
another person's removal in the toast, and (issue 48) a row moved by its handle.

    /usr/bin/python3 Tests/web/screenshots.py docs

Each is taken in headless Chromium from a daemon of its own on a fresh state (the ten seed
movies; Se7en and The Matrix marked first so that the list shows its marks).
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Children, Daemon, browser, wait_until  # noqa: E402
from test_web import Page  # noqa: E402

from selenium.webdriver.common.actions import interaction  # noqa: E402
from selenium.webdriver.common.actions.action_builder import ActionBuilder  # noqa: E402
from selenium.webdriver.common.actions.pointer_input import PointerInput  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402


def quiet_browser(width, height):
    """Chromium with the swipe hint off (issue 47: a browser's first page peeks its first row),
    so that no shot catches a row half open by itself."""
    driver = browser(width, height)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {
        "source": "try { localStorage.setItem('swiped.swipeHint', 'off'); } catch (e) {}"})
    return driver


def main(out):
    os.makedirs(out, exist_ok=True)
    children = Children()
    directory = tempfile.mkdtemp(prefix="swiped-shots-")
    try:
        daemon = Daemon(children, directory)
        daemon.swipectl("toggle-watched", "matrix")
        daemon.swipectl("toggle-friends", "matrix")
        daemon.swipectl("toggle-watched", "seven")
        driver = quiet_browser(500, 760)
        try:
            page = Page(driver, daemon.url)
            page.load()
            wait_until(lambda: page.has_flag("matrix", "person.3"), what="the marks")
            time.sleep(0.3)
            save(driver, out, "web-list.png")

            page.drag("inception", -150, kind="mouse", hold_ms=100)
            wait_until(lambda: page.phase("inception") == "open", what="an open row")
            page.drag("dark_knight", 120, kind="mouse", hold_ms=100)  # closes inception (rule 8)
            wait_until(lambda: page.phase("dark_knight") == "open", what="an open row")
            time.sleep(0.8)  # the spring settles
            save(driver, out, "web-open-row.png")

            # A full swipe, held past half the row: only the outermost button shows.
            left, top, width, height = page.rect(page.row("pulp_fiction"))
            x, y = int(left + width - 70), int(top + height / 2)  # left of its handle (issue 48)
            actions = ActionBuilder(driver, mouse=PointerInput(interaction.POINTER_MOUSE, "mouse"), duration=16)
            actions.pointer_action.move_to_location(x, y).pointer_down()
            for i in range(1, 16):
                actions.pointer_action.move_to_location(int(x - 330 * i / 15), y)
            actions.perform()
            wait_until(lambda: page.phase("pulp_fiction") == "dragging", what="a held full swipe")
            time.sleep(0.5)
            save(driver, out, "web-full-swipe.png")
            actions.clear_actions()  # WebDriver's "release actions": lets go of the row

            # Issue 18: recording, and another client's finger (390 points wide, sharing) as ghosts.
            page.load()
            driver.find_element("id", "watch").click()
            driver.find_element("id", "record").click()
            with daemon.client() as other:
                other.request("share", on=True)
                other.request("open", movie="forrest_gump", edge="trailing")
                wait_until(lambda: page.ghost("forrest_gump") is not None, what="a ghost")
                time.sleep(2.2)  # the recording's clock shows a few seconds
                save(driver, out, "web-ghost.png")

            # Issue 48: The Godfather held by its handle between Forrest Gump and Inception, the
            # line where it would land; Escape puts it back.
            page.load()
            handle = page.row("godfather").find_element("css selector", ".handle")
            left, top, width, height = page.rect(handle)
            x, y = int(left + width / 2), int(top + height / 2)
            _, gump_top, _, gump_height = page.rect(page.row("forrest_gump"))
            actions = ActionBuilder(driver, mouse=PointerInput(interaction.POINTER_MOUSE, "mouse"), duration=16)
            actions.pointer_action.move_to_location(x, y).pointer_down()
            for i in range(1, 13):
                actions.pointer_action.move_to_location(x, int(y + (gump_top + gump_height + 12 - y) * i / 12))
            actions.perform()
            time.sleep(0.3)
            save(driver, out, "web-move.png")
            driver.find_element("tag name", "body").send_keys(Keys.ESCAPE)
            actions.clear_actions()

            # Issue 29: "Ask before deleting" on, a full swipe asks.
            page.load()
            driver.find_element("id", "ask-delete").click()
            time.sleep(0.3)
            page.drag("inception", -330, kind="mouse")
            wait_until(lambda: page.phase("inception") == "confirming", what="a row asking")
            time.sleep(0.8)  # the spring settles
            save(driver, out, "web-confirm.png")
        finally:
            driver.quit()

        # Issue 45: a daemon as the installed units run it (anonymous pages read), and a token.
        signed = os.path.join(directory, "signed")
        os.mkdir(signed)
        daemon = Daemon(children, signed, anonymous=None)
        with daemon.client() as admin:
            token = admin.request("token-create", name="alice", role="writer")["token"]
        driver = quiet_browser(500, 560)
        try:
            page = Page(driver, daemon.url)
            page.load()
            driver.find_element("id", "sign-in").click()
            driver.find_element("id", "token").send_keys(token)
            time.sleep(0.3)
            save(driver, out, "web-sign-in.png")
            driver.find_element("id", "token").send_keys(Keys.ENTER)
            wait_until(lambda: driver.find_element("id", "who").text == "Signed in as alice (writer)", what="signed in")
            page.wait_online()
            time.sleep(0.3)
            save(driver, out, "web-signed-in.png")

            # Issue 46: who did it. bob (a token of his) marks The Dark Knight watched, then root
            # removes Inception: the row says bob's change, the toast root's removal.
            with daemon.client() as bob:
                with daemon.client() as admin:
                    bob.request("auth", token=admin.request("token-create", name="bob", role="writer")["token"])
                bob.request("toggle-watched", movie="dark_knight")
            daemon.swipectl("remove", "inception")
            wait_until(lambda: driver.find_element("id", "toast-text").text == "root removed “Inception”",
                       what="the toast naming root")
            time.sleep(0.5)  # the removed row collapses
            save(driver, out, "web-authors.png")
        finally:
            driver.quit()
    finally:
        children.stop_all()


def save(driver, out, name):
    path = os.path.join(out, name)
    with open(path, "wb") as f:
        f.write(driver.get_screenshot_as_png())
    print("wrote", path)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs")
