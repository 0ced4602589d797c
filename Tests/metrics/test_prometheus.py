"""The metrics test infrastructure (Tests/metrics/prometheus.py), proven on the golden exposition
(Tests/metrics/sample.prom, the Prometheus encoder's output for a known snapshot, checked by
MetricsTests) served by a small HTTP server of this test. Part 2 of issue 31 points the same
helpers at the daemon's metrics listener.

    python3 -m unittest -v Tests/metrics/test_prometheus.py      (make test-metrics)
"""

import http.server
import os
import sys
import threading
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


if __name__ == "__main__":
    unittest.main()
