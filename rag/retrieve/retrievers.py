"""Retrievers: dense (Chroma), BM25 (bm25s) and hybrid (z-score fusion of both, or RRF).

The public `retrieve()` does the shared work (over-fetching, at most `max_per_paper` passages
per paper, ranks, cosine evidence for the abstention gate) and calls `_candidates()`, which each
retriever fills. Filters: `{"paper_id": [...], "source": [...]}`.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..models.embedders import embed_query
from ..index.opened import Index
from ..index.schema import passage_from
from ..index.snapshot import Snapshot
from ..settings import FUSIONS
from ..types import Passage

Filters = dict[str, list[str]]


class Retriever(Protocol):
    name: str

    def retrieve(self, query: str, k: int, max_per_paper: int = 1,
                 filters: Filters | None = None, snap: Snapshot | None = None
                 ) -> list[Passage]:
        """The top `k` passages for `query`, best first, ranks starting at 1, read through
        `snap` (the question's snapshot; the index's current one if none)."""
        ...


class _Base:
    name = "base"

    def __init__(self, index: Index, candidates: int = 50):
        self.index = index
        self.candidates = candidates
        self._qcache: tuple[str, np.ndarray] | None = None

    def query_vector(self, query: str) -> np.ndarray:
        # One (query, vector) tuple, read and replaced whole: a retriever is shared by the
        # questions of one engine, which may run in several threads at once.
        cached = self._qcache
        if cached is None or cached[0] != query:
            cached = self._qcache = (query, embed_query(self.index.embedder, query))
        return cached[1]

    def retrieve(self, query: str, k: int, max_per_paper: int = 1,
                 filters: Filters | None = None, snap: Snapshot | None = None
                 ) -> list[Passage]:
        n = max(self.candidates, k * max_per_paper * 3)
        out: list[Passage] = []
        per_paper: dict[str, int] = {}
        # One snapshot for the whole question: both sides of a hybrid read the same version of
        # each paper even if another process finishes a write in between.
        for p in self._candidates(query, n, filters, snap or self.index.snapshot()):
            if per_paper.get(p.paper_id, 0) >= max_per_paper:
                continue
            per_paper[p.paper_id] = per_paper.get(p.paper_id, 0) + 1
            out.append(p)
            if len(out) == k:
                break
        self._add_cosine(query, out)
        for rank, p in enumerate(out, start=1):
            p.rank = rank
        return out

    def _candidates(self, query: str, n: int, filters: Filters | None, snap: Snapshot
                    ) -> list[Passage]:
        raise NotImplementedError

    def _add_cosine(self, query: str, passages: list[Passage]) -> None:
        """Cosine similarity of each passage to the query: the gate's evidence."""
        missing = [p.chunk_id for p in passages if "dense" not in p.scores]
        if not missing:
            return
        vecs = self.index.collection.vectors(missing)
        q = self.query_vector(query)
        for p in passages:
            if "dense" not in p.scores and p.chunk_id in vecs:
                p.scores["dense"] = float(np.dot(vecs[p.chunk_id], q))


def _where(filters: Filters | None) -> dict | None:
    if not filters:
        return None
    clauses = [{key: {"$in": list(values)}} for key, values in filters.items() if values]
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


class DenseRetriever(_Base):
    name = "dense"

    def _candidates(self, query, n, filters, snap):
        hits = self.index.query(self.query_vector(query), n, _where(filters), snap)
        out = []
        for h in hits:
            p = passage_from(h.id, h.text, h.meta, h.similarity)
            p.scores["dense"] = h.similarity
            out.append(p)
        return out


class BM25Retriever(_Base):
    name = "bm25"

    def _candidates(self, query, n, filters, snap):
        scores = snap.bm25.scores(query)
        if scores.size == 0:
            return []
        if filters:
            mask = np.ones(len(snap.ids), dtype=bool)
            for key, values in filters.items():
                if values:
                    allowed = set(values)
                    mask &= np.array([m.get(key) in allowed for m in snap.metas])
            scores = np.where(mask, scores, 0.0)
        n = min(n, int((scores > 0).sum()))
        if n == 0:
            return []
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.lexsort((top, -scores[top]))]  # by score, ties by position: deterministic
        out = []
        for i in top:
            p = snap.passage(int(i), float(scores[i]))
            p.scores["bm25"] = float(scores[i])
            out.append(p)
        return out



class HybridRetriever(_Base):
    """Dense and BM25 candidates fused into one ranking.

    `zscore` (the default): each side's scores are standardised over its own candidates,
    z = (score - mean) / std, and a chunk's fused score is the sum of its two z-scores; a chunk
    one side did not return gets that side's lowest z (it ranked no better than the cut-off).
    Equal weights, nothing tuned. Cosines and BM25 scores live on unrelated scales, and
    standardising puts them on one while keeping how far ahead a strong match is, which rank
    fusion throws away. `rrf`: reciprocal rank fusion, score = sum of 1 / (rrf_k + rank).

    Measured with `rag eval` (nDCG@10, candidates=50): SciFact test 0.701 (rrf) -> 0.714
    (zscore); ICML 2024 corpus with the seed questions 0.772 -> 0.810; seeds 0.950 -> 0.954.
    """

    name = "hybrid"

    def __init__(self, index: Index, candidates: int = 50, rrf_k: int = 60,
                 fusion: str = "zscore"):
        super().__init__(index, candidates)
        if fusion not in FUSIONS:
            raise ValueError(f"unknown fusion {fusion!r}: choose one of {', '.join(FUSIONS)}")
        self.rrf_k = rrf_k
        self.fusion = fusion
        self.dense = DenseRetriever(index, candidates)
        self.bm25 = BM25Retriever(index, candidates)
        self.dense.query_vector = self.query_vector  # one query embedding for both sides

    def _candidates(self, query, n, filters, snap):
        fused: dict[str, Passage] = {}
        sides: list[tuple[dict[str, float], float]] = []  # (chunk id -> value, value if absent)
        for side in (self.dense, self.bm25):
            hits = side._candidates(query, n, filters, snap)
            if self.fusion == "zscore":
                values = _zscores([p.scores[side.name] for p in hits])
                absent = min(values, default=0.0)
            else:
                values = [1.0 / (self.rrf_k + rank) for rank in range(1, len(hits) + 1)]
                absent = 0.0
            sides.append(({p.chunk_id: v for p, v in zip(hits, values)}, absent))
            for p in hits:
                fused.setdefault(p.chunk_id, p).scores.update(p.scores)
        for cid, p in fused.items():
            p.score = sum(values.get(cid, absent) for values, absent in sides)
        return sorted(fused.values(), key=lambda p: (-p.score, p.chunk_id))


def _zscores(values: list[float]) -> list[float]:
    """Standardised scores; all 0 when they do not vary. Example: [3, 1] -> [1.0, -1.0]."""
    if not values:
        return []
    x = np.asarray(values, dtype=np.float64)
    std = float(x.std())
    if std == 0.0:
        return [0.0] * len(values)
    return [float(v) for v in (x - x.mean()) / std]


def make_retriever(name: str, index: Index, candidates: int = 50, rrf_k: int = 60,
                   fusion: str = "zscore") -> Retriever:
    if name == "dense":
        return DenseRetriever(index, candidates)
    if name == "bm25":
        return BM25Retriever(index, candidates)
    return HybridRetriever(index, candidates, rrf_k, fusion)
