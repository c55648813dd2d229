"""The chunk table and BM25 index of a collection, derived from Chroma and saved beside it.

A `Snapshot` holds every chunk of a collection (in a fixed order) with its BM25 index, tagged
with the collection's `generation` (a value every write changes). It is saved under
`index_dir/snapshot-<generation>/` (chunks.json, bm25/), so a new process only loads it, and
rebuilt from the store when the generation moved, the saved copy is damaged or was indexed
with another `EMBED_FORMAT`. Built from the store, it keeps one complete version of each paper
(`whole_versions`), so a snapshot taken while another process writes mixes no versions. BM25
indexes `indexed_text` (title and chunk, as embedded); the chunk table keeps the chunk text
alone, which every offset refers to.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..types import Passage
from .bm25 import BM25, idf_table
from .collection import Collection
from .schema import EMBED_FORMAT, indexed_text, passage_from

# A snapshot of another generation is kept this long after it was saved, for the processes
# still loading it (each holds what it loaded in memory: a few seconds would do).
KEEP_SECONDS = 600.0
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
    _rows: dict[str, int] | None = field(default=None, repr=False, compare=False)
    _idf: tuple | None = field(default=None, repr=False, compare=False)

    def idf(self) -> tuple:
        """(vocabulary, idf per term) of this snapshot's BM25 side: how rare each word is.
        Computed once per snapshot, so every stage of every question reading it shares it."""
        if self._idf is None:
            self._idf = idf_table(self.bm25)
        return self._idf

    def row(self, chunk_id: str) -> int | None:
        if self._rows is None:
            self._rows = {cid: i for i, cid in enumerate(self.ids)}
        return self._rows.get(chunk_id)

    def consistent(self, hits: list) -> list:
        """Hits of a query to the store (`Collection.query`), seen through this snapshot, so
        that a question asked while another process writes gets one version of each paper:
        a chunk the snapshot lacks is dropped, one the store holds in another version of its
        paper is given the snapshot's text and metadata (its similarity, of the other
        version's vector, is kept)."""
        out = []
        for h in hits:
            i = self.row(h.id)
            if i is None:
                continue
            if self.metas[i].get("paper_hash") != h.meta.get("paper_hash"):
                h = replace(h, text=self.texts[i], meta=self.metas[i])
            out.append(h)
        return out

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
        text = join_chunks(self, rows)[start:]
        return replace(passage, text=text, start=start, end=start + len(text),
                       sentences=tuple(sentences))


def join_chunks(snap: Snapshot, idx: list[int]) -> str:
    """A paper's text from its chunks, at their character offsets (gaps become spaces)."""
    end = max(int(snap.metas[i].get("end", 0)) for i in idx)
    buf = [" "] * end
    for i in idx:
        s = int(snap.metas[i].get("start", 0))
        buf[s : s + len(snap.texts[i])] = snap.texts[i]
    return "".join(buf)


def snapshot_dir(folder: Path, generation: str) -> Path:
    """Where the snapshot of `generation` is saved, inside an index's folder."""
    return folder / f"snapshot-{generation}"


def load_snapshot(folder: Path, generation: str) -> Snapshot | None:
    """The saved snapshot of `generation`, or None (none saved, the index is being written, or
    the saved copy is damaged: then it is removed, to be rebuilt from the store)."""
    where = snapshot_dir(folder, generation)
    if generation.startswith("dirty") or not (where / "chunks.json").exists():
        return None
    try:
        data = json.loads((where / "chunks.json").read_text(encoding="utf-8"))
        if data.get("format", 1) != EMBED_FORMAT:
            raise ValueError("BM25 indexed another text format")
        return Snapshot(generation, data["ids"], data["texts"], data["metas"],
                        BM25.load(where / "bm25"))
    except (OSError, ValueError, KeyError, TypeError):
        shutil.rmtree(where, ignore_errors=True)
        return None


def build_snapshot(collection: Collection, generation: str, folder: Path) -> Snapshot:
    """The snapshot rebuilt from every chunk in the store; saved unless the index is being
    written (a "dirty" generation)."""
    rows = whole_versions(collection.iter_all(include=("documents", "metadatas")))
    ids = [r[0] for r in rows]
    texts = [r[1] or "" for r in rows]
    metas = [r[2] for r in rows]
    bm25 = BM25.build([indexed_text(m.get("title", ""), t) for t, m in zip(texts, metas)])
    snap = Snapshot(generation, ids, texts, metas, bm25)
    if generation and not generation.startswith("dirty"):
        save_snapshot(snap, folder)
    return snap


def whole_versions(rows) -> list[tuple]:
    """The store's rows (id, document, metadata, ...), sorted by id, keeping of each paper only
    a complete version: chunks of one content hash that are exactly `paper_id#0 .. #n-1`. Left
    out: chunks of a version being replaced or removed (a writer stopped or still at work),
    and a paper none of whose versions is complete (an interrupted upload).

    Example: P#0 and P#1 of hash h2 (n_chunks 2) and P#2 of hash h1 (n_chunks 3) -> P#0, P#1."""
    by_paper: dict[str, dict[str, list[tuple]]] = {}
    for r in rows:
        meta = r[2]
        by_paper.setdefault(meta.get("paper_id", r[0]), {}).setdefault(
            meta.get("paper_hash", ""), []).append(r)
    kept = []
    for pid, versions in by_paper.items():
        for group in versions.values():
            n = int(group[0][2].get("n_chunks", -1))
            if {r[0] for r in group} == {f"{pid}#{i}" for i in range(n)} and len(group) == n:
                kept += group
                break
    return sorted(kept, key=lambda r: r[0])


def save_snapshot(snap: Snapshot, folder: Path) -> None:
    """Save atomically (a temporary folder renamed into place), removing snapshots of other
    generations once they are KEEP_SECONDS old: another process sharing the data directory may
    still be loading one. A cache that cannot be written is simply rebuilt next time."""
    where = snapshot_dir(folder, snap.generation)
    tmp = where.with_name(f".tmp-{where.name}-{os.getpid()}-{uuid.uuid4().hex[:6]}")
    try:
        tmp.mkdir(parents=True, exist_ok=True)
        (tmp / "chunks.json").write_text(json.dumps(
            {"format": EMBED_FORMAT, "ids": snap.ids, "texts": snap.texts, "metas": snap.metas},
            ensure_ascii=False),
            encoding="utf-8")
        snap.bm25.save(tmp / "bm25")
        if where.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            os.replace(tmp, where)
        now = time.time()
        for old in folder.glob("snapshot-*"):
            if old.name != where.name and now - old.stat().st_mtime > KEEP_SECONDS:
                shutil.rmtree(old, ignore_errors=True)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
