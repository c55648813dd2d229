"""BM25 over the chunks, with bm25s, persisted on disk next to the vector store.

Tokens: `rag.text.tokenize` (lowercase alphanumeric runs, English stop words removed,
Snowball-stemmed). The index is derived data: it is rebuilt from the chunks whenever they
change (bm25s has no incremental update, and rebuilding 50,000 chunks takes about a second),
and saved so a new process only loads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from ..text import tokenize

K1, B = 0.9, 0.4  # Anserini's defaults, the usual BEIR baseline setting


class BM25:
    """A bm25s index over an ordered list of chunk texts."""

    def __init__(self, model=None, size: int = 0):
        self._model = model
        self.size = size

    @classmethod
    def build(cls, texts: Sequence[str]) -> "BM25":
        import bm25s

        if not texts:
            return cls(None, 0)
        model = bm25s.BM25(k1=K1, b=B, method="lucene")
        model.index([tokenize(t) or ["\u2205"] for t in texts], show_progress=False)
        return cls(model, len(texts))

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        if self._model is not None:
            self._model.save(str(folder), show_progress=False)
        (folder / "size").write_text(str(self.size))

    @classmethod
    def load(cls, folder: Path) -> "BM25":
        import bm25s

        size = int((folder / "size").read_text())
        if size == 0:
            return cls(None, 0)
        model = bm25s.BM25.load(str(folder), show_progress=False, verbosity=0)
        return cls(model, size)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for `query` (zeros when no query term is indexed)."""
        if self._model is None:
            return np.zeros(0, dtype=np.float32)
        vocab = self._model.vocab_dict
        terms = [t for t in tokenize(query) if t in vocab]
        if not terms:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._model.get_scores(terms), dtype=np.float32)


def idf_table(model: "BM25") -> tuple[dict[str, int], np.ndarray]:
    """(vocabulary, idf per term id) of an index, for weighting query terms elsewhere."""
    if model._model is None:
        return {}, np.zeros(0, dtype=np.float32)
    indptr = np.asarray(model._model.scores["indptr"])
    df = np.diff(indptr).astype(np.float32)
    n = float(model.size)
    return model._model.vocab_dict, np.log(1.0 + (n - df + 0.5) / (df + 0.5))
