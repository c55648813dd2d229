"""The map of the conference: every paper placed, clustered and labelled, kept with the index.

Drawn from the whole-abstract vectors (`vectors.py`): the corpus's papers are laid out
(`layout.fit`, the slow part: tens of seconds for 2,634 papers), clustered and labelled
(`clusters.py`); a user's uploads are then placed on that map (`layout.place`, a second) and
marked as theirs. Two caches, both beside the index:
- `map/layout-<key>.npz`, keyed by the corpus papers' ids and vectors and the layout's
  settings: a re-index that changes nothing, or only uploads, reuses it (even after
  `--rebuild`, which changes the generation but not a vector);
- `map/map-<generation>.json`: the whole map of an index generation, uploads placed, so a new
  process only reads it.

Example: paper_map(index).points[0] -> MapPoint(paper_id="icml2024-poster-33646",
title="Genie: ...", x=-31.4, y=28.6, cluster=3, upload=False).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..types import Cluster, MapPoint, PaperMap
from . import clusters as clusters_mod
from . import layout
from .files import write_json
from .vectors import PaperVectors, paper_vectors

if TYPE_CHECKING:
    from .opened import Index

UPLOAD = "upload"
_drawing = threading.Lock()  # two sessions opening the map at once draw it once


def paper_map(index: "Index") -> PaperMap:
    """The map of the index's current generation: held, read back, or drawn (and kept)."""
    found = paper_vectors(index)
    gen = found.generation
    held = getattr(index, "_paper_map", None)
    if held is not None and held.generation == gen:
        return held
    with _drawing:
        return _held_or_drawn(index, found)


def _held_or_drawn(index: "Index", found: PaperVectors) -> PaperMap:
    gen = found.generation
    held = getattr(index, "_paper_map", None)
    if held is not None and held.generation == gen:
        return held
    folder = Path(index.dir) / "map"
    drawn = _read_map(folder / f"map-{gen}.json", gen)
    if drawn is None:
        drawn = draw(index, found, folder)
        if gen and not gen.startswith("dirty"):
            try:
                write_json(folder / f"map-{gen}.json", _to_json(drawn))
                for old in folder.glob("map-*.json"):
                    if old.name != f"map-{gen}.json":
                        old.unlink(missing_ok=True)
            except OSError:
                pass  # a folder that cannot be written only costs drawing it again
    index._paper_map = drawn
    return drawn


def layout_key(ids: list[str], vectors: np.ndarray) -> str:
    """What the base layout depends on: the corpus papers' ids and vectors, and its settings."""
    h = hashlib.sha256(layout.VERSION.encode())
    h.update("\n".join(ids).encode())
    h.update(np.ascontiguousarray(vectors, dtype=np.float32).tobytes())
    return h.hexdigest()[:24]


def draw(index: "Index", found: PaperVectors, folder: Path) -> PaperMap:
    """The map drawn: the corpus's base layout (cached by `layout_key`), uploads placed."""
    papers = {p.id: p for p in index.papers()}
    rows = [i for i, pid in enumerate(found.ids) if pid in papers]
    base = [i for i in rows if found.origins[i] != UPLOAD]
    mine = [i for i in rows if found.origins[i] == UPLOAD]
    ids = [found.ids[i] for i in base]
    vectors = found.vectors[base]
    t0 = time.perf_counter()
    key = layout_key(ids, vectors)
    cached = _read_base(folder / f"layout-{key}.npz", ids)
    if cached is None:
        positions = layout.fit(vectors)
        assigned = clusters_mod.assign(positions)
        k = int(assigned.max()) + 1 if len(assigned) else 0
        texts = [f"{papers[p].title}. {papers[p].text}" for p in ids]
        names = clusters_mod.labels(texts, assigned, k)
        _write_base(folder / f"layout-{key}.npz", ids, positions, assigned, names)
    else:
        positions, assigned, names = cached
    placed = layout.place(vectors, positions, found.vectors[mine]) if mine else np.zeros((0, 2))
    points = [MapPoint(pid, papers[pid].title, papers[pid].authors, float(x), float(y), int(c))
              for pid, (x, y), c in zip(ids, positions, assigned)]
    points += [MapPoint(found.ids[i], papers[found.ids[i]].title, papers[found.ids[i]].authors,
                        float(x), float(y), -1, upload=True) for i, (x, y) in zip(mine, placed)]
    regions = []
    for c, name in enumerate(names):
        member = positions[assigned == c]
        if len(member):
            regions.append(Cluster(c, name, float(np.median(member[:, 0])),
                                   float(np.median(member[:, 1])), int(len(member))))
    seconds = time.perf_counter() - t0 if cached is None else 0.0
    return PaperMap(points, regions, found.generation, seconds)


def _write_base(path: Path, ids, positions, assigned, names) -> None:
    tmp = path.with_name(f".tmp-{path.name}-{os.getpid()}-{uuid.uuid4().hex[:6]}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            np.savez(fh, ids=np.array(ids), positions=positions, clusters=assigned,
                     labels=np.array(names, dtype=str))
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)


def _read_base(path: Path, ids: list[str]):
    try:
        with np.load(path, allow_pickle=False) as data:
            if [str(x) for x in data["ids"].tolist()] != ids:
                return None
            return (np.asarray(data["positions"], dtype=np.float64),
                    np.asarray(data["clusters"], dtype=int),
                    [str(x) for x in data["labels"].tolist()])
    except (OSError, ValueError, KeyError):
        return None


def _to_json(drawn: PaperMap) -> dict:
    return {"generation": drawn.generation, "version": layout.VERSION,
            "points": [asdict(p) for p in drawn.points],
            "clusters": [asdict(c) for c in drawn.clusters]}


def _read_map(path: Path, generation: str) -> PaperMap | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("generation") != generation or data.get("version") != layout.VERSION:
            return None
        return PaperMap([MapPoint(**p) for p in data["points"]],
                        [Cluster(**c) for c in data["clusters"]], generation)
    except (OSError, ValueError, KeyError, TypeError):
        return None
