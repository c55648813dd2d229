"""The vector store: Chroma, embedded (`PersistentClient`) or a server (`HttpClient`).

This is the only module that imports chromadb. Vectors are always passed in: Chroma's default
embedding function downloads a model and fails offline, so collections are opened with
`embedding_function=None`. Every chromadb failure becomes a RagError saying what to do.
"""

from __future__ import annotations

import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence
from urllib.parse import urlparse

import numpy as np

from ..errors import IndexCorruptError, StoreUnavailableError


@dataclass
class Hit:
    id: str
    text: str
    meta: dict[str, Any]
    similarity: float  # cosine similarity, in [-1, 1]


# Everything a chromadb call may raise becomes a RagError: any Exception, and also the Rust
# side's pyo3 PanicException, a BaseException (a damaged file can make chroma's Rust code panic).
_PASS_THROUGH = (KeyboardInterrupt, SystemExit, GeneratorExit)


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
            if isinstance(exc, _PASS_THROUGH):
                raise
            if not self.url:
                _forget_system(self.path)
            raise _unavailable(exc, self.url, self.path) from None

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
                err = IndexCorruptError(f"the index under {self.path} is damaged ({db.name} is "
                                        f"{db.stat().st_size} bytes); rebuild it with "
                                        f"`rag index --rebuild`")
                err.unreadable = True
                raise err
        client = self.client
        try:
            return sorted(c if isinstance(c, str) else c.name for c in client.list_collections())
        except BaseException as exc:
            if isinstance(exc, _PASS_THROUGH):
                raise
            raise _unavailable(exc, self.url, self.path) from None

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
            if isinstance(exc, _PASS_THROUGH):
                raise
            raise _unavailable(exc, self.url, self.path) from None
        return Collection(col, self.url, client, self.path)

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
                if isinstance(exc, _PASS_THROUGH):
                    raise
                raise _unavailable(exc, self.url, self.path) from None


def _forget_system(path: Path) -> None:
    """chromadb keeps one "system" per path in the process, even one that failed to start;
    forget it, so that the next attempt opens the files again (and reports the real error)."""
    from chromadb.api.shared_system_client import SharedSystemClient

    SharedSystemClient._identifier_to_system.pop(str(path), None)
    SharedSystemClient._identifier_to_refcount.pop(str(path), None)


class Collection:
    """One Chroma collection: chunks with their vectors, text and metadata."""

    def __init__(self, col, url: str, client=None, path: Path | None = None):
        self._col = col
        self._url = url
        self._client = client
        self._path = path

    def _call(self, fn, *args, **kw):
        try:
            return fn(*args, **kw)
        except BaseException as exc:
            if isinstance(exc, _PASS_THROUGH):
                raise
            raise _unavailable(exc, self._url, self._path) from None

    @property
    def meta(self) -> dict[str, Any]:
        """The metadata as last fetched; `refresh()` fetches it again."""
        return dict(self._col.metadata or {})

    def refresh(self) -> None:
        """Fetch the collection again: chromadb keeps the metadata it got when the collection was
        opened, so a change made by another process (a `rag index` writing to the same Chroma
        server) is only seen after this."""
        if self._client is not None:
            self._col = self._call(self._client.get_collection, self._col.name,
                                   embedding_function=None)

    def set_meta(self, **changes: Any) -> None:
        meta = {k: v for k, v in self.meta.items() if not k.startswith("hnsw:")}
        meta.update(changes)
        self._call(self._col.modify, metadata=meta)

    def count(self) -> int:
        return self._call(self._col.count)

    def max_batch(self) -> int:
        try:
            return int(self._col._client.get_max_batch_size())
        except Exception:
            return 1000

    def iter_all(self, include: Sequence[str] = ("metadatas",), page: int = 5000
                 ) -> Iterator[tuple[str, str | None, dict, np.ndarray | None]]:
        """(id, document, metadata, embedding) of every record, a page at a time."""
        offset = 0
        while True:
            res = self._call(self._col.get, include=list(include), limit=page, offset=offset)
            ids = res["ids"]
            if not ids:
                return
            docs = res.get("documents")
            metas = res.get("metadatas")
            embs = res.get("embeddings")
            for i, cid in enumerate(ids):
                yield (cid, docs[i] if docs is not None else None,
                       dict(metas[i] or {}) if metas is not None else {},
                       np.asarray(embs[i], dtype=np.float32) if embs is not None else None)
            offset += len(ids)

    def add(self, ids: list[str], vectors: np.ndarray, docs: list[str], metas: list[dict]) -> None:
        step = self.max_batch()
        for i in range(0, len(ids), step):
            self._call(self._col.upsert, ids=ids[i : i + step],
                       embeddings=np.asarray(vectors[i : i + step], dtype=np.float32),
                       documents=docs[i : i + step], metadatas=metas[i : i + step])

    def delete(self, ids: list[str]) -> None:
        step = self.max_batch()
        for i in range(0, len(ids), step):
            self._call(self._col.delete, ids=ids[i : i + step])

    def vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        res = self._call(self._col.get, ids=ids, include=["embeddings"])
        return {i: np.asarray(e, dtype=np.float32) for i, e in zip(res["ids"], res["embeddings"])}

    def query(self, vector: np.ndarray, n: int, where: dict | None = None) -> list[Hit]:
        # Chroma returns fewer than n_results when the collection holds fewer, so no count()
        # first: that would be a second round trip per question to a Chroma server.
        res = self._call(self._col.query, query_embeddings=[np.asarray(vector, np.float32)],
                         n_results=max(n, 1), where=where or None,
                         include=["documents", "metadatas", "distances"])
        return [Hit(cid, doc, dict(meta or {}), 1.0 - float(dist))
                for cid, doc, meta, dist in zip(res["ids"][0], res["documents"][0],
                                                res["metadatas"][0], res["distances"][0])]


def _unavailable(exc: BaseException, url: str, path: Path | None) -> Exception:
    full = _disk_full(exc, path)
    if full:
        return StoreUnavailableError(
            f"cannot write the index under {path}: {full} ({type(exc).__name__}: "
            f"{str(exc)[:160]}); free some space, then run `rag index` again")
    if url:
        return StoreUnavailableError(
            f"the Chroma server at {url} cannot be reached or failed ({type(exc).__name__}: "
            f"{str(exc)[:200]}); check that it is running, or unset RAG_CHROMA_URL")
    err = IndexCorruptError(
        f"the index under {path or 'the data directory'} cannot be read ({type(exc).__name__}: "
        f"{str(exc)[:200]}); rebuild it with `rag index --rebuild`")
    # SQLite's own verdicts on a damaged file: `rag index --rebuild` then sets the store aside.
    err.unreadable = any(m in str(exc) for m in ("malformed", "not a database", "(code: 11)",
                                                  "(code: 26)"))
    return err


LOW_SPACE_BYTES = 64 * 2**20


def _disk_full(exc: BaseException, path: Path | None) -> str:
    """Why a failed write probably failed for lack of space ('' if it did not). Chroma reports
    a full disk in many ways (sqlite's 'database or disk is full', a failed compaction), so the
    free space left is checked as well."""
    seen: BaseException | None = exc
    while seen is not None:
        text = str(seen).lower()
        if getattr(seen, "errno", None) == 28 or "no space left" in text or "disk is full" in text:
            return "the disk is full"
        seen = seen.__cause__ or seen.__context__
    if path is None:
        return ""
    try:
        usage = shutil.disk_usage(path)
    except OSError:
        return ""
    if usage.free < min(LOW_SPACE_BYTES, usage.total * 0.05) or usage.free < 2**20:
        return f"the disk is full ({usage.free / 2**20:.1f} MB free)"
    return ""
