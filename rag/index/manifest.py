"""The manifest of an index: what the last complete `rag index` run of a corpus wrote, and
the `IndexReport` a run returns (and the manifest keeps).

It lets an unchanged corpus skip the diff against the store (a full scan of its metadata);
Chroma stays the judge, as every write changes the collection's generation.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..ingest import corpus as corpus_mod
from ..types import Paper
from .files import write_json
from .schema import SCHEMA

if TYPE_CHECKING:
    from .opened import Index


@dataclass
class IndexReport:
    corpus: str
    collection: str
    papers: int = 0
    chunks: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    uploads: int = 0  # uploaded documents already in the store, kept as they were
    embedded: int = 0  # chunks embedded by the model in this run (0 when nothing changed)
    cached: int = 0  # chunks written in this run with a vector from the embedding cache
    duplicates: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (file, why) not indexed
    seconds: float = 0.0

    def summary(self) -> str:
        return (f"{self.corpus}: {self.papers} papers, {self.chunks} chunks; added {self.added}, "
                f"updated {self.updated}, removed {self.removed}; embedded {self.embedded} "
                f"chunks in {self.seconds:.1f} s ({self.cached} more from the embedding cache); "
                f"{len(self.duplicates)} duplicate(s) skipped"
                + (f"; {self.uploads} uploaded document(s) kept" if self.uploads else "")
                + "".join(f"\nrejected   {corpus_mod.rejection(*r)}" for r in self.rejected))



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
