# SPDX-License-Identifier: MIT
"""Fixtures of the browser tests: a real tenured on a free loopback port in a
temporary data dir, and Debian's chromium driven by chromedriver (headless).
TN_BIN names the build's bin directory.  When TN_SCREENSHOT_DIR is set, the
tests save the screenshots that docs/CONSOLE.md shows there."""
import hashlib
import json
import os
import secrets
import shutil
import sys
import tempfile
import urllib.error
import urllib.request

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
from tenured import BIN, Tenured, free_port  # noqa: E402

TN_BIN = str(BIN)
__all__ = ["TN_BIN", "free_port"]


class Server:
    """One tenured process (tests/tools/tenured.py) and a small JSON
    client for it."""

    def __init__(self, tmp, args=()):
        self.tenured = Tenured(tmp, list(args)).start()
        self.port = self.tenured.port
        self.base = self.tenured.url

    def call(self, method, path, body=None, bearer=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data,
                                     method=method)
        if bearer:
            req.add_header("Authorization", "Bearer " + bearer)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                raw = r.read()
                return r.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as e:
            raw = e.read()
            return e.code, json.loads(raw) if raw else None

    def stop(self):
        self.tenured.stop()
        bad = self.tenured.sanitizer_reports()
        assert not bad, "sanitizer report from tenured:\n" + "\n".join(bad[:20])


@pytest.fixture
def tmpdir_():
    d = tempfile.mkdtemp(prefix="tenure-ui.")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def server(tmpdir_):
    s = Server(tmpdir_)
    yield s
    s.stop()


class Tokens:
    """Bearer tokens of the auth file: an admin and a reader that may read
    and acquire every name but not force-release."""

    def __init__(self):
        self.admin = secrets.token_urlsafe(24)
        self.viewer = secrets.token_urlsafe(24)

    def write(self, path):
        sha = lambda t: hashlib.sha256(t.encode()).hexdigest()
        doc = {"principals": [
            {"name": "ops", "token_sha256": sha(self.admin), "admin": True},
            {"name": "viewer", "token_sha256": sha(self.viewer),
             "allow": [{"prefix": "", "actions": ["read", "acquire"]}]},
        ]}
        with open(path, "w") as f:
            json.dump(doc, f)
        os.chmod(path, 0o600)


@pytest.fixture
def auth_server(tmpdir_):
    tokens = Tokens()
    path = os.path.join(tmpdir_, "auth.json")
    tokens.write(path)
    s = Server(tmpdir_, ["--auth-file", path])
    s.tokens = tokens
    yield s
    s.stop()


@pytest.fixture(scope="session")
def chromium():
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu",
              "--disable-dev-shm-usage", "--window-size=1400,900"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(shutil.which("chromedriver")
                                           or "/usr/bin/chromedriver"),
                           options=opts)
    yield drv
    drv.quit()


@pytest.fixture
def browser(chromium):
    """The session's browser, with its console log drained, on a blank
    page: each test sees only its own messages."""
    chromium.get("about:blank")
    chromium.get_log("browser")
    yield chromium
    chromium.get("about:blank")


def screenshot(drv, name):
    d = os.environ.get("TN_SCREENSHOT_DIR")
    if d:
        os.makedirs(d, exist_ok=True)
        drv.save_screenshot(os.path.join(d, name + ".png"))


def console_errors(drv):
    return [e for e in drv.get_log("browser") if e["level"] == "SEVERE"]
