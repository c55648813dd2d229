"""The vector store: Chroma, embedded (`PersistentClient`) or a server (`HttpClient`).

This is the only module that imports chromadb. Vectors are always passed in: Chroma's default
embedding function downloads a model and fails offline, so collections are opened without one
(`_NoEmbedding` raises if anything ever asks it to embed).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence
from urllib.parse import urlparse

import numpy as np

from .errors import IndexCorruptError, StoreUnavailableError


@dataclass
class Hit:
    id: str
    text: str
    meta: dict[str, Any]
    similarity: float  # cosine similarity, in [-1, 1]


def _chroma():
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    return chromadb, ChromaSettings


class Store:
    """A Chroma client: open, list and delete collections."""

    def __init__(self, path: Path | None = None, url: str = ""):
        chromadb, ChromaSettings = _chroma()
        opts = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        self.url = url
        try:
            if url:
                u = urlparse(url if "://" in url else f"http://{url}")
                self.client = chromadb.HttpClient(host=u.hostname or "127.0.0.1",
                                                  port=u.port or 8000, ssl=u.scheme == "https",
                                                  settings=opts)
            else:
                assert path is not None
                path.mkdir(parents=True, exist_ok=True)
                self.client = chromadb.PersistentClient(path=str(path), settings=opts)
        except Exception as exc:  # chromadb raises many kinds: connection, sqlite, rust panics
            raise _unavailable(exc, url, path) from None

    @property
    def location(self) -> str:
        return self.url or "embedded"

    def names(self) -> list[str]:
        try:
            return sorted(c if isinstance(c, str) else c.name for c in self.client.list_collections())
        except Exception as exc:
            raise _unavailable(exc, self.url, None) from None

    def open(self, name: str, create_meta: dict[str, Any] | None = None) -> "Collection | None":
        """The collection `name`; created with `create_meta` if given and missing, else None."""
        try:
            if create_meta is None:
                if name not in self.names():
                    return None
                col = self.client.get_collection(name)
            else:
                col = self.client.get_or_create_collection(
                    name, metadata=create_meta, configuration={"hnsw": {"space": "cosine"}},
                    embedding_function=None)
        except (StoreUnavailableError, IndexCorruptError):
            raise
        except Exception as exc:
            raise _unavailable(exc, self.url, None) from None
        return Collection(col, self.url)

    def delete(self, name: str) -> None:
        if name in self.names():
            self.client.delete_collection(name)


class Collection:
    """One Chroma collection: chunks with their vectors, text and metadata."""

    def __init__(self, col, url: str):
        self._col = col
        self._url = url

    def _call(self, fn, *args, **kw):
        try:
            return fn(*args, **kw)
        except Exception as exc:
            raise _unavailable(exc, self._url, None) from None

    @property
    def meta(self) -> dict[str, Any]:
        return dict(self._col.metadata or {})

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
        total = self.count()
        if total == 0:
            return []
        res = self._call(self._col.query, query_embeddings=[np.asarray(vector, np.float32)],
                         n_results=min(n, total), where=where or None,
                         include=["documents", "metadatas", "distances"])
        return [Hit(cid, doc, dict(meta or {}), 1.0 - float(dist))
                for cid, doc, meta, dist in zip(res["ids"][0], res["documents"][0],
                                                res["metadatas"][0], res["distances"][0])]


def _unavailable(exc: Exception, url: str, path: Path | None) -> Exception:
    if url:
        return StoreUnavailableError(
            f"the Chroma server at {url} cannot be reached or failed ({type(exc).__name__}: "
            f"{str(exc)[:200]}); check that it is running, or unset RAG_CHROMA_URL")
    return IndexCorruptError(
        f"the index under {path or 'the data directory'} cannot be read ({type(exc).__name__}: "
        f"{str(exc)[:200]}); rebuild it with `rag index --rebuild`")
