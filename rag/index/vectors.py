"""Whole-paper vectors: one unit vector per paper, the mean of its chunk vectors.

A paper's chunks are embedded one by one (title and chunk, `schema.indexed_text`); the
normalised mean of their vectors stands for the whole abstract, which is what "papers like this
one" and the map of the conference compare. They are read from the store once per index
generation, through the snapshot (so a write under way mixes no versions of a paper), and kept
beside it as `paper-vectors-<generation>.npz`, so a new process only loads the file.

Example: a paper of two chunks with vectors a and b -> (a + b) / |a + b|; a paper of one chunk
-> its chunk's vector. It does not re-embed anything: a paper missing from the store (an
interrupted upload) is simply absent.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .opened import Index


@dataclass
class PaperVectors:
    """Every paper's id, origin ("corpus" or "upload") and unit vector, rows in id order."""

    generation: str
    ids: list[str]
    origins: list[str]
    vectors: np.ndarray  # float32, (papers, dim), unit rows
    _rows: dict[str, int] | None = field(default=None, repr=False, compare=False)

    def row(self, paper_id: str) -> int | None:
        if self._rows is None:
            self._rows = {pid: i for i, pid in enumerate(self.ids)}
        return self._rows.get(paper_id)


def paper_vectors(index: "Index") -> PaperVectors:
    """The whole-paper vectors of the index's current snapshot: held, loaded or computed."""
    snap = index.snapshot()
    held = getattr(index, "_paper_vectors", None)
    if held is not None and held.generation == snap.generation:
        return held
    path = vectors_file(index.dir, snap.generation)
    found = _load(path, snap.generation)
    if found is None:
        found = _compute(index, snap)
        if snap.generation and not snap.generation.startswith("dirty"):
            _save(found, path)
    index._paper_vectors = found
    return found


def vectors_file(folder: Path, generation: str) -> Path:
    return Path(folder) / f"paper-vectors-{generation}.npz"


def _compute(index: "Index", snap) -> PaperVectors:
    """Mean of each paper's chunk vectors, of the version the snapshot holds."""
    wanted = {cid: snap.metas[i].get("paper_hash") for i, cid in enumerate(snap.ids)}
    sums: dict[str, np.ndarray] = {}
    origins: dict[str, str] = {}
    for cid, _, meta, vector in index.collection.iter_all(include=("metadatas", "embeddings")):
        if vector is None or cid not in wanted or wanted[cid] != meta.get("paper_hash"):
            continue
        pid = meta.get("paper_id", cid)
        sums[pid] = sums.get(pid, 0) + vector.astype(np.float64)
        origins[pid] = str(meta.get("origin", "corpus"))
    ids = sorted(sums)
    dim = int(index.embedder.dim)
    matrix = np.stack([sums[p] for p in ids]) if ids else np.zeros((0, dim))
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = (matrix / np.maximum(norms, 1e-12)).astype(np.float32)
    return PaperVectors(snap.generation, ids, [origins[p] for p in ids], matrix)


def _load(path: Path, generation: str) -> PaperVectors | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["generation"]) != generation:
                return None
            return PaperVectors(generation, [str(x) for x in data["ids"].tolist()],
                                [str(x) for x in data["origins"].tolist()],
                                np.asarray(data["vectors"], dtype=np.float32))
    except (OSError, ValueError, KeyError):
        return None


def _save(found: PaperVectors, path: Path) -> None:
    """Atomically; older generations' files are removed (a new process recomputes in a
    second or two if it needed one). A folder that cannot be written only costs a recompute."""
    tmp = path.with_name(f".tmp-{path.name}-{os.getpid()}-{uuid.uuid4().hex[:6]}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            np.savez(fh, generation=np.array(found.generation), ids=np.array(found.ids),
                     origins=np.array(found.origins), vectors=found.vectors)
        os.replace(tmp, path)
        for old in path.parent.glob("paper-vectors-*.npz"):
            if old.name != path.name:
                old.unlink(missing_ok=True)
    except OSError:
        tmp.unlink(missing_ok=True)
