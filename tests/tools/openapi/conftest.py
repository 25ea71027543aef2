# SPDX-License-Identifier: MIT
"""Shared fixture of the OpenAPI tests: a live tenured on a free port and a
temporary data dir, with or without --auth-file, and a small HTTP client.

A run in which no test passed fails: pytest's "no tests ran" (exit 5) and
a run where everything was skipped must never count as a pass."""
import hashlib
import http.client
import json
import os
import secrets
import shutil
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/tools: openapi_check, tenured
from tenured import Tenured  # noqa: E402


class Answer:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lower-case names
        self.body = body

    def json(self):
        return json.loads(self.body.decode("utf-8"))


class Server:
    """tenured (tests/tools/tenured.py) with or without --auth-file;
    tokens maps principal -> bearer."""

    def __init__(self, auth):
        self.dir = tempfile.mkdtemp(prefix="tenure-openapi.")
        self.tokens = {}
        args = ["--auth-file", self._write_auth()] if auth else []
        self.tenured = Tenured(self.dir, args).start()
        self.port = self.tenured.port

    def _write_auth(self):
        rules = {
            "ops": None,  # admin
            "writer": [{"prefix": "", "actions": ["acquire", "read"]}],
            "reader": [{"prefix": "", "actions": ["read"]}],
            "narrow": [{"prefix": "n:", "actions": ["acquire", "read"]}],
        }
        principals = []
        for name, allow in rules.items():
            tok = secrets.token_urlsafe(24)
            self.tokens[name] = tok
            p = {"name": name, "token_sha256": hashlib.sha256(tok.encode()).hexdigest()}
            if allow is None:
                p["admin"] = True
            else:
                p["allow"] = allow
            principals.append(p)
        path = os.path.join(self.dir, "auth.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"principals": principals}, f)
        os.chmod(path, 0o600)
        return path

    @property
    def admin(self):
        return self.tokens.get("ops")

    def request(self, method, target, body=None, headers=None, bearer=None,
                stream_bytes=4096):
        """One request on a fresh connection.  An event stream is read for
        its first lines only (until stream_bytes or a quiet second)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=15)
        try:
            conn.putrequest(method, target, skip_accept_encoding=True)
            for k, v in (headers or {}).items():
                conn.putheader(k, v)
            if bearer is not None:
                conn.putheader("Authorization", f"Bearer {bearer}")
            if body is not None:
                conn.putheader("Content-Length", str(len(body)))
            try:
                conn.endheaders(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # answered before the whole body was read (413)
            resp = conn.getresponse()
            hdrs = {k.lower(): v for k, v in resp.getheaders()}
            if hdrs.get("content-type", "").startswith("text/event-stream"):
                conn.sock.settimeout(1.0)
                data = b""
                try:
                    while len(data) < stream_bytes and data.count(b"\n") < 4:
                        chunk = resp.read1(stream_bytes)
                        if not chunk:
                            break
                        data += chunk
                except (TimeoutError, OSError):
                    pass
            else:
                data = resp.read()
            return Answer(resp.status, hdrs, data)
        finally:
            conn.close()

    def stop(self):
        self.tenured.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module", params=["noauth", "auth"])
def server(request):
    s = Server(auth=request.param == "auth")
    yield s
    alive = s.tenured.alive
    s.tenured.stop()
    log = s.tenured.log_tail()
    bad = s.tenured.sanitizer_reports()
    s.stop()
    assert alive, "tenured exited during the test:\n" + log
    # The sanitizer builds report and may go on: their reports fail the test.
    assert not bad, "sanitizer report from tenured:\n" + "\n".join(bad[:20])


def pytest_sessionfinish(session, exitstatus):
    """Fail a run in which nothing passed (nothing collected, all skipped)."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    passed = len(reporter.stats.get("passed", [])) if reporter else 0
    skipped = len(reporter.stats.get("skipped", [])) if reporter else 0
    if passed == 0 or skipped > 0:
        print(f"\nopenapi tests: {passed} passed, {skipped} skipped: "
              "a run must pass every test and skip none", file=sys.stderr)
        session.exitstatus = 1
