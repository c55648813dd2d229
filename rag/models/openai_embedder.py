"""Embeddings from an OpenAI-compatible `/embeddings` endpoint, through `openai_api`'s client
(same endpoint, key handling, retries and error messages as the chat models)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..errors import RagError
from ..settings import Settings
from .openai_api import endpoint, explain, openai_client, request

KNOWN_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072,
              "text-embedding-ada-002": 1536}


class OpenAIEmbedder:
    """Unit vectors from an OpenAI-compatible /embeddings endpoint (model `settings.embed_model`).

    The dimension is known for OpenAI's own models; for others it is asked once, by embedding
    a single word, the first time `dim` is read.
    """

    def __init__(self, settings: Settings):
        self.settings = settings
        self.model = settings.embed_model
        self.name = f"openai-{self.model}"
        self.batch_size = settings.embed_batch_size
        self._dim: int | None = KNOWN_DIMS.get(self.model)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        rows: list[np.ndarray] = []
        client = openai_client(self.settings)
        for i in range(0, len(texts), self.batch_size):
            batch = [t if t.strip() else " " for t in texts[i:i + self.batch_size]]
            reply = request(self.settings, self.model, lambda: client.embeddings.create(
                model=self.model, input=batch), what="embedding model", error=RagError)
            rows.append(self._vectors(reply, len(batch)))
        vectors = np.concatenate(rows)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    def _vectors(self, reply: Any, expected: int) -> np.ndarray:
        try:
            data = sorted(reply.data, key=lambda d: d.index)
            vectors = np.asarray([d.embedding for d in data], dtype=np.float32)
        except (AttributeError, TypeError, ValueError) as exc:
            raise RagError(str(explain(exc, self.settings, self.model, "embedding model"))
                           ) from None
        if vectors.ndim != 2 or vectors.shape[0] != expected:
            raise RagError(f"{endpoint()} returned {vectors.shape[0] if vectors.ndim else 0} "
                                 f"embeddings for {expected} texts")
        return vectors
