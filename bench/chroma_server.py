"""A real `chroma run` server on 127.0.0.1 and a free port, for the bench and the tests.

`ChromaServer(path).start()` waits for its heartbeat; `stop()` and `start()` again keep port and
data (a restart). Used by `load_shared.py` and by the tests' fixture (tests/chroma_server.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from .startup import free_port, stop

CHROMA = Path(sys.executable).parent / "chroma"


class ChromaServer:
    """A `chroma run` process on 127.0.0.1; `stop()` and `start()` again keep port and data.
    Its output goes to `chroma-<port>.log` beside the data folder."""

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
        stop(self.proc, wait=15)
        self.proc = None
