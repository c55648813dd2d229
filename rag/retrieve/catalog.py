"""The catalog of an opened index: each paper's metadata, its author index and title index.

Built from the index's snapshot (the chunk table), once per generation of the index and kept
per process, so questions that name people or titles cost a dictionary lookup, not a pass over
the corpus. `passage(paper_id)` is a paper's whole abstract as a `Passage`, for answers that
cite papers found in the metadata rather than by retrieval.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ..index.opened import Index
from ..index.snapshot import Snapshot, join_chunks
from ..types import Passage
from .authors import AuthorIndex
from .titles import TitleIndex

_lock = threading.Lock()
_cache: dict[tuple[str, str], "Catalog"] = {}


@dataclass
class Catalog:
    snapshot: Snapshot
    titles_of: dict[str, str] = field(default_factory=dict)  # paper id -> title
    authors_of: dict[str, str] = field(default_factory=dict)  # paper id -> author list
    _titles: TitleIndex | None = None
    _authors: AuthorIndex | None = None

    def __post_init__(self) -> None:
        snap = self.snapshot
        for i, meta in enumerate(snap.metas):
            pid = meta.get("paper_id", snap.ids[i])
            self.titles_of.setdefault(pid, meta.get("title", ""))
            self.authors_of.setdefault(pid, meta.get("authors", ""))

    @property
    def authors(self) -> AuthorIndex:
        if self._authors is None:
            self._authors = AuthorIndex(self.authors_of)
        return self._authors

    @property
    def titles(self) -> TitleIndex:
        if self._titles is None:
            self._titles = TitleIndex({pid: (title, self.text(pid))
                                       for pid, title in self.titles_of.items()})
        return self._titles

    def text(self, paper_id: str) -> str:
        rows = self.snapshot.chunks_of(paper_id)
        return join_chunks(self.snapshot, rows) if rows else ""

    def passage(self, paper_id: str, score: float = 0.0) -> Passage | None:
        """The paper's whole abstract as a passage (its first chunk, grown to the paper)."""
        rows = self.snapshot.chunks_of(paper_id)
        if not rows:
            return None
        return self.snapshot.whole_paper(self.snapshot.passage(rows[0], score))


def catalog(index: Index, snap: Snapshot | None = None) -> Catalog:
    """The catalog of `index` seen through `snap` (the question's snapshot; the current one
    if none), built on first use, then kept."""
    snap = snap or index.snapshot()
    key = (str(index.dir), snap.generation)
    with _lock:
        cat = _cache.get(key)
        if cat is None or cat.snapshot is not snap:
            for old in [k for k in _cache if k[0] == key[0]]:
                del _cache[old]
            cat = _cache[key] = Catalog(snap)
        return cat
