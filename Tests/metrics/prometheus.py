"""Prometheus for the metrics tests (issue 31): promtool's checks on a scrape, and a real
Prometheus server of the test's own, on loopback, whose HTTP API the test queries.

    from prometheus import promtool_check, scrape, PrometheusServer

    text = scrape("127.0.0.1", port)                  # GET /metrics, the body as text
    assert promtool_check(text) == ""                 # promtool check metrics: its complaints
    with PrometheusServer([f"127.0.0.1:{port}"]) as prom:
        prom.wait_for_scrape()                        # the target is up
        assert prom.value("swiped_clients") == 5      # an instant query, one sample's value

Both come from Debian's package `prometheus` (the Makefile's TEST_DEBS). The server runs with a
configuration, a data directory and a port of its own, scrapes every 0.5 s, and is stopped (and
reaped) on every way out of the `with` block; nothing is left behind.
"""

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"


def free_port():
    """A loopback TCP port free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(host, port, path="/metrics", timeout=5):
    """GET http://host:port/path: (status, headers, body as text). Errors are returned, not raised."""
    try:
        with urllib.request.urlopen(f"http://{host}:{port}{path}", timeout=timeout) as r:
            return r.status, dict(r.headers), r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode("utf-8")


def promtool_check(text):
    """`promtool check metrics` on an exposition: "" when it passes, else what it says."""
    run = subprocess.run([PROMTOOL, "check", "metrics"], input=text.encode(), capture_output=True, timeout=30)
    said = (run.stdout + run.stderr).decode().strip()
    if run.returncode != 0 and not said:
        said = f"promtool exited {run.returncode}"
    return said if run.returncode != 0 or said else ""


class PrometheusServer:
    """A Prometheus scraping `targets` ("host:port" each), on a loopback port of its own."""

    def __init__(self, targets, scrape_interval="500ms", job="swiped"):
        self.targets = targets
        self.scrape_interval = scrape_interval
        self.job = job
        self.process = None
        self.directory = None

    def __enter__(self):
        self.directory = tempfile.mkdtemp(prefix="swiped-prom-")
        self.port = free_port()
        config = os.path.join(self.directory, "prometheus.yml")
        with open(config, "w") as f:
            f.write(
                "global:\n"
                f"  scrape_interval: {self.scrape_interval}\n"
                f"  scrape_timeout: {self.scrape_interval}\n"
                "scrape_configs:\n"
                f"  - job_name: {self.job}\n"
                "    static_configs:\n"
                f"      - targets: {json.dumps(self.targets)}\n"
            )
        self.log = open(os.path.join(self.directory, "prometheus.log"), "w+")
        self.process = subprocess.Popen(
            [
                PROMETHEUS,
                f"--config.file={config}",
                f"--storage.tsdb.path={os.path.join(self.directory, 'data')}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=warn",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            cwd=self.directory,
        )
        try:
            self._wait(lambda: self._get("/-/ready", raw=True) is not None, "Prometheus to be ready", 30)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *_):
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None
        if self.directory is not None:
            self.log.close()
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
        return False

    def output(self):
        """What Prometheus logged (warnings and worse)."""
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def _get(self, path, raw=False):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                body = r.read().decode()
                return body if raw else json.loads(body)
        except (OSError, ValueError):
            if self.process.poll() is not None:
                raise RuntimeError(f"prometheus exited {self.process.returncode}: {self.output()}")
            return None

    def _wait(self, ready, what, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            result = ready()
            if result:
                return result
            time.sleep(0.1)
        raise TimeoutError(f"waited {timeout} s for {what}; prometheus said: {self.output()}")

    def query(self, expr):
        """An instant query: the API's `data.result` (a list of {metric, value})."""
        answer = self._get("/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
        if not answer or answer.get("status") != "success":
            return None
        return answer["data"]["result"]

    def value(self, expr):
        """The value of the one sample `expr` gives, as a float; None when it gives none."""
        result = self.query(expr)
        if not result:
            return None
        assert len(result) == 1, f"{expr} gave {len(result)} samples: {result}"
        return float(result[0]["value"][1])

    def wait_for(self, expr, predicate=lambda v: v is not None, timeout=20):
        """Waits until `predicate(value(expr))` holds; returns that value."""
        box = []

        def ready():
            v = self.value(expr)
            if predicate(v):
                box.append(v)
                return True
            return False

        self._wait(ready, f"{expr} to satisfy the test", timeout)
        return box[0]

    def wait_for_scrape(self, timeout=20):
        """Waits until every target was scraped successfully (`up` is 1)."""
        targets = len(self.targets)
        return self.wait_for(f'count(up{{job="{self.job}"}} == 1)', lambda v: v == targets, timeout)
