"""The real programs the web tests run: swiped (serving the page and its WebSocket itself) and
headless Chromium.

Every child is started with subprocess.Popen and always waited for (PID 1 here does not reap
orphans): `Children` kills what is still running and waits, also when a test fails.
"""
import base64
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zlib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WEB = os.path.join(ROOT, "web")
EXTRA = os.environ.get("WEB_EXTRA", "").split()
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def build_dir():
    """The built swiped and swipectl: $SWIPED_BUILD_DIR, else .build/debug (what `make test` built)."""
    directory = os.environ.get("SWIPED_BUILD_DIR") or os.path.join(ROOT, ".build", "debug")
    for name in ("swiped", "swipectl"):
        if not os.access(os.path.join(directory, name), os.X_OK):
            raise RuntimeError(f"{directory}/{name} not found: run `swift build` first, or set SWIPED_BUILD_DIR")
    return directory


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def click_undo(driver):
    """Clicks the toast's Undo once it shows: a row goes from the list at once, the toast only
    when the daemon's reply comes, a moment later (clicking before that finds it hidden)."""
    undo = driver.find_element("id", "toast-undo")
    wait_until(undo.is_displayed, what="the Undo toast")
    undo.click()


def wait_until(predicate, timeout=10.0, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


class Children:
    """Processes a test started; `stop_all` terminates and reaps every one of them."""

    def __init__(self):
        self.processes = []
        self.files = []  # their logs, closed once they are gone

    def start(self, argv, **kwargs):
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, **kwargs)
        self.processes.append(process)
        return process

    def stop(self, process, sig=signal.SIGTERM, timeout=10):
        if process.poll() is None:
            process.send_signal(sig)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process in self.processes:
            self.processes.remove(process)
        return process.returncode

    def stop_all(self):
        for process in reversed(list(self.processes)):
            self.stop(process)
        for file in self.files:
            file.close()
        self.files.clear()


class Daemon:
    """swiped on a socket and state of its own, in `directory`, and (unless `web` is false) its web
    listener on a free port of 127.0.0.1 serving `webdir`, as `make web` runs it (`web_arguments`):
    `url` is the page, `origin` its origin. `anonymous` is what an anonymous page may do
    (--web-anonymous; None: the daemon's default, reader)."""

    def __init__(self, children, directory, args=(), durability="normal", web=True, webdir=WEB, anonymous="writer"):
        self.children = children
        self.socket = os.path.join(directory, "swiped.sock")
        self.state = os.path.join(directory, "state")
        self.port = free_port() if web else None
        self.origin = f"http://127.0.0.1:{self.port}"
        self.url = self.origin + "/"
        self.args = (web_arguments(self.port, webdir, anonymous) if web else []) + list(args) + ["--durability", durability]
        self.log = open(os.path.join(directory, "swiped.log"), "ab")
        children.files.append(self.log)
        self.process = None
        self.start()

    def start(self):
        self.process = self.children.start(
            [os.path.join(build_dir(), "swiped"), "--socket", self.socket, "--state", self.state] + self.args,
            stdout=self.log, stderr=self.log)
        wait_until(self._answers, what="swiped to listen")

    def _answers(self):
        if self.process.poll() is not None:
            raise AssertionError(f"swiped exited with {self.process.returncode}")
        try:
            with Client(self.socket):
                return True
        except OSError:
            return False

    def stop(self):
        status = self.children.stop(self.process)
        assert status == 0, f"swiped exited with {status}"

    def client(self):
        return Client(self.socket)

    def swipectl(self, *args):
        return subprocess.run([os.path.join(build_dir(), "swipectl"), "--socket", self.socket, *args],
                              capture_output=True, text=True, timeout=20, check=True).stdout


class Client:
    """A line client of the daemon's socket, to check what the page did."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(10)
        try:
            self.sock.connect(path)
            self.file = self.sock.makefile("rwb")
            self.hello = self.read()
        except BaseException:
            self.sock.close()
            raise
        self.next_id = 1

    def read(self):
        line = self.file.readline()
        if not line:
            raise EOFError("the daemon closed the connection")
        return json.loads(line)

    def request(self, op, **args):
        request_id = self.next_id
        self.next_id += 1
        self.file.write((json.dumps({"op": op, "id": request_id, **args}) + "\n").encode())
        self.file.flush()
        while True:
            message = self.read()
            if message.get("id") == request_id:
                return message

    def movies(self):
        reply = self.request("list")
        assert reply["ok"], reply
        return {m["id"]: m for m in reply["movies"]}

    def close(self):
        self.file.close()
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def add_movies(socket_path, titles):
    """Adds movies with these titles through the daemon, fast (issue 33's big lists): pipelined
    over one connection, a thread writing every `add` while this one reads the replies (the
    daemon stops reading a client whose replies it cannot write, so writing all first could
    deadlock). With `--durability normal` 100,000 take seconds. Returns the replies' movies."""
    import threading
    client = Client(socket_path)
    client.sock.settimeout(120)
    failure = []

    def write():
        try:
            batch = []
            for i, title in enumerate(titles):
                batch.append(json.dumps({"op": "add", "title": title, "id": i + 1}))
                if len(batch) == 1000:
                    client.sock.sendall(("\n".join(batch) + "\n").encode())
                    batch = []
            if batch:
                client.sock.sendall(("\n".join(batch) + "\n").encode())
        except OSError as error:
            failure.append(error)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        movies = []
        while len(movies) < len(titles):
            reply = client.read()
            if "event" in reply:
                continue
            assert reply.get("ok"), reply
            movies.append(reply["movie"])
        return movies
    finally:
        writer.join()
        client.close()
        assert not failure, failure


def web_arguments(port, webdir, anonymous="writer"):
    """The daemon's web listener as `make web` runs it (Makefile: WEB_ARGS): the page's files from
    `webdir`, the page and its WebSocket on 127.0.0.1:port, anonymous pages writers (a person's
    own machine, on loopback). Another `anonymous` role, or None for the daemon's default (reader,
    as the installed units run it), for the tests of roles and signing in (issue 45)."""
    return ["--web", f"127.0.0.1:{port}", "--web-root", webdir] + (["--web-anonymous", anonymous] if anonymous else [])


def websocket_handshake(port, origin, host=None):
    """Opens a WebSocket to 127.0.0.1:port/ws with this Origin (and Host); returns the HTTP status."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall((f"GET /ws HTTP/1.1\r\nHost: {host or f'127.0.0.1:{port}'}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                   f"Origin: {origin}\r\n\r\n").encode())
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        return int(data.split(b" ", 2)[1])


def browser(width=420, height=640, scrollbars=False, extra=()):
    """Headless Chromium through Debian's chromedriver (nothing is downloaded). Scrollbars are
    hidden (they take no room) unless `scrollbars`: then they take their 15 px, as on a desktop."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}", "--force-device-scale-factor=1",
                "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                "--disable-backgrounding-occluded-windows", *([] if scrollbars else ["--hide-scrollbars"]), *EXTRA,
                *extra):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(CHROMEDRIVER, log_output=subprocess.DEVNULL) if _service_takes_log_output()
                            else Service(CHROMEDRIVER), options=options)


# axe-core, the accessibility checker that runs in the page (issue 29), from PyPI's
# axe-selenium-python, which ships its axe.min.js. Debian's Python refuses system-wide pip
# installs, so it goes into a virtual environment of the tests' own, made on first use. Only the
# package: --no-deps, because it declares pytest for its own tests. The tests still run on
# /usr/bin/python3 and put the environment's site-packages after Debian's on sys.path, so Debian's
# selenium drives (the environment needs no --system-site-packages).
AXE_PACKAGE = "axe-selenium-python"
AXE_VERSION = "2.1.6"  # the newest on PyPI (1 Dec 2026); it ships axe-core 3.1.1
AXE_VENV = os.path.join(ROOT, ".build", "web-venv")


def axe(driver):
    """An axe_selenium_python.Axe on `driver`, installing the pinned package first if it is not."""
    python = os.path.join(AXE_VENV, "bin", "python")
    def where():
        found = subprocess.run([python, "-c", "import importlib.metadata as m, os, axe_selenium_python as a; "
                                "print(m.version('axe-selenium-python')); print(os.path.dirname(os.path.dirname(a.__file__)))"],
                               capture_output=True, text=True)
        lines = found.stdout.split()
        return lines[1] if found.returncode == 0 and lines[0] == AXE_VERSION else None
    site = where() if os.access(python, os.X_OK) else None
    if site is None:
        subprocess.run(["/usr/bin/python3", "-m", "venv", AXE_VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
                        f"{AXE_PACKAGE}=={AXE_VERSION}"], check=True)
        site = where()
        assert site is not None, f"{AXE_PACKAGE} {AXE_VERSION} is not in {AXE_VENV} after installing it"
    if site not in sys.path:
        sys.path.append(site)  # after Debian's: its selenium is the one imported
    from axe_selenium_python import Axe
    return Axe(driver)


def _service_takes_log_output():
    import inspect
    from selenium.webdriver.chrome.service import Service
    return "log_output" in inspect.signature(Service.__init__).parameters


def png_pixels(data):
    """Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium's screenshots are):
    returns (width, height, channels, rows), each row a bytes object."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous, i = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = previous[x]
            c = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def pixel(png, x, y):
    width, height, channels, rows = png
    return tuple(rows[y][x * channels:x * channels + 3])
