"""The manifest of an index: what the last complete `rag index` run of a corpus wrote.

It lets an unchanged corpus skip the diff against the store (a full scan of its metadata);
Chroma stays the judge, as every write changes the collection's generation.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import TYPE_CHECKING

from ..types import Paper
from .files import write_json
from .schema import SCHEMA

if TYPE_CHECKING:
    from .build import IndexReport
    from .opened import Index


def fingerprint(wanted: dict[str, tuple[Paper, str]]) -> str:
    """One hash of every paper's id and content hash (which covers the chunk settings)."""
    h = hashlib.sha1()
    for pid in sorted(wanted):
        h.update(f"{pid}\0{wanted[pid][1]}\n".encode())
    return h.hexdigest()


def unchanged(index: "Index", fingerprint: str) -> dict | None:
    """Whether the collection is exactly what the last complete run of this corpus wrote: the
    same corpus fingerprint, and Chroma still at the generation (and count) recorded then.
    Every write changes the generation, so Chroma stays the judge; only the full scan of its
    metadata (seconds for 50,000 chunks) is skipped. The manifest if so, else None."""
    try:
        manifest = json.loads((index.dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    gen = index.generation
    same = (isinstance(manifest, dict) and manifest.get("fingerprint") == fingerprint
            and bool(gen) and not gen.startswith("dirty") and manifest.get("generation") == gen
            and manifest.get("chunks") == index.collection.count())
    return manifest if same else None


def write_manifest(index: "Index", corpus: str, report: "IndexReport", fingerprint: str) -> None:
    index.dir.mkdir(parents=True, exist_ok=True)
    manifest = {"schema": SCHEMA, "corpus": corpus, "collection": index.name,
                "fingerprint": fingerprint,
                "embedder": index.embedder.name, "dim": index.embedder.dim,
                "chunk_tokens": index.settings.chunk_tokens,
                "chunk_overlap": index.settings.chunk_overlap, "generation": index.generation,
                "papers": report.papers, "uploads": report.uploads, "chunks": report.chunks,
                "updated": time.time()}
    write_json(index.dir / "manifest.json", manifest, indent=1)
