"""Corpora: a built-in name (the shipped seeds, the ICML 2024 posters) or a path, loaded into
deduplicated `Paper`s with the documents users added to it (files are read by `readers.py`).

Papers are deduplicated by id and by normalised text; what was skipped is reported, never
silently dropped. Every malformed input raises `CorpusError` naming the file and, where it
applies, the line.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from ..errors import CorpusError
from ..settings import Settings
from ..text import slug
from ..types import Paper
from .readers import (load_document, load_jsonl, load_seed_file, load_seed_metadata,
                      normalise)


def _seeds_dir() -> Path:
    """The shipped seeds (package data of `rag.seeds`), or the folder RAG_SEEDS_DIR names."""
    if os.environ.get("RAG_SEEDS_DIR"):
        return Path(os.environ["RAG_SEEDS_DIR"])
    from importlib.resources import files

    return Path(str(files("rag.seeds")))


SEEDS_DIR = _seeds_dir()
BUILTIN = {"seeds": SEEDS_DIR, "icml2024": SEEDS_DIR / "icml2024.jsonl"}
TEXT_SUFFIXES = {".txt", ".md", ".markdown"}
DOC_SUFFIXES = TEXT_SUFFIXES | {".jsonl", ".pdf"}


@dataclass
class LoadReport:
    """The papers of a corpus, and what was skipped on the way."""

    papers: list[Paper] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)  # human-readable: "file: paragraph 3"
    extra: set[str] = field(default_factory=set)  # ids of the papers kept from `extra_dirs`
    rejected: list[tuple[str, str]] = field(default_factory=list)  # a folder's bad files, why


# -- corpora ------------------------------------------------------------------------------


def _seed_metadata(folder: Path) -> dict[tuple[str, int], dict]:
    path = folder / "metadata.jsonl"
    return load_seed_metadata(path) if path.exists() else {}


def _iter_path(path: Path, rejected: list[tuple[str, str]] | None = None
               ) -> Iterator[tuple[str, Paper]]:
    """The papers under `path`; a file of a folder that cannot be read raises CorpusError, or
    is put in `rejected` as (its name in the folder, why) when a list is given."""
    if path.is_dir():
        if path == SEEDS_DIR or (path / "metadata.jsonl").exists():
            meta = _seed_metadata(path)
            for f in sorted(path.glob("*.txt")):
                yield from load_seed_file(f, meta)
            return
        files = sorted(p for p in path.rglob("*") if p.is_file()
                       and p.suffix.lower() in DOC_SUFFIXES and not p.name.startswith("."))
        for f in files:
            name = str(f.relative_to(path))
            try:
                found = (list(load_jsonl(f)) if f.suffix.lower() == ".jsonl"
                         else [(name, load_document(f))])
            except CorpusError as exc:
                if rejected is None:
                    raise
                why = str(exc).replace(str(f), name)
                rejected.append((name, why[len(name) + 2:] if why.startswith(f"{name}: ")
                                 else why))
                continue
            yield from found
        return
    if not path.exists():
        raise CorpusError(f"{path}: no such file or folder")
    if path.suffix.lower() == ".jsonl":
        yield from load_jsonl(path)
    elif path.suffix.lower() in TEXT_SUFFIXES | {".pdf"}:
        yield (path.name, load_document(path))
    else:
        raise CorpusError(f"{path}: unsupported file type {path.suffix or '(none)'}; "
                          f"use .jsonl, .txt, .md or .pdf")


def corpus_path(corpus: str) -> Path:
    """The file or folder behind a corpus name (a built-in name, or a path)."""
    if corpus in BUILTIN:
        return BUILTIN[corpus]
    path = Path(corpus).expanduser()
    if not path.exists():
        raise CorpusError(f"unknown corpus {corpus!r}: use seeds, icml2024, or the path of a "
                          f".jsonl file or a folder of .txt/.md files")
    return path


def dedupe(items: Iterable[tuple[str, Paper]]) -> LoadReport:
    """Keep the first paper of each id and of each normalised text."""
    report, ids, texts = LoadReport(), set(), set()
    for where, paper in items:
        key = normalise(paper.text)
        if paper.id in ids or key in texts:
            report.duplicates.append(f"{where} ({paper.id})")
            continue
        ids.add(paper.id)
        texts.add(key)
        report.papers.append(paper)
    return report


def load_corpus(corpus: str, extra_dirs: Iterable[Path] = ()) -> LoadReport:
    """All papers of a corpus, plus documents added to it (uploads), deduplicated. A folder
    corpus's files that cannot be read are reported in `rejected` (an upload folder's raise);
    CorpusError only when no paper is left."""
    path = corpus_path(corpus)
    own: set[str] = set()
    rejected: list[tuple[str, str]] = []

    def items() -> Iterator[tuple[str, Paper]]:
        for item in _iter_path(path, rejected):
            own.add(item[1].id)
            yield item
        for folder in extra_dirs:
            if folder.is_dir() and any(folder.iterdir()):
                yield from _iter_path(folder)

    report = dedupe(items())
    report.extra = {p.id for p in report.papers if p.id not in own}
    report.rejected = rejected
    if not report.papers:
        why = "; ".join(rejection(name, reason) for name, reason in rejected)
        raise CorpusError(f"{path}: nothing could be indexed ({why})" if why else
                          f"{path}: the corpus is empty (no papers found)")
    return report


def rejection(name: str, why: str) -> str:
    """A file that was not indexed, in one line: "empty.txt: the file is empty", or the reader's
    own message when it names the file and line ("notes.txt:3: not UTF-8 text ...")."""
    return why if why.startswith(f"{name}:") else f"{name}: {why}"


def corpus_key(corpus: str) -> str:
    """A short stable name for a corpus: the built-in name, or a path's name and hash."""
    if corpus in BUILTIN:
        return corpus
    path = str(Path(corpus).expanduser().resolve())
    return f"{slug(Path(path).name)[:40]}-{hashlib.sha1(path.encode()).hexdigest()[:8]}"


def uploads_dir(settings: Settings, corpus: str) -> Path:
    """Where the documents users added to `corpus` are stored (see `uploads.py`)."""
    return settings.home_path / "uploads" / corpus_key(corpus)
