"""Whose papers a collection holds: the corpus's own, and documents users uploaded to it.

Every chunk's metadata says its `origin`: "corpus" (read from the corpus's files) or "upload"
(added with `rag add` or the corpus tab, from any machine sharing the store). Re-indexing a
corpus touches only its own papers: an uploaded paper is deleted only by `remove_upload`
(`rag remove ID`), never because one machine's corpus or upload folder lacks it. Uploads are
kept whole in the store (text at its chunks' offsets, title, authors, url, source), so any
machine can re-chunk them, e.g. for `rag index --rebuild` (which keeps them in a local file
until they are written again, so a rebuild killed half-way loses none: `save_pending`).

A machine's own upload folder is indexed too, so the ids `rag remove` took out are kept in the
collection's metadata (`removed_uploads`, JSON): no machine brings them back from its copy,
until someone adds the document again.

Chunks written before `origin` existed count as "corpus", unless their paper is one of this
machine's uploads (`legacy_uploads`).

Example: the store holds seeds papers A, B and upload U; the seeds corpus now has A only ->
`diff` deletes B's chunks, keeps U's, and embeds nothing.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import IndexCorruptError, InputError
from ..types import Chunk, Paper
from .collection import Collection
from .files import write_json

if TYPE_CHECKING:
    from .manifest import IndexReport
    from .store import Store

UPLOAD, CORPUS = "upload", "corpus"


def origin(meta: dict, legacy_uploads: frozenset[str] | set[str] = frozenset()) -> str:
    """The origin a chunk's metadata gives, "corpus" for chunks written before it existed."""
    found = meta.get("origin")
    if found:
        return str(found)
    return UPLOAD if meta.get("paper_id") in legacy_uploads else CORPUS


def removed_uploads(col: Collection) -> set[str]:
    """The ids of uploads `rag remove` took out of the collection (and nobody added again)."""
    try:
        return set(json.loads(col.meta.get("removed_uploads") or "[]"))
    except (TypeError, ValueError):
        return set()


def tombstone_meta(ids: set[str]) -> dict[str, str]:
    return {"removed_uploads": json.dumps(sorted(ids))}


def _complete(pid: str, rows: list[tuple[str, int]]) -> bool:
    """Whether `rows` (chunk id, chunk count) are exactly `pid#0 .. #n-1`."""
    return bool(rows) and {cid for cid, _ in rows} == {
        Chunk(pid, i, "", 0, 0, ()).id for i in range(rows[0][1])}


def diff(col: Collection, wanted: dict[str, tuple[Paper, str]], report: "IndexReport",
         legacy_uploads: set[str]) -> tuple[list[tuple[Paper, str]], list[str]]:
    """Papers to (re-)embed and chunk ids to delete, from what the collection holds.

    A paper is complete when its chunks of the current content hash are exactly
    `paper_id#0 .. #n-1`; chunks of another hash are leftovers of an update that stopped.
    An upload not in `wanted` is kept if complete (counted in `report.uploads`); an upload
    left incomplete by an interrupted `rag add` is deleted."""
    stored: dict[str, dict[str, list[tuple[str, int]]]] = {}
    origins: dict[str, str] = {}
    for cid, _, meta, _ in col.iter_all():
        pid = meta.get("paper_id", "?")
        by_hash = stored.setdefault(pid, {})
        by_hash.setdefault(meta.get("paper_hash", ""), []).append(
            (cid, int(meta.get("n_chunks", -1))))
        if origins.get(pid) != UPLOAD:
            origins[pid] = origin(meta, legacy_uploads)
    todo: list[tuple[Paper, str]] = []
    stale: list[str] = []
    for pid, by_hash in stored.items():
        if pid in wanted:
            continue
        keep = next((h for h, rows in by_hash.items() if _complete(pid, rows)), None) \
            if origins[pid] == UPLOAD else None
        stale += [cid for h, rows in by_hash.items() if h != keep for cid, _ in rows]
        if keep is None:
            report.removed += 1
        else:
            report.uploads += 1
    for pid, (paper, digest) in wanted.items():
        by_hash = stored.get(pid, {})
        complete = _complete(pid, by_hash.get(digest, []))
        stale += [cid for h, rows in by_hash.items() if h != digest or not complete
                  for cid, _ in rows]
        if complete:
            continue
        if by_hash:
            report.updated += 1
        else:
            report.added += 1
        todo.append((paper, digest))
    return todo, stale


def stored_uploads(col: Collection) -> list[Paper]:
    """Every complete uploaded paper in the collection, its text put back from its chunks."""
    rows: dict[str, list[tuple[str, str, dict]]] = {}
    for cid, doc, meta, _ in col.iter_all(include=("documents", "metadatas")):
        if origin(meta) == UPLOAD:
            rows.setdefault(meta.get("paper_id", "?"), []).append((cid, doc or "", meta))
    papers = []
    for pid, chunks in rows.items():
        if not _complete(pid, [(cid, int(m.get("n_chunks", -1))) for cid, _, m in chunks]):
            continue
        end = max(int(m.get("end", 0)) for _, _, m in chunks)
        buf = [" "] * end
        for _, text, m in chunks:
            s = int(m.get("start", 0))
            buf[s : s + len(text)] = text
        m = chunks[0][2]
        papers.append(Paper(id=pid, title=m.get("title", ""), text="".join(buf),
                            authors=m.get("authors", ""), url=m.get("url", ""),
                            source=m.get("source", "")))
    return papers


def recover_uploads(store: "Store", name: str) -> tuple[list[Paper], set[str]]:
    """The uploads a collection holds and the ids removed from it, read before `--rebuild`
    drops it (none if unreadable)."""
    try:
        col = store.open(name)
        return (stored_uploads(col), removed_uploads(col)) if col is not None else ([], set())
    except IndexCorruptError:
        return [], set()


PENDING = "rebuild-pending.json"


def save_pending(folder: Path, papers: list[Paper], removed: set[str]) -> None:
    """Keep what a `--rebuild` is about to drop (uploads, removed ids) on disk until it has
    written them again: a rebuild killed half-way gives them back to the next run here."""
    data = {"uploads": [asdict(p) for p in papers], "removed": sorted(removed)}
    write_json(folder / PENDING, data, ensure_ascii=False, default=str)


def load_pending(folder: Path) -> tuple[list[Paper], set[str]]:
    """What an interrupted `--rebuild` left in `folder` (nothing if none)."""
    try:
        data = json.loads((folder / PENDING).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [], set()
    return [Paper(**p) for p in data.get("uploads", [])], set(data.get("removed", []))


def clear_pending(folder: Path) -> None:
    (folder / PENDING).unlink(missing_ok=True)


def upload_ids(col: Collection) -> set[str]:
    """The ids of the uploaded papers in the collection."""
    return {m.get("paper_id", "?") for _, _, m, _ in col.iter_all() if origin(m) == UPLOAD}


def remove_upload(col: Collection, paper_id: str, corpus: str,
                  legacy_uploads: set[str]) -> tuple[str, int]:
    """Delete every chunk of the uploaded paper `paper_id`: (its title, chunks deleted).

    InputError, in one line, for an id the collection does not hold (never added, or already
    removed) and for a paper of the corpus itself. The caller holds the writer lock."""
    found = col.where({"paper_id": paper_id})
    if not found and paper_id in removed_uploads(col):
        raise InputError(f"{paper_id!r} was already removed from corpus {corpus!r}; nothing "
                         f"to do")
    if not found:
        raise InputError(f"no document {paper_id!r} in corpus {corpus!r}; `rag papers --corpus "
                         f"{corpus}` lists the ids")
    if not any(origin(m, legacy_uploads) == UPLOAD for _, m in found):
        raise InputError(f"{paper_id!r} is a paper of corpus {corpus!r}, not an uploaded "
                         f"document; only uploaded documents can be removed")
    col.refresh()
    col.mark_dirty()  # readers: keep answering from the last complete generation
    col.delete([cid for cid, _ in found])
    col.set_meta(generation=uuid.uuid4().hex, updated=time.time(),
                 **tombstone_meta(removed_uploads(col) | {paper_id}))
    return str(found[0][1].get("title", "")), len(found)
