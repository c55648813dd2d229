"""One Chroma collection: chunks with their vectors, text and metadata, read and written in
pages and batches. Every chromadb failure becomes a RagError (`store_errors.py`)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from ..errors import RagError
from .store_errors import PASS_THROUGH, unavailable


@dataclass
class Hit:
    id: str
    text: str
    meta: dict[str, Any]
    similarity: float  # cosine similarity, in [-1, 1]


class Collection:
    """One Chroma collection: chunks with their vectors, text and metadata."""

    def __init__(self, col, url: str, client=None, path: Path | None = None, reopen=None):
        self._col = col
        self._url = url
        self._client = client
        self._path = path
        self._reopen = reopen  # embedded: Store.reopen, to see other processes' writes

    def _call(self, fn, *args, **kw):
        try:
            return fn(*args, **kw)
        except BaseException as exc:
            if isinstance(exc, PASS_THROUGH):
                raise
            raise unavailable(exc, self._url, self._path, getattr(fn, "__qualname__", "")) from None

    @property
    def meta(self) -> dict[str, Any]:
        """The metadata as last fetched; `refresh()` fetches it again."""
        return dict(self._col.metadata or {})

    def refresh(self) -> None:
        """Fetch the collection again: chromadb keeps the metadata it got when the collection was
        opened, so a change made by another process (a `rag index` writing to the same Chroma
        server) is only seen after this."""
        if self._client is None:
            return
        gen = self.meta.get("generation")
        col = self._call(self._client.get_collection, self._col.name, embedding_function=None)
        self._col = col
        if self._reopen is not None and (col.metadata or {}).get("generation") != gen:
            # Another process wrote to the embedded store: its vectors are only seen by a
            # client opened again (the metadata above is read from SQLite, always current).
            self._reopened()

    def _reopened(self) -> None:
        """Open the embedded client again (`Store.reopen`) and the collection through it."""
        self._client = self._call(self._reopen, self._client)
        self._col = self._call(self._client.get_collection, self._col.name,
                               embedding_function=None)

    def set_meta(self, **changes: Any) -> None:
        meta = {k: v for k, v in self.meta.items() if not k.startswith("hnsw:")}
        meta.update(changes)
        self._call(self._col.modify, metadata=meta)

    def mark_dirty(self) -> None:
        """Tell readers a write is under way: a "dirty" generation, and `clean`, the last
        complete generation, which they keep answering from until the write is done."""
        gen = str(self.meta.get("generation", ""))
        clean = gen if gen and not gen.startswith("dirty") else str(self.meta.get("clean", ""))
        self.set_meta(generation=f"dirty-{uuid.uuid4().hex}", clean=clean)

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

    def delete(self, ids: list[str], where: dict | None = None) -> None:
        """Delete the records `ids` (only those whose metadata matches `where`, if given)."""
        step = self.max_batch()
        for i in range(0, len(ids), step):
            self._call(self._col.delete, ids=ids[i : i + step], where=where or None)

    def add_new(self, cid: str, vector: list[float], doc: str, meta: dict) -> None:
        """Add one record unless its id exists (then nothing changes): add-if-absent."""
        self._call(self._col.add, ids=[cid], embeddings=[vector], documents=[doc],
                   metadatas=[meta])

    def records(self, ids: list[str]) -> list[tuple[str, dict]]:
        """(id, metadata) of those of `ids` the collection holds."""
        return self._metadatas(ids=ids)

    def _metadatas(self, **selection) -> list[tuple[str, dict]]:
        res = self._call(self._col.get, include=["metadatas"], **selection)
        return [(cid, dict(m or {})) for cid, m in zip(res["ids"], res["metadatas"])]

    def update_meta(self, cid: str, meta: dict) -> None:
        self._call(self._col.update, ids=[cid], metadatas=[meta])

    def where(self, where: dict) -> list[tuple[str, dict]]:
        """(id, metadata) of every record whose metadata matches `where` (Chroma's filter)."""
        return self._metadatas(where=where)

    def vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        try:
            res = self._call(self._col.get, ids=ids, include=["embeddings"])
        except RagError:
            if self._reopen is None:
                raise
            # Embedded: ids another process added since this client loaded its vectors
            # ("Error finding id"): opened again, it knows them.
            self._reopened()
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
