"""An opened index: the Chroma collection of a corpus, with its snapshot loaded lazily.

`open_index` finds the collection of a corpus and embedder, or says how to build it;
`Index.snapshot()` is the chunk table and BM25 index of the collection's current generation,
fetched again when another process changed the collection (through a Chroma server), and
`Index.query()` the dense side seen through it: while another process writes, a question gets
the old or the new version of each paper, never chunks of both.
"""

from __future__ import annotations

import time

from ..errors import IndexCorruptError, IndexNotFoundError, RagError
from ..ingest import corpus as corpus_mod
from ..models.embedders import Embedder
from ..settings import Settings
from ..types import Paper
from .collection import Collection, Hit
from .locks import writer_running
from .naming import collection_name, index_dir
from .schema import check_embedder
from .snapshot import Snapshot, build_snapshot, join_chunks, load_snapshot, snapshot_dir
from .store import Store, store_for

REFRESH_SECONDS = 1.0


class Index:
    """An opened index: the Chroma collection plus its snapshot, loaded lazily."""

    def __init__(self, settings: Settings, embedder: Embedder, col: Collection, name: str):
        self.settings, self.embedder, self.collection, self.name = settings, embedder, col, name
        self.dir = index_dir(settings, name)
        self._snap: Snapshot | None = None
        self._checked = time.monotonic()

    @property
    def generation(self) -> str:
        """The collection's generation, fetched again at most every REFRESH_SECONDS, so a
        change written by another process (through a Chroma server) is seen."""
        if time.monotonic() - self._checked >= REFRESH_SECONDS:
            self.collection.refresh()
            self._checked = time.monotonic()
        return str(self.collection.meta.get("generation", ""))

    @property
    def interrupted(self) -> bool:
        """Whether the last update of this index stopped half-way (run `rag index` again)."""
        return self.generation.startswith("dirty") and not writer_running(self.settings)

    def snapshot(self) -> Snapshot:
        """The chunk table and BM25 index of the current generation, loaded or rebuilt.

        While a writer is at work (a "dirty" generation), the snapshot of the last complete
        generation (`clean`) if this process holds it or finds it saved, else one built from
        the store with one complete version of each paper: never a mix of two versions."""
        gen = self.generation
        if self._snap is not None and self._snap.generation == gen:
            return self._snap
        if gen.startswith("dirty"):
            clean = str(self.collection.meta.get("clean", ""))
            if clean and self._snap is not None and self._snap.generation == clean:
                return self._snap
            snap = load_snapshot(self.dir, clean) if clean else None
            if snap is not None:
                self._snap = snap
                return snap
        snap = load_snapshot(self.dir, gen)
        if snap is None:
            snap = build_snapshot(self.collection, gen, self.dir)
        self._snap = snap
        return snap

    def query(self, vector, n: int, where: dict | None = None, snap: Snapshot | None = None
              ) -> list[Hit]:
        """The store's `n` nearest chunks, seen through `snap` (the current snapshot if none;
        `Snapshot.consistent`): the same version of each paper as the BM25 side that reads
        that snapshot."""
        return (snap or self.snapshot()).consistent(self.collection.query(vector, n, where))

    def ensure_snapshot(self) -> None:
        """Make sure the snapshot of the current generation is on disk (loading it if not)."""
        gen = self.generation
        folder = snapshot_dir(self.dir, gen)
        if gen.startswith("dirty") or not ((folder / "chunks.json").exists()
                                          and (folder / "bm25" / "size").exists()):
            self.snapshot()

    def papers(self) -> list[Paper]:
        """Every indexed paper, its text put back together from its chunks."""
        snap = self.snapshot()
        by_paper: dict[str, list[int]] = {}
        for i, meta in enumerate(snap.metas):
            by_paper.setdefault(meta.get("paper_id", snap.ids[i]), []).append(i)
        out = []
        for pid, idx in by_paper.items():
            idx.sort(key=lambda i: snap.metas[i].get("chunk", 0))
            m = snap.metas[idx[0]]
            out.append(Paper(id=pid, title=m.get("title", ""), text=join_chunks(snap, idx),
                             authors=m.get("authors", ""), url=m.get("url", ""),
                             source=m.get("source", "")))
        return sorted(out, key=lambda p: p.title.lower())

    def paper(self, paper_id: str) -> Paper | None:
        return next((p for p in self.papers() if p.id == paper_id), None)


def open_index(settings: Settings, embedder: Embedder, store: Store | None = None,
               corpus: str | None = None) -> Index:
    """The index of `corpus` for `embedder`; a clear error saying how to build it if missing."""
    corpus = corpus or settings.corpus
    store = store or store_for(settings)
    name = collection_name(corpus, embedder)
    try:
        col = store.open(name)
    except RagError:
        raise
    hint = "rag index" + ("" if corpus == "seeds" else f" --corpus {corpus}")
    if col is None:
        if corpus not in corpus_mod.BUILTIN:
            corpus_mod.corpus_path(corpus)  # an unknown name or a missing path: say so instead
        raise IndexNotFoundError(f"no index of corpus {corpus!r} for embedder {embedder.name} "
                                 f"in {store.location} store under {settings.home_path}; build it "
                                 f"with `{hint}`")
    check_embedder(col, embedder, name)
    # An index whose update was interrupted is still opened: its new chunks were written
    # before any old one was deleted, so it answers from at least what it held before.
    if col.count() == 0:
        raise IndexCorruptError(f"the index of corpus {corpus!r} is empty (was its first "
                                f"`rag index` interrupted?); build it with `{hint}`")
    return Index(settings, embedder, col, name)
