"""Build the shipped embedding cache: `python -m rag.index.cache_build [--from-store DIR]`.

Chunks the built-in corpora (seeds and icml2024) with the default chunk settings and writes the
MiniLM vector of every chunk's `indexed_text` to `seeds/embeddings-all-minilm-l6-v2.npz`
(package data of `rag.seeds`; `cache.py` reads it). Run it again after editing a corpus, the
chunker or `indexed_text`: texts that did not change keep their vectors, the rest are embedded
(about 4,500 chunks: 2-3 minutes on 2 idle cores from scratch).

`--from-store DIR` also takes vectors from the Chroma store of an existing data directory
(`DIR/chroma`) whose index embedded the same `indexed_text` with the same model. They are used
only after a sample of them, re-embedded now, agrees (cosine > 0.9999); it is a shortcut, the
result is the same file.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

from ..ingest.chunking import chunk_paper
from ..ingest.corpus import load_corpus
from ..models.embedders import MiniLM
from ..settings import CORPORA_BUILTIN, Settings
from .cache import EmbeddingCache, cache_file, shipped_folder, text_key
from .schema import indexed_text

AGREE = 0.9999


def wanted_texts(corpora=CORPORA_BUILTIN) -> dict[str, str]:
    """Every chunk text the built-in corpora embed with the default chunk settings, by key."""
    defaults = Settings()
    out: dict[str, str] = {}
    for corpus in corpora:
        for paper in load_corpus(corpus).papers:
            for chunk in chunk_paper(paper, defaults.chunk_tokens, defaults.chunk_overlap):
                text = indexed_text(paper.title, chunk.text)
                out[text_key(text)] = text
    return out


def from_store(home: Path, embedder: MiniLM, wanted: dict[str, str]) -> dict[str, np.ndarray]:
    """Vectors of wanted texts found in the Chroma store under `home`, if a sample agrees."""
    from .store import Store

    store = Store(path=Path(home) / "chroma")
    found: dict[str, np.ndarray] = {}
    for name in store.names():
        col = store.open(name)
        if col is None or col.meta.get("embedder") != embedder.name:
            continue
        for _, doc, meta, vec in col.iter_all(include=("documents", "metadatas", "embeddings")):
            key = text_key(indexed_text(meta.get("title", ""), doc or ""))
            if key in wanted and vec is not None:
                found[key] = vec
    if found and not agrees(embedder, {k: wanted[k] for k in found}, found):
        print(f"the vectors in {home} are not of these texts: ignored", file=sys.stderr)
        return {}
    return found


def agrees(embedder: MiniLM, texts: dict[str, str], vectors: dict[str, np.ndarray],
           n: int = 20, seed: int = 0) -> bool:
    """Whether a random sample of `vectors`, re-embedded from `texts`, agrees with itself."""
    sample = random.Random(seed).sample(sorted(vectors), min(n, len(vectors)))
    fresh = embedder.embed([texts[k] for k in sample])
    return all(float(np.dot(fresh[i], vectors[k])) > AGREE for i, k in enumerate(sample))


def build(folder: Path, store_home: Path | None = None, embedder: MiniLM | None = None
          ) -> tuple[int, int]:
    """Write the cache file of MiniLM into `folder`: (vectors reused, vectors embedded)."""
    embedder = embedder or MiniLM()
    wanted = wanted_texts()
    vectors: dict[str, np.ndarray] = {}
    path = cache_file(folder, embedder.name)
    if path.exists():
        old = EmbeddingCache.load(path)
        vectors = {k: old.vectors[i] for i, k in enumerate(old.keys) if k in wanted}
    if store_home is not None:
        vectors.update({k: v for k, v in from_store(store_home, embedder, wanted).items()
                        if k not in vectors})
    reused = len(vectors)
    missing = sorted((k for k in wanted if k not in vectors), key=lambda k: len(wanted[k]))
    t0 = time.perf_counter()
    for i in range(0, len(missing), 256):
        part = missing[i : i + 256]
        vectors.update(zip(part, embedder.embed([wanted[k] for k in part])))
        print(f"embedded {i + len(part)}/{len(missing)} ({time.perf_counter() - t0:.0f} s)",
              file=sys.stderr)
    keys = sorted(wanted)
    EmbeddingCache(embedder.name, keys, np.stack([vectors[k] for k in keys])).save(path)
    return reused, len(missing)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag.index.cache_build",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--from-store", type=Path, default=None, metavar="DIR",
                        help="reuse the vectors of the Chroma store in DIR/chroma (checked)")
    parser.add_argument("--out", type=Path, default=None, metavar="FOLDER",
                        help="where to write the file (default: the seeds package folder)")
    args = parser.parse_args(argv)
    folder = args.out or shipped_folder()
    reused, embedded = build(folder, args.from_store)
    print(f"{cache_file(folder, MiniLM.name)}: {reused + embedded} vectors "
          f"({reused} reused, {embedded} embedded)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
