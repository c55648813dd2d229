"""The shipped embedding cache: chunk vectors computed once, looked up before anything is embedded.

A vector is keyed by (embedder name, sha256 of the exact text embedded), so a chunk whose text
changed (other chunk settings, an edited abstract or title, another `indexed_text` format)
simply misses and is embedded as usual; a vector is never used for a text it was not computed
from. One file per embedder, package data of `rag.seeds` beside the corpora it covers:
`embeddings-<slug of the embedder name>.npz` with `embedder` (the name), `keys` (hex sha256,
S64) and `vectors` (float32, unit length, one row per key). `cache_build.py` writes it.

Example: `shipped("all-MiniLM-L6-v2").lookup(["Genie: ... . We introduce Genie, ..."])`
-> [array of 384 floats] for a text of the shipped corpora, [None] for any other text.
It does not handle embedders that are not deterministic (their vectors would go stale), and
it is read-only at run time: `build_index` stores new vectors in Chroma, not here.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Sequence

import numpy as np

from ..text import slug


def text_key(text: str) -> str:
    """The cache key of an embedded text: the hex sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def cache_file(folder: Path, embedder: str) -> Path:
    return Path(folder) / f"embeddings-{slug(embedder)}.npz"


class EmbeddingCache:
    """Vectors of one embedder, by the sha256 of the text they were computed from."""

    def __init__(self, embedder: str, keys: Sequence[str], vectors: np.ndarray):
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(keys) != len(vectors):
            raise ValueError(f"{len(keys)} keys for vectors of shape {vectors.shape}")
        self.embedder = embedder
        self.keys = list(keys)
        self.vectors = vectors
        self._row = {k: i for i, k in enumerate(self.keys)}

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def get(self, text: str) -> np.ndarray | None:
        row = self._row.get(text_key(text))
        return None if row is None else self.vectors[row]

    def lookup(self, texts: Sequence[str]) -> list[np.ndarray | None]:
        """The cached vector of each text, or None where it misses."""
        return [self.get(t) for t in texts]

    @classmethod
    def load(cls, path: Path) -> "EmbeddingCache":
        with np.load(path, allow_pickle=False) as data:
            keys = [k.decode("ascii") for k in data["keys"].tolist()]
            return cls(str(data["embedder"]), keys, data["vectors"])

    def save(self, path: Path) -> None:
        """Write atomically; rows sorted by key, so the same vectors make the same file."""
        order = sorted(range(len(self.keys)), key=lambda i: self.keys[i])
        keys = np.array([self.keys[i].encode("ascii") for i in order], dtype="S64")
        tmp = Path(path).with_name(f".tmp-{Path(path).name}")
        with open(tmp, "wb") as fh:
            np.savez(fh, embedder=np.array(self.embedder), keys=keys,
                     vectors=self.vectors[order].astype(np.float32))
        tmp.replace(path)


def shipped_folder() -> Path:
    """Where the shipped cache files live: the package data of `rag.seeds`."""
    from importlib.resources import files

    return Path(str(files("rag.seeds")))


@functools.lru_cache(maxsize=4)
def shipped(embedder: str) -> EmbeddingCache | None:
    """The shipped cache of `embedder`, or None when there is none (or it cannot be read: then
    every chunk is simply embedded)."""
    path = cache_file(shipped_folder(), embedder)
    try:
        cache = EmbeddingCache.load(path)
    except (OSError, ValueError, KeyError):
        return None
    return cache if cache.embedder == embedder else None
