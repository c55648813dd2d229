"""Building an index: bring the Chroma collection of a corpus up to date with its files.

Chroma is the source of truth. Every chunk carries its paper's id, content hash and chunk count
(`schema.py`), so `build_index` can diff the corpus against what is stored: unchanged papers are
skipped, changed or incomplete ones (an interrupted run) are re-embedded, removed ones deleted;
documents users uploaded to the corpus are kept (`sources.py`: only `rag remove` deletes them).
The snapshot (chunk table + BM25, `snapshot.py`) is derived from Chroma's contents and tagged
with the collection's `generation`; any process that finds it stale rebuilds it from the store,
which is also how several `rag serve` processes share one Chroma server. A manifest beside the
snapshot records the last complete run (`manifest.py`), so an unchanged corpus skips the diff. Before anything
is embedded, each chunk's text is looked up in the shipped embedding cache (`cache.py`): only
the misses go to the model, so the shipped corpora index without embedding anything.
"""

from __future__ import annotations

import time
import uuid
from typing import Callable, Sequence

import numpy as np

from ..errors import EmbedderMismatchError, IndexCorruptError, RagError
from ..ingest import corpus as corpus_mod
from ..ingest.chunking import chunk_paper
from ..models.embedders import Embedder
from ..settings import Settings
from ..types import Chunk, Paper
from .cache import EmbeddingCache, shipped
from .collection import Collection
from .locks import SpaceReserve, guarded, writer_lock
from .manifest import IndexReport, fingerprint, unchanged, write_manifest
from .naming import collection_name, index_dir
from .opened import Index
from .schema import SCHEMA, check_embedder, chunk_meta, indexed_text, paper_hash
from .sources import (CORPUS, UPLOAD, clear_pending, diff, load_pending, recover_uploads,
                      removed_uploads, save_pending, tombstone_meta)
from .store import Store, store_for

Progress = Callable[[int, int], None]  # (done, total) chunks embedded


def build_index(settings: Settings, embedder: Embedder, store: Store | None = None,
                corpus: str | None = None, progress: Progress | None = None,
                rebuild: bool = False, cache: EmbeddingCache | bool = True,
                uploads: Sequence[Paper] = ()) -> IndexReport:
    """Bring the index of `corpus` up to date with its files, embedding only what changed.

    `uploads`: documents to add to it as uploads (`rag.documents`); uploads already in the
    store are kept (`sources.py`), and recovered from it by `rebuild`. `cache`: True looks
    vectors up in the shipped cache of `embedder.name` first, False embeds every chunk (to time
    the model), or an `EmbeddingCache` to use instead."""
    t0 = time.perf_counter()
    corpus = corpus or settings.corpus
    # This machine's uploads go in too (those already in the store are kept as they are),
    # unless removed with `rag remove` since, from any machine.
    loaded = corpus_mod.load_corpus(corpus, [corpus_mod.uploads_dir(settings, corpus)])
    store = store or store_for(settings)  # a bad file raised above: nothing written yet
    name = collection_name(corpus, embedder)
    report = IndexReport(corpus, name, duplicates=loaded.duplicates, rejected=loaded.rejected)
    uploads, asked, carried = list(uploads), {p.id for p in uploads}, set()
    folder = index_dir(settings, name)
    with writer_lock(settings) as lock:
        kept, carried = load_pending(folder)  # from a rebuild that was killed half-way
        if rebuild:
            more, gone = recover_uploads(store, name)
            kept, carried = kept + [p for p in more if p.id not in {k.id for k in kept}], \
                carried | gone
            save_pending(folder, kept, carried)  # before anything is dropped
            try:
                store.delete(name)
            except IndexCorruptError as exc:
                if store.url or not getattr(exc, "unreadable", False):
                    raise
                store.set_aside()  # unreadable: start a new store, keep the old one aside
        col = store.open(name, create_meta={"embedder": embedder.name, "dim": embedder.dim,
                                            "corpus": corpus_mod.corpus_key(corpus), "schema": SCHEMA})
        check_embedder(col, embedder, name)
        uploads += kept
        held = removed_uploads(col)
        removed = held | carried
        uploads += [p for p in loaded.papers if p.id in loaded.extra and p.id not in removed]
        wanted = {p.id: (p, paper_hash(p, settings)) for p in loaded.papers
                  if p.id not in loaded.extra}
        new_uploads = {p.id for p in uploads if p.id not in wanted}
        wanted.update({p.id: (p, paper_hash(p, settings)) for p in uploads if p.id in new_uploads})
        tombstones = removed - asked  # an upload removed, then added again, is back
        index = Index(settings, embedder, col, name)
        digest = fingerprint(wanted)
        manifest = unchanged(index, digest)
        if manifest is not None:
            todo, stale = [], []  # nothing written since the last complete run: skip the diff
            report.uploads = int(manifest.get("uploads", 0))
        else:
            todo, stale = diff(col, wanted, report, loaded.extra)
        if stale or todo or col.meta.get("generation", "").startswith("dirty") \
                or "generation" not in col.meta or tombstones != held:
            # New chunks are written before old ones are deleted, each paper's in one batch, so
            # the store always holds one complete version of every paper and an index whose
            # update stopped half-way (killed, disk full) still answers; "dirty" tells readers
            # to keep answering from the last complete generation, and the next run finishes it.
            reserve = SpaceReserve(settings.home_path, store)
            try:
                col.mark_dirty()
                rows = _chunk_rows(todo, settings, new_uploads)
                if cache is True:
                    cache = shipped(embedder.name)
                report.embedded, report.cached = _embed_and_add(
                    col, embedder, rows, settings, guarded(progress, lock), cache or None)
                lock.check()  # still ours before anything is deleted
                written = {c.id for c, _ in rows}
                col.delete([cid for cid in stale if cid not in written])
                col.set_meta(generation=uuid.uuid4().hex, updated=time.time(),
                             **tombstone_meta(tombstones))
            except RagError as exc:
                raise type(exc)(f"{exc} (the update stopped half-way; the index still answers "
                                f"from what it held before)") from None
            finally:
                reserve.release()  # after a failure: room for Chroma to settle, and to answer
        report.papers = len(wanted) + report.uploads
        report.chunks = col.count()
        index.ensure_snapshot()  # build the BM25 side now, not on the first question
        clear_pending(folder)
        try:
            write_manifest(index, corpus, report, digest)
        except OSError:
            pass  # the manifest is informative only; Chroma's metadata is what is checked
    report.seconds = time.perf_counter() - t0
    return report


def _chunk_rows(todo: list[tuple[Paper, str]], settings: Settings, uploads: set[str]
                ) -> list[tuple[Chunk, dict]]:
    rows = []
    for paper, digest in todo:
        chunks = chunk_paper(paper, settings.chunk_tokens, settings.chunk_overlap)
        kind = UPLOAD if paper.id in uploads else CORPUS
        rows += [(c, chunk_meta(paper, c, digest, len(chunks), kind)) for c in chunks]
    return rows


def _embed_and_add(col: Collection, embedder: Embedder, rows: list[tuple[Chunk, dict]],
                   settings: Settings, progress: Progress | None,
                   cache: EmbeddingCache | None) -> tuple[int, int]:
    """Store every row with its vector: (chunks embedded by the model, chunks from the cache).

    What is embedded is `indexed_text` (title and chunk); what Chroma stores is the chunk."""
    texts = {c.id: indexed_text(m.get("title", ""), c.text) for c, m in rows}
    found = {}
    if cache is not None and (cache.embedder, cache.dim) == (embedder.name, embedder.dim):
        found = {cid: v for cid, v in zip(texts, cache.lookup(list(texts.values())))
                 if v is not None}
    # Length-sorted batches cut padding in the model; each batch is stored as soon as it is
    # embedded, so an interrupted run keeps its work and the next run finishes the rest. A
    # paper's chunks are stored in one call (`_batches`; a paper the cache covers in part goes
    # with the misses): a reader building its snapshot mid-update finds each paper whole.
    rows = sorted(rows, key=lambda r: len(texts[r[0].id]))
    partial = {c.paper_id for c, _ in rows if c.id not in found}
    hits = [r for r in rows if r[0].paper_id not in partial]
    misses = [r for r in rows if r[0].paper_id in partial]
    batch = max(settings.embed_batch_size, 1) * 4
    done = embedded = 0
    if progress:
        progress(0, len(rows))
    for part_rows, size in ((hits, 512), (misses, batch)):
        for part in _batches(part_rows, size):
            new = [c for c, _ in part if c.id not in found]
            if new:
                fresh = embedder.embed([texts[c.id] for c in new])
                if fresh.shape != (len(new), embedder.dim):
                    raise EmbedderMismatchError(
                        f"the embedder {embedder.name} returned vectors of shape {fresh.shape}, "
                        f"expected (n, {embedder.dim})")
                found.update(zip((c.id for c in new), fresh))
                embedded += len(new)
            vectors = np.stack([found[c.id] for c, _ in part])
            col.add([c.id for c, _ in part], vectors, [c.text for c, _ in part],
                    [m for _, m in part])
            done += len(part)
            if progress:
                progress(done, len(rows))
    return embedded, len(rows) - embedded


def _batches(rows: list[tuple[Chunk, dict]], size: int) -> list[list[tuple[Chunk, dict]]]:
    """`rows` cut into batches of about `size`, in order, never splitting a paper's chunks (a
    paper is moved whole to the batch where its first chunk falls)."""
    by_paper: dict[str, list[tuple[Chunk, dict]]] = {}
    for r in rows:
        by_paper.setdefault(r[0].paper_id, []).append(r)
    out: list[list[tuple[Chunk, dict]]] = [[]]
    for group in by_paper.values():
        if len(out[-1]) >= size:
            out.append([])
        out[-1] += group
    return [b for b in out if b]
