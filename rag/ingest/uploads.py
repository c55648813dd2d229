"""Adding a user's documents to a corpus: check them, store them safely, index them.

Each file is checked before anything is written: its name (a plain file name, no path, no
`..`), its type (.txt .md .jsonl .pdf), its size, and that it parses. Accepted files are stored
under `rag.index.uploads_dir(settings, corpus)` with a generated name (content hash + a slug of
the original stem), never the name the user sent; the original name is kept as display metadata
in `.uploads.json` beside them. Papers whose text (or id) is already in the corpus, or earlier in
the same batch, are skipped as duplicates. Then `rag.index_corpus()` embeds only what is new.

Example: add_documents([("/tmp/x1", "My notes.md")], settings) -> UploadReport(added=[Added(
"My notes.md", "My notes", "doc-3f2a..."), ...], duplicates=[], rejected=[])

Not handled: removing an upload again (delete its file and run `rag index`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from . import corpus as corpus_mod
from ..errors import CorpusError
from ..index.build import IndexReport, slug, uploads_dir
from ..settings import Settings
from ..types import Paper

ALLOWED_SUFFIXES = (".txt", ".md", ".jsonl", ".pdf")
MAX_UPLOAD_BYTES = 10 * 1024 * 1024
MAX_FILES = 20
MAX_PAPERS_PER_FILE = 5000
MANIFEST = ".uploads.json"

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


# -- checks ------------------------------------------------------------------------------------


def display_name(name: str, limit: int = 120) -> str:
    """The user's file name made safe to show: no control characters, bounded length."""
    text = "".join(ch for ch in str(name) if unicodedata.category(ch)[0] != "C").strip()
    return (text[: limit - 1] + "…" if len(text) > limit else text) or "(unnamed)"


def check_name(name: str) -> str | None:
    """Why a file name is refused (a path, `..`, a hidden or empty name, a wrong type), or None."""
    if not name or not name.strip():
        return "the file has no name"
    if "/" in name or "\\" in name or "\x00" in name or re.match(r"^[A-Za-z]:", name):
        return "the name contains a path; upload the file itself, not a path"
    if name.strip() in (".", "..") or name.startswith("."):
        return "hidden or relative names (starting with '.') are not accepted"
    suffix = Path(name).suffix.lower()
    if suffix not in ALLOWED_SUFFIXES:
        return (f"unsupported file type {suffix or '(none)'}; use "
                f"{', '.join(ALLOWED_SUFFIXES)}")
    return None


def check_file(path: Path, name: str, max_bytes: int = MAX_UPLOAD_BYTES) -> str | None:
    """Why a stored upload is refused (name, size, content signature), or None if it is fine."""
    reason = check_name(name)
    if reason:
        return reason
    try:
        size = path.stat().st_size
    except OSError:
        return "the upload could not be read; try again"
    if size == 0:
        return "the file is empty"
    if size > max_bytes:
        return (f"{size / 2**20:.1f} MB is over the {max_bytes / 2**20:.0f} MB limit per file; "
                f"split it")
    head = path.read_bytes()[:8]
    if Path(name).suffix.lower() == ".pdf":
        if not head.startswith(b"%PDF-"):
            return "not a PDF file (it does not start with %PDF-)"
    elif head.startswith(b"%PDF-"):
        return "a PDF file named as text; rename it to .pdf"
    return None


def parse(path: Path, name: str) -> list[Paper]:
    """The papers of one uploaded file; CorpusError (naming `name`, not the temp path) if bad."""
    try:
        if Path(name).suffix.lower() == ".jsonl":
            papers = [p for _, p in corpus_mod.load_jsonl(path)]
            if not papers:
                raise CorpusError(f"{path}: no records")
        else:
            papers = [corpus_mod.load_document(path, display_name=name)]
    except CorpusError as exc:
        raise CorpusError(str(exc).replace(str(path), name)) from None
    if len(papers) > MAX_PAPERS_PER_FILE:
        raise CorpusError(f"{name}: {len(papers)} records is over the limit of "
                          f"{MAX_PAPERS_PER_FILE} per file; split it")
    return papers


# -- storing -----------------------------------------------------------------------------------


def stored_name(name: str, data: bytes) -> str:
    """A generated, safe file name: content hash + slug of the original stem + its suffix."""
    stem = slug(Path(name).stem)[:40]
    return f"{hashlib.sha1(data).hexdigest()[:16]}-{stem}{Path(name).suffix.lower()}"


def _write_atomic(folder: Path, fname: str, data: bytes) -> Path:
    target = (folder / fname).resolve()
    if target.parent != folder.resolve():  # generated names cannot escape; check anyway
        raise CorpusError(f"refusing to write outside {folder}")
    tmp = folder / f".tmp-{os.getpid()}-{fname}"
    tmp.write_bytes(data)
    os.replace(tmp, target)
    return target


def read_manifest(settings: Settings, corpus: str | None = None) -> dict[str, dict]:
    """{stored file name: {"name": original name, "added": time, "papers": [ids]}}."""
    path = uploads_dir(settings, corpus or settings.corpus) / MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _write_manifest(folder: Path, manifest: dict[str, dict]) -> None:
    _write_atomic(folder, MANIFEST, json.dumps(manifest, indent=1, ensure_ascii=False).encode())


def original_names(settings: Settings, corpus: str | None = None) -> dict[str, str]:
    """{stored file name: the name the user uploaded it as}, for display."""
    return {k: v.get("name", k) for k, v in read_manifest(settings, corpus).items()}


# -- the whole step ----------------------------------------------------------------------------


def _jsonl_lines(path: Path, keep: set[str]) -> bytes:
    """The JSONL file reduced to the records whose paper id is in `keep` (original lines)."""
    out = []
    lines = [ln for ln in corpus_mod.read_text(path).split("\n") if ln.strip()]
    for (_, paper), line in zip(corpus_mod.load_jsonl(path), lines):  # one record per line
        if paper.id in keep:
            out.append(line)
    return ("\n".join(out) + "\n").encode("utf-8")


def reindex(settings: Settings, corpus: str, progress=None) -> IndexReport:
    """Index the corpus with its new uploads (embeds only what is new)."""
    import rag

    return rag.index_corpus(corpus, settings, progress=progress)


def _stored_bytes(path: Path, name: str, papers: list[Paper], keep: set[str]) -> bytes:
    """The bytes to store: the upload itself, a JSONL reduced to its new records, or a text
    given a title line when its title came from the file name (which is not kept on disk)."""
    suffix = Path(name).suffix.lower()
    if suffix == ".jsonl":
        return _jsonl_lines(path, keep) if len(keep) < len(papers) else path.read_bytes()
    if suffix in (".txt", ".md"):
        text = corpus_mod.read_text(path)
        lines = text.strip().split("\n")
        first = lines[0].strip().lstrip("#").strip()
        if not (len(lines) > 1 and 0 < len(first) <= 200):
            return f"# {papers[0].title}\n\n{text}".encode("utf-8")
    return path.read_bytes()


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
    folder = uploads_dir(settings, corpus)
    with _write_lock:
        existing = corpus_mod.load_corpus(corpus, [folder]).papers
        seen_ids = {p.id: p.title for p in existing}
        seen_texts = {corpus_mod.normalise(p.text): p.title for p in existing}
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
                key = corpus_mod.normalise(paper.text)
                twin = seen_ids.get(paper.id) or seen_texts.get(key)
                if twin is not None:
                    report.duplicates.append(Skipped(label, f"the same text is already in the "
                                                            f"corpus as \u201c{twin}\u201d"))
                    continue
                seen_ids[paper.id], seen_texts[key] = paper.title, paper.title
                new.append(paper)
            if new:
                data = _stored_bytes(path, name, papers, {p.id for p in new})
                accepted.append((name, data, new, Path(name).suffix.lower()))
        if not accepted:
            return report
        folder.mkdir(parents=True, exist_ok=True)
        manifest = read_manifest(settings, corpus)
        written = []
        for name, data, papers, _ in accepted:
            fname = stored_name(name, data)
            written.append(_write_atomic(folder, fname, data))
            manifest[fname] = {"name": name, "added": time.time(), "papers": [p.id for p in papers]}
        try:
            report.index = reindex(settings, corpus, progress)
        except BaseException:
            for path in written:  # not indexed: do not leave them to surprise the next run
                path.unlink(missing_ok=True)
            raise
        _write_manifest(folder, manifest)
        for name, _, papers, _ in accepted:
            report.added += [Added(name, p.title, p.id) for p in papers]
    return report


def upload_pairs(paths: Sequence[str | os.PathLike], names: Sequence[str] | None = None
                 ) -> list[tuple[str, str]]:
    """(path, name) pairs for `add_documents`, using each path's own name when none is given."""
    names = list(names) if names is not None else [Path(p).name for p in paths]
    return list(zip(map(str, paths), names))
