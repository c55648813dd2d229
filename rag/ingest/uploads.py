"""Checking and storing a user's uploaded documents (`rag.documents.add_documents` indexes them).

Each file is checked before anything is written: its name (a plain file name, no path, no
`..`), its type (.txt .md .jsonl .pdf), its size, and that it parses. Accepted files are stored
under `corpus.uploads_dir(settings, corpus)` with a generated name (content hash + a slug of
the original stem), never the name the user sent; the original name is kept as display metadata
in `.uploads.json` beside them.

Removing an upload again is `rag.documents.remove_document` (`rag remove ID`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import unicodedata
from pathlib import Path

from ..errors import CorpusError
from ..settings import Settings
from ..text import slug
from ..types import Paper
from . import readers
from .corpus import uploads_dir

ALLOWED_SUFFIXES = (".txt", ".md", ".jsonl", ".pdf")
MAX_UPLOAD_BYTES = 10 * 1024 * 1024
MAX_FILES = 20
MAX_PAPERS_PER_FILE = 5000
MANIFEST = ".uploads.json"


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
            papers = [p for _, p in readers.load_jsonl(path)]
            if not papers:
                raise CorpusError(f"{path}: no records")
        else:
            papers = [readers.load_document(path, display_name=name)]
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


def write_atomic(folder: Path, fname: str, data: bytes) -> Path:
    target = (folder / fname).resolve()
    if target.parent != folder.resolve():  # generated names cannot escape; check anyway
        raise CorpusError(f"refusing to write outside {folder}")
    tmp = folder / f".tmp-{os.getpid()}-{fname}"
    tmp.write_bytes(data)
    os.replace(tmp, target)
    return target


def read_manifest(settings: Settings, corpus: str | None = None) -> dict[str, dict]:
    """{stored file name: {"name": original name, "added": time, "papers": [ids]}}; {} when
    there is none yet. A manifest that cannot be read is a CorpusError naming it, never {}: it
    would be written back without the original names of every earlier upload."""
    path = uploads_dir(settings, corpus or settings.corpus) / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError:
        raise CorpusError(_damaged(path, "it is not UTF-8 text")) from None
    except OSError as exc:
        raise CorpusError(f"{path}: cannot be read ({exc.strerror or exc}); nothing was added"
                          ) from None
    try:
        manifest = json.loads(text)
    except ValueError as exc:
        raise CorpusError(_damaged(path, f"it is not valid JSON ({exc})")) from None
    if not isinstance(manifest, dict) or not all(isinstance(v, dict) for v in manifest.values()):
        raise CorpusError(_damaged(path, "it is not a JSON object of uploads"))
    return manifest


def _damaged(path: Path, why: str) -> str:
    return (f"{path} is damaged: {why}. It holds the original names of earlier uploads, so "
            f"nothing was added and it was not overwritten: repair it, or move it aside (e.g. "
            f"to {path.name}.corrupt) to start a new one")


def write_manifest(folder: Path, manifest: dict[str, dict]) -> None:
    write_atomic(folder, MANIFEST, json.dumps(manifest, indent=1, ensure_ascii=False).encode())


def original_names(settings: Settings, corpus: str | None = None) -> dict[str, str]:
    """{stored file name: the name the user uploaded it as}, for display; {} when the manifest
    is damaged (the stored names are shown instead; adding a document reports the damage)."""
    try:
        manifest = read_manifest(settings, corpus)
    except CorpusError:
        return {}
    return {k: str(v.get("name", k)) for k, v in manifest.items()}


def jsonl_lines(path: Path, keep: set[str]) -> bytes:
    """The JSONL file reduced to the records whose paper id is in `keep` (original lines)."""
    out = []
    lines = [ln for ln in readers.read_text(path).split("\n") if ln.strip()]
    for (_, paper), line in zip(readers.load_jsonl(path), lines):  # one record per line
        if paper.id in keep:
            out.append(line)
    return ("\n".join(out) + "\n").encode("utf-8")


def stored_bytes(path: Path, name: str, papers: list[Paper], keep: set[str]) -> bytes:
    """The bytes to store: the upload itself, a JSONL reduced to its new records, or a text
    given a title line when its title came from the file name (which is not kept on disk)."""
    suffix = Path(name).suffix.lower()
    if suffix == ".jsonl":
        return jsonl_lines(path, keep) if len(keep) < len(papers) else path.read_bytes()
    if suffix in (".txt", ".md"):
        text = readers.read_text(path)
        lines = text.strip().split("\n")
        first = lines[0].strip().lstrip("#").strip()
        if not (len(lines) > 1 and 0 < len(first) <= 200):
            return f"# {papers[0].title}\n\n{text}".encode("utf-8")
    return path.read_bytes()
