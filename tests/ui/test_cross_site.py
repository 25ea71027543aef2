# SPDX-License-Identifier: MIT
"""Web pages of other origins, in a real headless chromium (issue #36, 2026-12-07,
docs/SECURITY.md "Browsers"): a page served elsewhere cannot acquire or
release leases through the browser, neither with fetch(mode 'no-cors') of a
JSON body sent as a form, nor from a sandboxed frame (Origin: null); the
same fetch made by a page of tenured itself (the console's origin) is
served, which shows the fetch would have worked."""
import http.server
import threading
import urllib.request

import pytest

from conftest import free_port

PAGE = b"<!doctype html><title>elsewhere</title><p>a page elsewhere</p>"

# Sends an acquire the way a page can without asking the server (no CORS
# preflight): mode 'no-cors', a "simple" Content-Type.  The answer is
# opaque to the page either way; what matters is whether tenured acted.
FETCH = """
const [url, body, done] = arguments;
fetch(url, {method: 'POST', mode: 'no-cors',
            headers: {'Content-Type': 'application/x-www-form-urlencoded'},
            body: body})
  .then(() => done('sent'), (e) => done('error ' + e));
"""

# The same from a sandboxed frame, whose origin is opaque: Origin: null.
SANDBOXED = """
const [url, body, done] = arguments;
window.addEventListener('message', (e) => done(String(e.data)));
const f = document.createElement('iframe');
f.setAttribute('sandbox', 'allow-scripts');
f.srcdoc = '<script>fetch(' + JSON.stringify(url) + ', {method: "POST", ' +
  'mode: "no-cors", headers: {"Content-Type": ' +
  '"application/x-www-form-urlencoded"}, body: ' + JSON.stringify(body) +
  '}).then(() => parent.postMessage("sent", "*"), ' +
  '(e) => parent.postMessage("error " + e, "*"));<\\/script>';
document.body.appendChild(f);
"""


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args):
        pass


@pytest.fixture
def elsewhere():
    """A plain web server on another port: another origin."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Page)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield "http://127.0.0.1:%d/" % srv.server_address[1]
    srv.shutdown()
    srv.server_close()


def body(name):
    return '{"name":"%s","owner_id":"web","ttl_ms":60000}' % name


def send(drv, script, server, name):
    drv.set_script_timeout(10)
    return drv.execute_async_script(script, server.base + "/v1/leases",
                                    body(name))


def test_cross_site__a_page_elsewhere_changes_nothing(server, browser,
                                                      elsewhere):
    browser.get(elsewhere)
    assert send(browser, FETCH, server, "web:no-cors") == "sent"
    assert send(browser, SANDBOXED, server, "web:sandboxed") == "sent"
    for name in ("web:no-cors", "web:sandboxed"):
        status, got = server.call("GET", "/v1/leases/" + name.replace(
            ":", "%3A"))
        assert status == 404, (name, got)
    with urllib.request.urlopen(server.base + "/metrics", timeout=10) as r:
        metrics = r.read().decode()
    refused = [ln for ln in metrics.splitlines()
               if ln.startswith("tenure_http_cross_site_refused_total ")]
    assert refused and int(refused[0].split()[1]) >= 2, refused


def test_cross_site__the_servers_own_page_is_served(server, browser):
    browser.get(server.base + "/ui")
    assert send(browser, FETCH, server, "web:own") == "sent"
    status, got = server.call("GET", "/v1/leases/web%3Aown")
    assert status == 200 and got["owner_id"] == "web", got
