# SPDX-License-Identifier: MIT
"""The shared client scenarios through the Python client; the C client
runs the same files (ctest conformance/c)."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from conftest import SRC
from conformance import Runner
from conformance_sessions import Skip

DIR = SRC / "tests" / "conformance"
FILES = sorted(DIR.glob("*.json"))
REQUIRED = {"acquire", "held", "renew", "lost", "release", "check", "wait",
            "events", "session_basic", "session_claim", "session_keepalive"}


def test_every_required_scenario_is_there() -> None:
    assert REQUIRED <= {f.stem for f in FILES}, FILES


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_scenario(url: str, path: Path) -> None:
    r = Runner(url, f"conf-py-{os.getpid()}-{time.monotonic_ns()}/")
    try:
        r.run(path)
    except Skip as e:
        pytest.skip(f"{path.stem}: {e}")
    finally:
        r.close()
