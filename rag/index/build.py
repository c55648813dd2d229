"""Building and opening an index: chunks and vectors in Chroma, BM25 and a chunk table beside it.

Chroma is the source of truth. Every chunk carries its paper's id, content hash and chunk count,
so `build_index` can diff the corpus against what is stored: unchanged papers are skipped,
changed or incomplete ones (an interrupted run) are re-embedded, removed ones deleted. The
snapshot (chunk table + BM25) is derived from Chroma's contents and tagged with the
collection's `generation`; any process that finds it stale rebuilds it from the store, which is
also how several `rag serve` processes share one Chroma server.

Layout under the data directory (`RAG_HOME`):
    chroma/                        the embedded Chroma store
    indexes/<store>/<collection>/  manifest.json, snapshot-<generation>/ (chunks.json, bm25/)
    uploads/<corpus>/              documents users added to a corpus
    index.lock                     held while an index is written
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np

from ..ingest import corpus as corpus_mod
from .bm25 import BM25
from ..ingest.chunking import chunk_paper
from ..models.embedders import Embedder
from ..errors import (EmbedderMismatchError, IndexCorruptError, IndexLockedError,
                     IndexNotFoundError, RagError, StoreUnavailableError)
from ..settings import Settings
from .store import Collection, Store
from ..types import Chunk, Paper, Passage

Progress = Callable[[int, int], None]  # (done, total) chunks embedded
SCHEMA = 1
REFRESH_SECONDS = 1.0


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def corpus_key(corpus: str) -> str:
    """A short stable name for a corpus: the built-in name, or a path's name and hash."""
    if corpus in corpus_mod.BUILTIN:
        return corpus
    path = str(Path(corpus).expanduser().resolve())
    return f"{slug(Path(path).name)[:40]}-{hashlib.sha1(path.encode()).hexdigest()[:8]}"


def collection_name(corpus: str, embedder: Embedder) -> str:
    return f"{corpus_key(corpus)}--{slug(embedder.name)}"[:200]


def uploads_dir(settings: Settings, corpus: str) -> Path:
    return settings.home_path / "uploads" / corpus_key(corpus)


def store_for(settings: Settings) -> Store:
    return Store(path=settings.home_path / "chroma", url=settings.chroma_url)


def _index_dir(settings: Settings, name: str) -> Path:
    where = "local" if not settings.chroma_url else slug(settings.chroma_url)
    return settings.home_path / "indexes" / where / name


def paper_hash(paper: Paper, settings: Settings) -> str:
    key = json.dumps([paper.title, paper.authors, paper.url, paper.source, paper.text,
                      settings.chunk_tokens, settings.chunk_overlap], ensure_ascii=False)
    return hashlib.sha1(key.encode()).hexdigest()


def _chunk_meta(paper: Paper, chunk: Chunk, digest: str, n: int) -> dict:
    return {"paper_id": paper.id, "paper_hash": digest, "n_chunks": n, "chunk": chunk.index,
            "start": chunk.start, "end": chunk.end, "sents": json.dumps(chunk.sentences),
            "title": paper.title, "authors": paper.authors, "url": paper.url,
            "source": paper.source}


@dataclass
class IndexReport:
    corpus: str
    collection: str
    papers: int = 0
    chunks: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    embedded: int = 0  # chunks embedded in this run (0 when nothing changed)
    duplicates: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        return (f"{self.corpus}: {self.papers} papers, {self.chunks} chunks; added {self.added}, "
                f"updated {self.updated}, removed {self.removed}; embedded {self.embedded} "
                f"chunks in {self.seconds:.1f} s; {len(self.duplicates)} duplicate(s) skipped")


class _Lock:
    """An exclusive lock on the data directory, failing fast with a clear message."""

    def __init__(self, home: Path):
        from filelock import FileLock

        home.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(str(home / "index.lock"))
        self._home = home

    def __enter__(self):
        from filelock import Timeout

        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            raise IndexLockedError(f"another `rag index` is writing {self._home}; wait for it to "
                                   f"finish, then run the command again") from None
        return self

    def __exit__(self, *exc):
        self._lock.release()


SPACE_RESERVE_BYTES = 16 * 2**20


class _SpaceReserve:
    """Disk space set aside while an embedded index is written, given back if the write fails.

    Chroma applies its write log to the index files on the next read, which needs room: after
    a write stopped by a full disk, even questions would fail. Holding 16 MB in a file while
    writing, and deleting it on failure, leaves that room. If the reserve itself does not fit,
    indexing stops before writing anything."""

    def __init__(self, home: Path, store: Store):
        self.path = None if store.url else home / ".space-reserve"
        if self.path is None:
            return
        try:
            with open(self.path, "wb") as f:
                os.posix_fallocate(f.fileno(), 0, SPACE_RESERVE_BYTES)
        except OSError as exc:
            self.release()
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                self.path = None  # no fallocate on this file system: go on without a reserve
                return
            free = shutil.disk_usage(home).free / 2**20
            raise StoreUnavailableError(
                f"cannot index into {home}: the disk is full ({free:.1f} MB free; indexing keeps "
                f"{SPACE_RESERVE_BYTES // 2**20} MB in reserve while it writes): free some "
                f"space, then run `rag index` again; nothing was written") from None

    def release(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def _check_embedder(col: Collection, embedder: Embedder, name: str) -> None:
    meta = col.meta
    if meta.get("embedder") != embedder.name or int(meta.get("dim", -1)) != embedder.dim:
        raise EmbedderMismatchError(
            f"index {name!r} holds vectors of {meta.get('embedder')} ({meta.get('dim')} dims), "
            f"not of the configured {embedder.name} ({embedder.dim} dims); rebuild it with "
            f"`rag index --rebuild` or configure the embedder it was built with")


def build_index(settings: Settings, embedder: Embedder, store: Store | None = None,
                corpus: str | None = None, progress: Progress | None = None,
                rebuild: bool = False) -> IndexReport:
    """Bring the index of `corpus` up to date with its files, embedding only what changed."""
    t0 = time.perf_counter()
    corpus = corpus or settings.corpus
    loaded = corpus_mod.load_corpus(corpus, [uploads_dir(settings, corpus)])  # may raise: nothing
    store = store or store_for(settings)                                      # written yet
    name = collection_name(corpus, embedder)
    report = IndexReport(corpus, name, duplicates=loaded.duplicates)
    with _Lock(settings.home_path):
        if rebuild:
            try:
                store.delete(name)
            except IndexCorruptError as exc:
                if store.url or not getattr(exc, "unreadable", False):
                    raise
                store.set_aside()  # unreadable: start a new store, keep the old one aside
        col = store.open(name, create_meta={"embedder": embedder.name, "dim": embedder.dim,
                                            "corpus": corpus_key(corpus), "schema": SCHEMA})
        _check_embedder(col, embedder, name)
        wanted = {p.id: (p, paper_hash(p, settings)) for p in loaded.papers}
        index = Index(settings, embedder, col, name)
        fingerprint = _fingerprint(wanted)
        if _unchanged(index, fingerprint):
            todo, stale = [], []  # nothing written since the last complete run: skip the diff
        else:
            todo, stale = _diff(col, wanted, report)
        if stale or todo or col.meta.get("generation", "").startswith("dirty") \
                or "generation" not in col.meta:
            # New chunks are written before old ones are deleted, so an index whose update
            # stopped half-way (killed, disk full) still answers from what it held before;
            # "dirty" tells readers not to cache a snapshot of it, and the next run finishes it.
            reserve = _SpaceReserve(settings.home_path, store)
            try:
                col.set_meta(generation=f"dirty-{uuid.uuid4().hex}")
                rows = _chunk_rows(todo, settings)
                report.embedded = _embed_and_add(col, embedder, rows, settings, progress)
                written = {c.id for c, _ in rows}
                col.delete([cid for cid in stale if cid not in written])
                col.set_meta(generation=uuid.uuid4().hex, updated=time.time())
            except RagError as exc:
                raise type(exc)(f"{exc} (the update stopped half-way; the index still answers "
                                f"from what it held before)") from None
            finally:
                reserve.release()  # after a failure: room for Chroma to settle, and to answer
        report.papers = len(wanted)
        report.chunks = col.count()
        index.ensure_snapshot()  # build the BM25 side now, not on the first question
        try:
            index.write_manifest(corpus, report, fingerprint)
        except OSError:
            pass  # the manifest is informative only; Chroma's metadata is what is checked
    report.seconds = time.perf_counter() - t0
    return report


def _fingerprint(wanted: dict[str, tuple[Paper, str]]) -> str:
    """One hash of every paper's id and content hash (which covers the chunk settings)."""
    h = hashlib.sha1()
    for pid in sorted(wanted):
        h.update(f"{pid}\0{wanted[pid][1]}\n".encode())
    return h.hexdigest()


def _unchanged(index: "Index", fingerprint: str) -> bool:
    """Whether the collection is exactly what the last complete run of this corpus wrote: the
    same corpus fingerprint, and Chroma still at the generation (and count) recorded then.
    Every write changes the generation, so Chroma stays the judge; only the full scan of its
    metadata (seconds for 50,000 chunks) is skipped."""
    try:
        manifest = json.loads((index.dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    gen = index.generation
    return (manifest.get("fingerprint") == fingerprint and bool(gen)
            and not gen.startswith("dirty") and manifest.get("generation") == gen
            and manifest.get("chunks") == index.collection.count())


def _diff(col: Collection, wanted: dict[str, tuple[Paper, str]], report: IndexReport
          ) -> tuple[list[tuple[Paper, str]], list[str]]:
    """Papers to (re-)embed and chunk ids to delete, from what the collection holds.

    A paper is complete when its chunks of the current content hash are exactly
    `paper_id#0 .. #n-1`; chunks of another hash are leftovers of an update that stopped."""
    stored: dict[str, dict[str, list[tuple[str, int]]]] = {}
    for cid, _, meta, _ in col.iter_all():
        by_hash = stored.setdefault(meta.get("paper_id", "?"), {})
        by_hash.setdefault(meta.get("paper_hash", ""), []).append(
            (cid, int(meta.get("n_chunks", -1))))
    todo: list[tuple[Paper, str]] = []
    stale: list[str] = []
    for pid, by_hash in stored.items():
        if pid not in wanted:
            stale += [cid for rows in by_hash.values() for cid, _ in rows]
            report.removed += 1
    for pid, (paper, digest) in wanted.items():
        by_hash = stored.get(pid, {})
        have = by_hash.get(digest, [])
        complete = bool(have) and {cid for cid, _ in have} == {
            Chunk(pid, i, "", 0, 0, ()).id for i in range(have[0][1])}
        others = [cid for h, rows in by_hash.items() if h != digest or not complete
                  for cid, _ in rows]
        stale += others
        if complete:
            continue
        if by_hash:
            report.updated += 1
        else:
            report.added += 1
        todo.append((paper, digest))
    return todo, stale


def _chunk_rows(todo: list[tuple[Paper, str]], settings: Settings) -> list[tuple[Chunk, dict]]:
    rows = []
    for paper, digest in todo:
        chunks = chunk_paper(paper, settings.chunk_tokens, settings.chunk_overlap)
        rows += [(c, _chunk_meta(paper, c, digest, len(chunks))) for c in chunks]
    return rows


def _embed_and_add(col: Collection, embedder: Embedder, rows: list[tuple[Chunk, dict]],
                   settings: Settings, progress: Progress | None) -> int:
    # Length-sorted batches cut padding in the model; each batch is stored as soon as it is
    # embedded, so an interrupted run keeps its work and the next run finishes the rest.
    rows = sorted(rows, key=lambda r: len(r[0].text))
    batch = max(settings.embed_batch_size, 1) * 4
    done = 0
    if progress:
        progress(0, len(rows))
    for i in range(0, len(rows), batch):
        part = rows[i : i + batch]
        vectors = embedder.embed([c.text for c, _ in part])
        if vectors.shape != (len(part), embedder.dim):
            raise EmbedderMismatchError(f"the embedder {embedder.name} returned vectors of shape "
                                        f"{vectors.shape}, expected (n, {embedder.dim})")
        col.add([c.id for c, _ in part], vectors, [c.text for c, _ in part], [m for _, m in part])
        done += len(part)
        if progress:
            progress(done, len(rows))
    return done


# -- the query side ------------------------------------------------------------------------


# ICML 2024 abstracts run to 579 cl100k tokens (median 218): at most 4 chunks of 200 tokens.
WHOLE_PAPER_MAX_CHUNKS = 4


@dataclass
class Snapshot:
    """Every chunk of a collection (in a fixed order) with its BM25 index."""

    generation: str
    ids: list[str]
    texts: list[str]
    metas: list[dict]
    bm25: BM25
    _by_paper: dict[str, list[int]] | None = field(default=None, repr=False, compare=False)

    def passage(self, i: int, score: float) -> Passage:
        return passage_from(self.ids[i], self.texts[i], self.metas[i], score)

    def chunks_of(self, paper_id: str) -> list[int]:
        """Rows of the paper's chunks, in text order."""
        if self._by_paper is None:
            by_paper: dict[str, list[int]] = {}
            for i, meta in enumerate(self.metas):
                by_paper.setdefault(meta.get("paper_id", self.ids[i]), []).append(i)
            for rows in by_paper.values():
                rows.sort(key=lambda i: int(self.metas[i].get("start", 0)))
            self._by_paper = by_paper
        return self._by_paper.get(paper_id, [])

    def whole_paper(self, passage: Passage) -> Passage:
        """`passage` grown to all of its paper's chunks: the whole abstract, same offsets.

        Example: chunk 1 of a two-chunk abstract (chars 700-1400) -> a passage over chars
        0-1400 with every sentence of both chunks; its rank, scores and id stay. A document of
        more than WHOLE_PAPER_MAX_CHUNKS chunks (an uploaded paper, not an abstract) keeps the
        retrieved chunk, so one document cannot fill a model's context."""
        rows = self.chunks_of(passage.paper_id)
        if not 2 <= len(rows) <= WHOLE_PAPER_MAX_CHUNKS:
            return passage
        start = min(int(self.metas[i].get("start", 0)) for i in rows)
        sentences = sorted({tuple(s) for i in rows
                            for s in json.loads(self.metas[i].get("sents") or "[]")})
        text = _join(self, rows)[start:]
        return replace(passage, text=text, start=start, end=start + len(text),
                       sentences=tuple(sentences))


def passage_from(cid: str, text: str, meta: dict, score: float) -> Passage:
    sents = meta.get("sents")
    return Passage(chunk_id=cid, paper_id=meta.get("paper_id", cid), title=meta.get("title", ""),
                   text=text, score=score, start=int(meta.get("start", 0)),
                   end=int(meta.get("end", len(text))),
                   sentences=tuple(tuple(s) for s in json.loads(sents)) if sents else (),
                   authors=meta.get("authors", ""), url=meta.get("url", ""),
                   source=meta.get("source", ""))


class Index:
    """An opened index: the Chroma collection plus its snapshot, loaded lazily."""

    def __init__(self, settings: Settings, embedder: Embedder, col: Collection, name: str):
        self.settings, self.embedder, self.collection, self.name = settings, embedder, col, name
        self.dir = _index_dir(settings, name)
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
        return self.generation.startswith("dirty") and not _writer_running(
            self.settings.home_path)

    def snapshot(self) -> Snapshot:
        """The chunk table and BM25 index of the current generation, loaded or rebuilt."""
        gen = self.generation
        if self._snap is not None and self._snap.generation == gen:
            return self._snap
        folder = self.dir / f"snapshot-{gen}"
        snap = None
        if not gen.startswith("dirty") and (folder / "chunks.json").exists():
            try:
                data = json.loads((folder / "chunks.json").read_text(encoding="utf-8"))
                snap = Snapshot(gen, data["ids"], data["texts"], data["metas"],
                                BM25.load(folder / "bm25"))
            except (OSError, ValueError, KeyError, TypeError):
                snap = None  # a damaged cache is removed and rebuilt from the store below
                shutil.rmtree(folder, ignore_errors=True)
        if snap is None:
            snap = self._rebuild_snapshot(gen, folder)
        self._snap = snap
        return snap

    def ensure_snapshot(self) -> None:
        """Make sure the snapshot of the current generation is on disk (loading it if not)."""
        gen = self.generation
        folder = self.dir / f"snapshot-{gen}"
        if gen.startswith("dirty") or not ((folder / "chunks.json").exists()
                                          and (folder / "bm25" / "size").exists()):
            self.snapshot()

    def _rebuild_snapshot(self, gen: str, folder: Path) -> Snapshot:
        rows = sorted(self.collection.iter_all(include=("documents", "metadatas")),
                      key=lambda r: r[0])
        ids = [r[0] for r in rows]
        texts = [r[1] or "" for r in rows]
        metas = [r[2] for r in rows]
        snap = Snapshot(gen, ids, texts, metas, BM25.build(texts))
        if gen and not gen.startswith("dirty"):
            self._save_snapshot(snap, folder)
        return snap

    def _save_snapshot(self, snap: Snapshot, folder: Path) -> None:
        tmp = folder.with_name(f".tmp-{folder.name}-{os.getpid()}-{uuid.uuid4().hex[:6]}")
        try:
            tmp.mkdir(parents=True, exist_ok=True)
            (tmp / "chunks.json").write_text(json.dumps(
                {"ids": snap.ids, "texts": snap.texts, "metas": snap.metas}, ensure_ascii=False),
                encoding="utf-8")
            snap.bm25.save(tmp / "bm25")
            if folder.exists():
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                os.replace(tmp, folder)
            for old in self.dir.glob("snapshot-*"):
                if old.name != folder.name:
                    shutil.rmtree(old, ignore_errors=True)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)  # a cache we cannot write is rebuilt next time

    def write_manifest(self, corpus: str, report: IndexReport, fingerprint: str = "") -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        manifest = {"schema": SCHEMA, "corpus": corpus, "collection": self.name,
                    "fingerprint": fingerprint,
                    "embedder": self.embedder.name, "dim": self.embedder.dim,
                    "chunk_tokens": self.settings.chunk_tokens,
                    "chunk_overlap": self.settings.chunk_overlap, "generation": self.generation,
                    "papers": report.papers, "chunks": report.chunks, "updated": time.time()}
        tmp = self.dir / f".manifest-{os.getpid()}.json"
        tmp.write_text(json.dumps(manifest, indent=1))
        os.replace(tmp, self.dir / "manifest.json")

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
            out.append(Paper(id=pid, title=m.get("title", ""), text=_join(snap, idx),
                             authors=m.get("authors", ""), url=m.get("url", ""),
                             source=m.get("source", "")))
        return sorted(out, key=lambda p: p.title.lower())

    def paper(self, paper_id: str) -> Paper | None:
        return next((p for p in self.papers() if p.id == paper_id), None)


def _join(snap: Snapshot, idx: list[int]) -> str:
    """A paper's text from its chunks, at their character offsets (gaps become spaces)."""
    end = max(int(snap.metas[i].get("end", 0)) for i in idx)
    buf = [" "] * end
    for i in idx:
        s = int(snap.metas[i].get("start", 0))
        buf[s : s + len(snap.texts[i])] = snap.texts[i]
    return "".join(buf)


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
    _check_embedder(col, embedder, name)
    # An index whose update was interrupted is still opened: its new chunks were written
    # before any old one was deleted, so it answers from at least what it held before.
    if col.count() == 0:
        raise IndexCorruptError(f"the index of corpus {corpus!r} is empty (was its first "
                                f"`rag index` interrupted?); build it with `{hint}`")
    return Index(settings, embedder, col, name)


def _writer_running(home: Path) -> bool:
    """Whether a `rag index` holds the lock now (a dirty index is then being written, not
    abandoned)."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(home / "index.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    lock.release()
    return False
