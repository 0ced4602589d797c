"""The metrics test infrastructure (Tests/metrics/prometheus.py), proven on the golden exposition
(Tests/metrics/sample.prom, the Prometheus encoder's output for a known snapshot, checked by
MetricsTests) served by a small HTTP server of this test; then pointed at the daemon's own
metrics listener (`swiped --metrics`): promtool checks a real scrape, and a real Prometheus
scrapes the daemon and answers with the clients connected.

    python3 -m unittest -v Tests/metrics/test_prometheus.py      (make test-metrics)

The daemon is $SWIPED_BUILD_DIR/swiped (default .build/debug, what `make test` builds).
"""

import http.server
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from prometheus import PrometheusServer, free_port, promtool_check, scrape  # noqa: E402

SAMPLE = os.path.join(os.path.dirname(__file__), "sample.prom")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class StaticExposition:
    """Serves one exposition at /metrics on a loopback port, from a thread."""

    def __init__(self, text):
        body = text.encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path != "/metrics":
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", CONTENT_TYPE)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
        return False


class PrometheusToolsTests(unittest.TestCase):
    def setUp(self):
        with open(SAMPLE) as f:
            self.text = f.read()

    def test_promtool_passes_the_golden_exposition(self):
        self.assertEqual(promtool_check(self.text), "")

    def test_promtool_catches_what_breaks_the_rules(self):
        # A check that cannot fail proves nothing: a counter without _total, and a broken line.
        self.assertNotEqual(promtool_check(self.text.replace("swiped_requests_total", "swiped_requests")), "")
        self.assertNotEqual(promtool_check(self.text + "swiped_clients{\n"), "")

    def test_a_real_prometheus_scrapes_it_and_answers_queries(self):
        with StaticExposition(self.text) as served:
            status, headers, body = scrape("127.0.0.1", served.port)
            self.assertEqual(status, 200)
            self.assertEqual(headers["Content-Type"], CONTENT_TYPE)
            self.assertEqual(promtool_check(body), "")
            with PrometheusServer([f"127.0.0.1:{served.port}"]) as prom:
                prom.wait_for_scrape()
                self.assertEqual(prom.value("swiped_clients"), 5)
                self.assertEqual(prom.value('swiped_requests_total{op="toggle-watched"}'), 20)
                self.assertEqual(prom.value("swiped_store_up"), 1)
                self.assertEqual(prom.value('swiped_build_info{version="0.1.0"}'), 1)
                self.assertEqual(prom.value('swiped_request_duration_seconds_count{class="mutation"}'), 20)
                # The histogram's buckets are usable as Prometheus reads them: 20 mutations of
                # 1.5 ms all lie in (1.048576, 2.097152] ms.
                p50 = prom.value('histogram_quantile(0.5, swiped_request_duration_seconds_bucket{class="mutation"})')
                self.assertTrue(0.001048576 <= p50 <= 0.002097152, p50)
                self.assertIsNone(prom.value("swiped_no_such_metric"))

    def test_a_target_that_is_down_reads_as_down(self):
        port = free_port()  # nothing listens there
        with PrometheusServer([f"127.0.0.1:{port}"]) as prom:
            self.assertEqual(prom.wait_for('up{job="swiped"}', lambda v: v == 0), 0)


class Daemon:
    """swiped with --metrics on a loopback port, its socket and state in a directory of its own;
    stopped (SIGTERM) and reaped on every way out of the `with` block."""

    def __init__(self):
        self.binary = os.path.join(BUILD, "swiped")
        self.directory = tempfile.TemporaryDirectory(prefix="swiped-prom")
        self.socket = os.path.join(self.directory.name, "s.sock")
        self.port = free_port()
        self.clients = []

    def __enter__(self):
        env = dict(os.environ)
        for name in ("LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "NOTIFY_SOCKET", "WATCHDOG_USEC"):
            env.pop(name, None)
        self.process = subprocess.Popen(
            [self.binary, "--socket", self.socket, "--state", os.path.join(self.directory.name, "state"),
             "--metrics", f"127.0.0.1:{self.port}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self._listening() and scrape("127.0.0.1", self.port, "/health", timeout=1)[0] == 200:
                return self
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.__exit__()
        raise RuntimeError("swiped did not start: " + self.process.stderr.read().decode())

    def _listening(self):
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def connect(self):
        """A client, its hello read."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.socket)
        s.settimeout(5)
        hello = b""
        while not hello.endswith(b"\n"):
            hello += s.recv(4096)
        self.clients.append(s)
        return s

    def __exit__(self, *_):
        for c in self.clients:
            c.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stderr.close()
        self.directory.cleanup()
        return False


BUILD = os.environ.get("SWIPED_BUILD_DIR", os.path.join(os.path.dirname(__file__), "../../.build/debug"))


@unittest.skipUnless(os.path.exists(os.path.join(BUILD, "swiped")), f"no swiped in {BUILD} (swift build)")
class DaemonScrapeTests(unittest.TestCase):
    def test_promtool_passes_a_scrape_of_the_daemon(self):
        with Daemon() as daemon:
            daemon.connect()
            status, headers, body = scrape("127.0.0.1", daemon.port)
            self.assertEqual(status, 200)
            self.assertEqual(headers["Content-Type"], CONTENT_TYPE)
            self.assertEqual(promtool_check(body), "")
            self.assertIn("\nswiped_clients 1\n", body)

    def test_a_real_prometheus_scrapes_the_daemon_and_counts_its_clients(self):
        with Daemon() as daemon:
            for _ in range(3):
                daemon.connect()
            with PrometheusServer([f"127.0.0.1:{daemon.port}"]) as prom:
                prom.wait_for_scrape()
                self.assertEqual(prom.wait_for("swiped_clients", lambda v: v == 3), 3)
                self.assertEqual(prom.value("swiped_store_up"), 1)
                # Two more: the next scrapes see five.
                daemon.connect()
                daemon.connect()
                self.assertEqual(prom.wait_for("swiped_clients", lambda v: v == 5), 5)


if __name__ == "__main__":
    unittest.main()
