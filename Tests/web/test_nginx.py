"""The page behind a real reverse proxy with TLS (issue 44, point 3): Debian's nginx with a
self-signed certificate in front of the web listener, under a path prefix (`location /swiped/`),
with the WebSocket's upgrade headers and the public origin, as docs/web.md's example (this
test writes the same `location` block: NGINX_LOCATION). Chromium drives the page over
https://…/swiped/ and wss://…/swiped/ws: the list, a swipe that changes a movie, a change from a
Unix client shown, and the sign-in cookie kept to the prefix's path and marked Secure.

Run alone: SWIPED_BUILD_DIR=$PWD/.build/debug /usr/bin/python3 -m unittest Tests.web.test_nginx
"""
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Children, Daemon, browser, free_port, wait_until  # noqa: E402
from test_web import Page  # noqa: E402

NGINX = "/usr/sbin/nginx"

# What docs/web.md's example puts in a `server` block: the page and its WebSocket under
# /swiped/, the upgrade passed on, the browser's address and scheme said to the daemon.
NGINX_LOCATION = """
    location /swiped/ {
        proxy_pass http://127.0.0.1:%(web_port)d/;
        proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $connection_upgrade;
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_read_timeout 1h;
    }
"""

NGINX_CONF = """
daemon off;
master_process off;
worker_processes 1;
pid %(dir)s/nginx.pid;
error_log %(dir)s/error.log info;
events { worker_connections 256; }
http {
    access_log %(dir)s/access.log;
    client_body_temp_path %(dir)s/body;
    proxy_temp_path %(dir)s/proxy;
    fastcgi_temp_path %(dir)s/fastcgi;
    uwsgi_temp_path %(dir)s/uwsgi;
    scgi_temp_path %(dir)s/scgi;
    map $http_upgrade $connection_upgrade {
        default upgrade;
        ''      close;
    }
    server {
        listen 127.0.0.1:%(tls_port)d ssl;
        ssl_certificate %(dir)s/cert.pem;
        ssl_certificate_key %(dir)s/key.pem;
%(location)s
    }
}
"""


@unittest.skipUnless(os.path.exists(NGINX), "nginx is not installed (make deps-web-test installs it)")
class BehindNginxWithTLSTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.mkdtemp(prefix="swiped-nginx-")
        cls.children = Children()
        d = cls.directory
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
             "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", f"{d}/key.pem", "-out", f"{d}/cert.pem"],
            check=True, capture_output=True, timeout=60)
        cls.tls_port = free_port()
        cls.public = f"https://127.0.0.1:{cls.tls_port}"
        cls.daemon = Daemon(cls.children, d, args=["--web-origin", cls.public])
        location = NGINX_LOCATION % {"web_port": cls.daemon.port}
        with open(f"{d}/nginx.conf", "w") as f:
            f.write(NGINX_CONF % {"dir": d, "tls_port": cls.tls_port, "location": location})
        cls.nginx = cls.children.start([NGINX, "-p", d, "-c", f"{d}/nginx.conf"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: cls._proxied(), what="nginx to serve the page")
        cls.driver = browser(extra=["--ignore-certificate-errors"])
        cls.page = Page(cls.driver, cls.public + "/swiped/")

    @classmethod
    def _proxied(cls):
        if cls.nginx.poll() is not None:
            raise AssertionError(f"nginx exited with {cls.nginx.returncode}: {open(cls.directory + '/error.log').read()}")
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # the test's own self-signed certificate
        try:
            with urllib.request.urlopen(cls.public + "/swiped/", context=context, timeout=5) as reply:
                return reply.status == 200
        except OSError:
            return False

    @classmethod
    def tearDownClass(cls):
        try:
            cls.driver.quit()
        finally:
            cls.children.stop_all()
            shutil.rmtree(cls.directory, ignore_errors=True)

    def movies(self):
        with self.daemon.client() as c:
            return c.movies()

    def test_list_swipe_and_a_change_from_a_unix_client_over_https_and_wss(self):
        self.page.load()
        self.assertEqual(len(self.page.titles()), 10)
        self.assertEqual(self.page.js("return location.protocol"), "https:")
        # A swipe through the proxy changes the daemon's list.
        self.assertFalse(self.movies()["matrix"]["watched"])
        self.page.drag("matrix", 300, kind="mouse")
        wait_until(lambda: self.movies()["matrix"]["watched"], what="matrix watched through nginx")
        wait_until(lambda: self.page.has_flag("matrix", "eye"), what="the eye on the row")
        # A change from a Unix client reaches the page through the proxy's WebSocket.
        with self.daemon.client() as c:
            c.request("toggle-watched", movie="seven")
        wait_until(lambda: self.page.has_flag("seven", "eye"), what="seven's eye from the Unix client")
        # The page's WebSocket came through nginx (loopback: a trusted proxy), with the browser's
        # address as nginx forwarded it.
        with self.daemon.client() as c:
            status = c.request("status")["status"]
        web = [x for x in status["connections"] if x["transport"] == "websocket"]
        self.assertTrue(web and all(x["address"] == "127.0.0.1" for x in web), web)

    def test_the_sign_in_cookie_is_kept_to_the_prefix_and_secure(self):
        with self.daemon.client() as c:
            token = c.request("token-create", name="alice", role="writer")["token"]
        self.page.load()
        status = self.page.js("""return (async () => {
            const r = await fetch("login", {method: "POST", credentials: "same-origin",
                                            headers: {"Content-Type": "text/plain"}, body: arguments[0]});
            return [r.status, await r.text()]; })();""", token)
        self.assertEqual(status[0], 200, status)
        self.assertEqual(json.loads(status[1]), {"user": "alice", "role": "writer"})
        cookies = {c["name"]: c for c in self.driver.get_cookies()}
        cookie = cookies["swiped_token"]
        self.assertTrue(cookie["httpOnly"])
        self.assertTrue(cookie["secure"], "nginx said X-Forwarded-Proto: https")
        self.assertEqual(cookie.get("sameSite"), "Strict")
        self.assertEqual(cookie["path"], "/swiped", "the login's directory: the page's, under the prefix")
        self.assertNotIn("swiped_token", self.page.js("return document.cookie"))
        # A page loaded again opens its WebSocket as alice: the daemon lists it so.
        self.page.load()
        with self.daemon.client() as c:
            connections = c.request("status")["status"]["connections"]
        web = [x for x in connections if x["transport"] == "websocket"]
        self.assertTrue(any(x["user"] == "alice" and x["door"] == "token" for x in web), web)
        self.assertTrue(all(x["address"] == "127.0.0.1" for x in web), web)
        self.page.js("""return fetch("logout", {method: "POST", credentials: "same-origin"}).then(r => r.status);""")
        self.assertNotIn("swiped_token", {c["name"] for c in self.driver.get_cookies()})


if __name__ == "__main__":
    unittest.main()
