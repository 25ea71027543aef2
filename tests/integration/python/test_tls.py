# SPDX-License-Identifier: MIT
"""The Python client over HTTPS: the server verified with a CA file, and a
client certificate for mutual TLS (certificates made here with openssl)."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Dict

import pytest

import tenure
from conftest import Server


def mkcert(d: Path, name: str, cn: str, issuer: str, san: str = "") -> None:
    subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes",
                    "-keyout", str(d / f"{name}.key"), "-subj", f"/CN={cn}",
                    "-out", str(d / f"{name}.csr")], check=True,
                   capture_output=True)
    ext = d / f"{name}.ext"
    lines = [f"subjectAltName={san}"] if san else []
    if issuer == "self":
        lines += ["basicConstraints=critical,CA:TRUE",
                  "keyUsage=keyCertSign,cRLSign"]
        sign = ["-signkey", str(d / f"{name}.key")]
    else:
        sign = ["-CA", str(d / f"{issuer}.pem"), "-CAkey",
                str(d / f"{issuer}.key"), "-CAcreateserial"]
    ext.write_text("\n".join(lines) + "\n")
    subprocess.run(["openssl", "x509", "-req", "-in", str(d / f"{name}.csr"),
                    "-days", "2", "-extfile", str(ext), "-out",
                    str(d / f"{name}.pem")] + sign, check=True,
                   capture_output=True)


@pytest.fixture
def pki(tmp_path: Path) -> Dict[str, str]:
    d = tmp_path / "pki"
    d.mkdir()
    mkcert(d, "ca", "tenure test CA", "self")
    mkcert(d, "server", "127.0.0.1", "ca", "IP:127.0.0.1")
    mkcert(d, "client", "indexer", "ca")
    return {n: str(d / n) for n in ("ca", "server", "client")}


def test_https_with_a_ca_file(own_server: Server, pki: Dict[str, str],
                              uniq: str) -> None:
    own_server.args = ["--tls-cert", pki["server"] + ".pem",
                       "--tls-key", pki["server"] + ".key"]
    own_server.tls_ca = pki["ca"] + ".pem"
    own_server.start()
    assert own_server.url.startswith("https://")
    with tenure.Client(own_server.url, ca_file=pki["ca"] + ".pem") as c:
        stream = c.events(prefix=uniq)
        got = []

        def read() -> None:
            for ev in stream:
                got.append(ev)

        import threading
        t = threading.Thread(target=read, daemon=True)
        t.start()
        assert stream.wait_connected(10)
        with c.hold(uniq + "a", ttl_ms=1500) as lease:
            time.sleep(0.8)  # a renew over TLS
            assert lease.is_held()
        deadline = time.monotonic() + 10
        while len(got) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [e["type"] for e in got] == ["acquired", "released"]
        stream.close()
    # Without the CA the server's certificate is not trusted.
    with pytest.raises(tenure.ConnectError):
        tenure.Client(own_server.url).get(uniq + "a")


def test_mutual_tls(own_server: Server, pki: Dict[str, str],
                    uniq: str) -> None:
    own_server.args = ["--tls-cert", pki["server"] + ".pem",
                       "--tls-key", pki["server"] + ".key",
                       "--tls-client-ca", pki["ca"] + ".pem"]
    own_server.tls_ca = pki["ca"] + ".pem"
    # readiness is polled without a client certificate: /readyz must answer
    try:
        own_server.start()
    except RuntimeError:
        pytest.fail("tenured with --tls-client-ca did not become ready "
                    "for a client without a certificate")
    with tenure.Client(own_server.url, ca_file=pki["ca"] + ".pem",
                       cert_file=pki["client"] + ".pem",
                       key_file=pki["client"] + ".key") as c:
        lease = c.acquire(uniq + "a", ttl_ms=5000)
        lease.renew()
        lease.release()
    with pytest.raises(tenure.Unauthorized, match="client certificate"):
        tenure.Client(own_server.url, ca_file=pki["ca"] + ".pem").acquire(
            uniq + "b", ttl_ms=5000)
