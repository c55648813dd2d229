"""A real `chroma run` server for the tests, on 127.0.0.1 and a free port, stopped by the test.

`ChromaServer(path).start()` waits for its heartbeat; `stop()` and `start()` again keep port and
data (a restart). `chroma_server_fixture(name)` is a pytest fixture that starts one for a module
or session and always stops it. Used by test_chroma_server.py, test_shared_store.py and
test_consistent_reads.py, each with its own server and data.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMA = Path(sys.executable).parent / "chroma"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ChromaServer:
    """A `chroma run` process on 127.0.0.1; `stop()` and `start()` again keep port and data."""

    def __init__(self, path: Path, port: int | None = None):
        self.path, self.port = path, port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.log = path.parent / f"chroma-{self.port}.log"

    def start(self, timeout: float = 90.0) -> "ChromaServer":
        env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [str(CHROMA), "run", "--path", str(self.path), "--host", "127.0.0.1",
                 "--port", str(self.port)], stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chroma run exited: {self.log.read_text()[-2000:]}")
            try:
                urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=2).read()
                return self
            except OSError:
                time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"chroma run did not answer in {timeout} s")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(15)
        self.proc = None


def chroma_server_fixture(name: str, scope: str = "module"):
    """A fixture yielding a started ChromaServer over fresh data; skips if chroma is missing."""

    @pytest.fixture(scope=scope)
    def fixture(tmp_path_factory):
        if not CHROMA.exists():
            pytest.skip(f"{CHROMA} is missing: run `make install`")
        server = ChromaServer(tmp_path_factory.mktemp(name) / "data").start()
        try:
            yield server
        finally:
            server.stop()

    return fixture
