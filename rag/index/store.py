"""The vector store: Chroma, embedded (`PersistentClient`) or a server (`HttpClient`).

This is the only module that imports chromadb. Vectors are always passed in: Chroma's default
embedding function downloads a model and fails offline, so collections are opened with
`embedding_function=None`. Every chromadb failure becomes a RagError saying what failed and
what to do (`store_errors.py`: only a damaged store suggests `rag index --rebuild`).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ..settings import Settings
from .collection import Collection
from .store_errors import PASS_THROUGH, damaged, store_error


def _chroma():
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    return chromadb, ChromaSettings


class Store:
    """A Chroma client: open, list and delete collections.

    The client is created on first use, and reading never creates an embedded store: asking a
    missing or empty data directory for an index leaves it as it was."""

    def __init__(self, path: Path | None = None, url: str = ""):
        if not url and path is None:
            raise ValueError("a Store needs a path or a url")
        self.url = url
        self.path = path
        self._client = None
        self._lock = threading.Lock()

    @property
    def client(self):
        with self._lock:
            if self._client is None:
                self._client = self._connect()
            return self._client

    def _connect(self):
        if not self.url:
            _cap_malloc_arenas()
        try:
            chromadb, ChromaSettings = _chroma()
            opts = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
            if self.url:
                u = urlparse(self.url if "://" in self.url else f"http://{self.url}")
                return chromadb.HttpClient(host=u.hostname or "127.0.0.1", port=u.port or 8000,
                                           ssl=u.scheme == "https", settings=opts)
            assert self.path is not None
            self.path.mkdir(parents=True, exist_ok=True)
            return chromadb.PersistentClient(path=str(self.path), settings=opts)
        except BaseException as exc:  # connection, sqlite, rust panics
            if isinstance(exc, PASS_THROUGH):
                raise
            if not self.url:
                _forget_system(self.path)
            op = "connecting to the server" if self.url else "opening the store"
            raise store_error(exc, self.url, self.path, op) from None

    @property
    def location(self) -> str:
        return self.url or "embedded"

    def _absent(self) -> bool:
        """An embedded store that was never created (nothing to read, nothing to create)."""
        return not self.url and self._client is None and not (
            self.path / "chroma.sqlite3").exists()

    def names(self) -> list[str]:
        if self._absent():
            return []
        if not self.url and self._client is None:
            db = self.path / "chroma.sqlite3"
            if db.stat().st_size < 100:  # shorter than SQLite's header: chroma would overwrite it
                raise damaged(self.path, f"{db.name} is {db.stat().st_size} bytes")
        client = self.client
        try:
            return sorted(c if isinstance(c, str) else c.name for c in client.list_collections())
        except BaseException as exc:
            if isinstance(exc, PASS_THROUGH):
                raise
            raise store_error(exc, self.url, self.path, "listing the collections") from None

    def open(self, name: str, create_meta: dict[str, Any] | None = None) -> "Collection | None":
        """The collection `name`; created with `create_meta` if given and missing, else None."""
        if create_meta is None and name not in self.names():
            return None
        client = self.client
        try:
            if create_meta is None:
                col = client.get_collection(name, embedding_function=None)
            else:
                col = client.get_or_create_collection(
                    name, metadata=create_meta, configuration={"hnsw": {"space": "cosine"}},
                    embedding_function=None)
        except BaseException as exc:
            if isinstance(exc, PASS_THROUGH):
                raise
            op = f"{'opening' if create_meta is None else 'creating'} collection {name!r}"
            raise store_error(exc, self.url, self.path, op) from None
        return Collection(col, self.url, client, self.path, reopen=None if self.url else self.reopen)

    def reopen(self, stale) -> Any:
        """A new embedded client in place of `stale` (unless another caller already replaced
        it): a process's embedded Chroma keeps the vectors it loaded, so what another process
        wrote to the same data directory is only seen through a client opened again. The old
        client is left to the threads still using it."""
        with self._lock:
            if self._client is stale or self._client is None:
                _forget_system(self.path)
                self._client = self._connect()
                _trim_malloc()
            return self._client

    def set_aside(self) -> Path:
        """Move a damaged embedded store out of the way (kept for inspection, not deleted), so
        `rag index --rebuild` starts a new one."""
        assert not self.url and self.path is not None
        if self._client is not None:
            try:
                self._client.close()
            except Exception:
                pass
            self._client = None
        target = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        self.path.rename(target)
        _forget_system(self.path)
        return target

    def delete(self, name: str) -> None:
        if name in self.names():
            try:
                self.client.delete_collection(name)
            except BaseException as exc:
                if isinstance(exc, PASS_THROUGH):
                    raise
                raise store_error(exc, self.url, self.path, f"deleting collection {name!r}"
                                  ) from None


# Memory under writes. Each client opened again (a write by another process, `reopen`) starts
# a new chromadb Rust engine, whose threads allocate in glibc's per-thread arenas; freed, those
# pages mostly stayed with the process: 7 MB more resident per write seen on the ICML 2024
# index, a `rag serve` growing without bound (bench/memory_writes.py). Two arenas and a trim
# after each reopen hand them back (2 MB per reopen in the same probe, before the trim).
M_ARENA_MAX = -8  # glibc's mallopt parameter
MALLOC_ARENAS = 2
_arenas_capped = False


def _glibc():
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def _cap_malloc_arenas() -> None:
    """At most MALLOC_ARENAS malloc arenas in this process, set once before the first
    embedded client starts its threads (glibc only; elsewhere nothing happens)."""
    global _arenas_capped
    if _arenas_capped:
        return
    _arenas_capped = True
    libc = _glibc()
    if libc is not None and hasattr(libc, "mallopt"):
        libc.mallopt(M_ARENA_MAX, MALLOC_ARENAS)


def _trim_malloc() -> None:
    """Hand the heap pages freed by the client just replaced back to the system (glibc)."""
    libc = _glibc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def _forget_system(path: Path) -> None:
    """chromadb keeps one "system" per path in the process, even one that failed to start;
    forget it, so that the next attempt opens the files again (and reports the real error)."""
    from chromadb.api.shared_system_client import SharedSystemClient

    SharedSystemClient._identifier_to_system.pop(str(path), None)
    SharedSystemClient._identifier_to_refcount.pop(str(path), None)


def store_for(settings: Settings) -> Store:
    """The store the settings name: a Chroma server (`chroma_url`), else the embedded store."""
    return Store(path=settings.home_path / "chroma", url=settings.chroma_url)
