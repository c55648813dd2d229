"""Adding a user's documents to a corpus: check them, store them safely, index them.

Files are checked and stored by `ingest/uploads.py` (a plain file name of an allowed type and
size that parses; stored under a generated name, the original kept as display metadata).
Papers whose text (or id) is already in the corpus, or earlier in the same batch, are skipped as
duplicates (also of documents uploaded through another machine sharing the store). Then
`rag.index_corpus()` embeds only what is new, stored as uploads that re-indexing the corpus
keeps; if that fails, the files stored for it are removed again. `remove_document` is the only
way an uploaded document leaves the index (`rag remove ID`).

Example: add_documents([("/tmp/x1", "My notes.md")], settings) -> UploadReport(added=[Added(
"My notes.md", "My notes", "doc-3f2a..."), ...], duplicates=[], rejected=[])
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from .errors import CorpusError, RagError
from .index.build import IndexReport
from .index.locks import writer_lock
from .index.sources import remove_upload, removed_uploads, stored_uploads, upload_ids
from .ingest import corpus as corpus_mod
from .ingest.readers import normalise
from .ingest.uploads import (MAX_FILES, MAX_UPLOAD_BYTES, check_file, display_name,
                             jsonl_lines, parse, read_manifest, stored_bytes, stored_name,
                             write_atomic, write_manifest)
from .settings import Settings
from .types import Paper

_write_lock = threading.Lock()  # one batch at a time per process; build_index locks across them


@dataclass
class Added:
    name: str  # the name the user gave (display only)
    title: str
    paper_id: str


@dataclass
class Skipped:
    name: str
    reason: str


@dataclass
class UploadReport:
    """What happened to each uploaded file (and each paper inside a JSONL file)."""

    corpus: str
    added: list[Added] = field(default_factory=list)
    duplicates: list[Skipped] = field(default_factory=list)
    rejected: list[Skipped] = field(default_factory=list)
    index: IndexReport | None = None

    def summary(self) -> str:
        return (f"{len(self.added)} added, {len(self.duplicates)} skipped as duplicate, "
                f"{len(self.rejected)} rejected")

    def lines(self) -> list[str]:
        """The corpus tab's report as text: one line a file (or JSONL record), then the count.

        Example: ["added      notes.md: indexed as “My notes” (doc-3f2a...)",
        "rejected   empty.txt: the file is empty", "1 added, 0 skipped as duplicate, 1 rejected"]
        """
        rows = [f"added      {a.name}: indexed as “{a.title}” ({a.paper_id})"
                for a in self.added]
        rows += [f"duplicate  {d.name}: {d.reason}" for d in self.duplicates]
        rows += [f"rejected   {r.name}: {r.reason}" for r in self.rejected]
        tail = f"; the corpus now holds {self.index.papers} papers" if self.index else ""
        return rows + [self.summary() + tail]


def reindex(settings: Settings, corpus: str, progress=None, uploads: Sequence[Paper] = ()
            ) -> IndexReport:
    """Index the corpus, adding `uploads` to it (embeds only what is new)."""
    import rag

    return rag.index_corpus(corpus, settings, progress=progress, uploads=uploads)


def _uploaded(settings: Settings, corpus: str) -> tuple[list[Paper], set[str]]:
    """The documents uploaded to the corpus through any machine sharing the store, and the ids
    of those removed from it (this machine may still hold a copy)."""
    from . import factory

    try:
        col = factory.index(settings, corpus).collection
    except RagError:
        return [], set()  # no index yet
    return stored_uploads(col), removed_uploads(col)


def add_documents(files: Iterable[tuple[str | os.PathLike, str]], settings: Settings,
                  corpus: str | None = None, progress: Callable[[int, int], None] | None = None,
                  max_bytes: int = MAX_UPLOAD_BYTES) -> UploadReport:
    """Check, store and index uploaded files.

    Args:
        files: (path of the uploaded bytes, the name the user gave the file) pairs.
        settings: the Settings of the index to add to.
        corpus: the corpus to add to (default: settings.corpus).
        progress: called with (done, total) chunks while the new papers are embedded.
        max_bytes: size limit per file.
    """
    corpus = corpus or settings.corpus
    report = UploadReport(corpus)
    files = list(files)
    for path, name in files[MAX_FILES:]:
        report.rejected.append(Skipped(display_name(name), f"more than {MAX_FILES} files at "
                                                           f"once; add the rest afterwards"))
    folder = corpus_mod.uploads_dir(settings, corpus)
    with _write_lock:
        stored, removed = _uploaded(settings, corpus)
        existing = [p for p in corpus_mod.load_corpus(corpus, [folder]).papers
                    if p.id not in removed] + stored
        seen_ids = {p.id: p.title for p in existing}
        seen_texts = {normalise(p.text): p.title for p in existing}
        accepted: list[tuple[str, bytes, list[Paper], str]] = []  # name, bytes, papers, suffix
        for raw_path, raw_name in files[:MAX_FILES]:
            name, path = display_name(raw_name), Path(raw_path)
            reason = check_file(path, str(raw_name), max_bytes)
            if reason is None:
                try:
                    papers = parse(path, name)
                except CorpusError as exc:
                    reason = str(exc)
            if reason:
                report.rejected.append(Skipped(name, reason))
                continue
            new = []
            for paper in papers:
                label = name if len(papers) == 1 else f"{name}: {paper.title}"
                key = normalise(paper.text)
                twin = seen_ids.get(paper.id) or seen_texts.get(key)
                if twin is not None:
                    report.duplicates.append(Skipped(label, f"the same text is already in the "
                                                            f"corpus as \u201c{twin}\u201d"))
                    continue
                seen_ids[paper.id], seen_texts[key] = paper.title, paper.title
                new.append(paper)
            if new:
                data = stored_bytes(path, name, papers, {p.id for p in new})
                accepted.append((name, data, new, Path(name).suffix.lower()))
        if not accepted:
            return report
        folder.mkdir(parents=True, exist_ok=True)
        manifest = read_manifest(settings, corpus)
        written = []
        for name, data, papers, _ in accepted:
            fname = stored_name(name, data)
            written.append(write_atomic(folder, fname, data))
            manifest[fname] = {"name": name, "added": time.time(), "papers": [p.id for p in papers]}
        try:
            report.index = reindex(settings, corpus, progress,
                                   [p for _, _, papers, _ in accepted for p in papers])
        except BaseException:
            for path in written:  # not indexed: do not leave them to surprise the next run
                path.unlink(missing_ok=True)
            raise
        write_manifest(folder, manifest)
        for name, _, papers, _ in accepted:
            report.added += [Added(name, p.title, p.id) for p in papers]
    return report


def upload_pairs(paths: Sequence[str | os.PathLike], names: Sequence[str] | None = None
                 ) -> list[tuple[str, str]]:
    """(path, name) pairs for `add_documents`, using each path's own name when none is given."""
    names = list(names) if names is not None else [Path(p).name for p in paths]
    return list(zip(map(str, paths), names))


def uploaded_ids(settings: Settings, corpus: str | None = None) -> set[str]:
    """The ids of the documents uploaded to a corpus (`rag papers` marks them)."""
    from . import factory

    return upload_ids(factory.index(settings, corpus).collection)


@dataclass
class Removed:
    """An uploaded document taken out of a corpus by `remove_document`."""

    corpus: str
    paper_id: str
    title: str
    chunks: int
    files: list[str] = field(default_factory=list)  # this machine's stored copies, by name

    def summary(self) -> str:
        where = f"; deleted its stored file {', '.join(self.files)}" if self.files else ""
        return (f"removed \u201c{self.title}\u201d ({self.paper_id}, {self.chunks} chunk(s)) "
                f"from corpus {self.corpus}{where}")


def remove_document(paper_id: str, settings: Settings, corpus: str | None = None) -> Removed:
    """Remove an uploaded document from the index of a corpus, for every machine sharing it.

    Args:
        paper_id: the id `rag papers` shows.
        settings: the Settings of the index.
        corpus: the corpus it was added to (default: settings.corpus).
    InputError for an id that is not there (or no longer) and for a paper of the corpus itself.
    """
    from . import factory

    corpus = corpus or settings.corpus
    index = factory.index(settings, corpus)
    folder = corpus_mod.uploads_dir(settings, corpus)
    local = corpus_mod.load_corpus(corpus, [folder]).extra
    with _write_lock, writer_lock(settings):
        title, chunks = remove_upload(index.collection, paper_id, corpus, local)
        removed = Removed(corpus, paper_id, title, chunks)
        if paper_id in local:
            removed.files = _forget_local(settings, corpus, paper_id)
    factory.forget_index(settings, corpus)
    return removed


def _forget_local(settings: Settings, corpus: str, paper_id: str) -> list[str]:
    """Delete this machine's stored copy of an uploaded paper (a JSONL keeps its other records);
    the original names of the files it was in."""
    folder = corpus_mod.uploads_dir(settings, corpus)
    manifest = read_manifest(settings, corpus)
    names = []
    for fname, entry in list(manifest.items()):
        ids = list(entry.get("papers", []))
        if paper_id not in ids:
            continue
        names.append(str(entry.get("name", fname)))
        path = folder / fname
        ids.remove(paper_id)
        if ids and path.suffix == ".jsonl" and path.exists():
            write_atomic(folder, fname, jsonl_lines(path, set(ids)))
            entry["papers"] = ids
        else:
            path.unlink(missing_ok=True)
            del manifest[fname]
    write_manifest(folder, manifest)
    return names
