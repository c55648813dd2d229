"""A real `chroma run` server for the tests, on 127.0.0.1 and a free port, stopped by the test.

`ChromaServer` is the bench's (bench/chroma_server.py). `chroma_server_fixture(name)` is a pytest
fixture that starts one for a module or session and always stops it. Used by
test_chroma_server.py, test_shared_store.py and test_consistent_reads.py, each with its own
server and data.
"""

from __future__ import annotations

import pytest

from rag.bench.chroma_server import CHROMA, ChromaServer


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
