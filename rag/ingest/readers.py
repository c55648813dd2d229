"""Reading documents into `Paper`s: the seed format, JSONL of papers, .txt/.md files, PDFs.

A paper has a stable id: its ICML poster id where known, otherwise `doc-` + a hash of its
normalised text, so the same text always gets the same id. Every malformed input raises
`CorpusError` naming the file and, where it applies, the line.
Not handled: scanned PDFs (no text layer) are rejected, not OCR'd.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Iterator

from ..errors import CorpusError
from ..types import Paper

MAX_FILE_BYTES = 50 * 1024 * 1024


def normalise(text: str) -> str:
    """Lowercase and collapse every run of non-alphanumerics: the key for duplicate detection."""
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def text_id(text: str) -> str:
    """Stable id of a paper without a known poster id."""
    return "doc-" + hashlib.sha1(normalise(text).encode()).hexdigest()[:16]


# -- reading files ----------------------------------------------------------------------------


def read_text(path: Path) -> str:
    """The file's text; a clear error for missing, empty, oversized, binary or non-UTF-8 files."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read ({exc.strerror})") from None
    if size == 0:
        raise CorpusError(f"{path}: the file is empty")
    if size > MAX_FILE_BYTES:
        raise CorpusError(f"{path}: {size / 2**20:.0f} MB is over the "
                          f"{MAX_FILE_BYTES // 2**20} MB limit per file; split it")
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise CorpusError(f"{path}: looks like a binary file, not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CorpusError(f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                          f"offset {exc.start}); save the file as UTF-8") from None
    if not text.strip():
        raise CorpusError(f"{path}: the file holds only whitespace")
    return text.replace("\r\n", "\n")


def _paragraphs(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, paragraph) of every blank-line-separated paragraph."""
    line = 1
    for block in re.split(r"(\n[ \t]*\n)", text):
        if block.strip() and not re.fullmatch(r"\n[ \t]*\n", block):
            lead = len(block) - len(block.lstrip("\n"))
            yield line + lead, block.strip()
        line += block.count("\n")


def load_seed_file(path: Path, metadata: dict[tuple[str, int], dict] | None = None
                   ) -> Iterator[tuple[str, Paper]]:
    """Papers of a seed document: a header line, then one abstract per paragraph."""
    text = read_text(path)
    header, _, body = text.partition("\n")
    offset = 1
    paras = list(_paragraphs(body))
    if not paras:
        raise CorpusError(f"{path}: no abstracts after the header line {header.strip()!r}")
    for i, (line, para) in enumerate(paras, start=1):
        meta = (metadata or {}).get((path.name, i), {})
        yield (f"{path.name}:{line + offset}", Paper(
            id=meta.get("id") or text_id(para), title=meta.get("title") or _title_from(para),
            text=para, authors=meta.get("authors", ""), url=meta.get("url", ""),
            source=path.name))


SEED_FIELDS = ("id", "title", "authors", "url")  # optional, text


def load_seed_metadata(path: Path) -> dict[tuple[str, int], dict]:
    """{(seed file name, paragraph number): {"id", "title", "authors", "url"}} from a seed
    folder's `metadata.jsonl`; one CorpusError naming the file and line for a bad record.

    Example line: {"file": "000_89fe.txt", "paragraph": 1, "id": "icml2024-poster-32639",
    "title": "On a Neural Implementation of Brenier's Polar Factorization", ...}"""
    out: dict[tuple[str, int], dict] = {}
    for lineno, rec in json_records(read_text(path), str(path)):
        where = f"{path}:{lineno}"
        name, para = rec.get("file"), rec.get("paragraph")
        if not isinstance(name, str) or not name.strip():
            raise CorpusError(f"{where}: missing field 'file' (the seed file's name)")
        if isinstance(para, bool) or not isinstance(para, int) or para < 1:
            raise CorpusError(f"{where}: 'paragraph' must be a paragraph number (1, 2, ...), "
                              f"got {para!r}")
        for key in SEED_FIELDS:
            if key in rec and not isinstance(rec[key], str):
                raise CorpusError(f"{where}: {key!r} must be text, got "
                                  f"{type(rec[key]).__name__}")
        if (name, para) in out:
            raise CorpusError(f"{where}: a second record for {name} paragraph {para}")
        out[(name, para)] = rec
    return out


def json_records(text: str, where: str, error: type[Exception] = CorpusError
                 ) -> Iterator[tuple[int, dict]]:
    """(1-based line number, object) of every non-blank JSONL line; `error` names `where:line`."""
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{where}:{lineno}: not valid JSON ({exc.msg} at column "
                        f"{exc.colno})") from None
        if not isinstance(rec, dict):
            raise error(f"{where}:{lineno}: expected a JSON object, got {type(rec).__name__}")
        yield lineno, rec


def load_jsonl(path: Path) -> Iterator[tuple[str, Paper]]:
    """Papers of a JSONL file: id, title, authors, abstract (or text), url; extras kept."""
    for lineno, rec in json_records(read_text(path), str(path)):
        body = rec.get("abstract", rec.get("text"))
        if not isinstance(body, str) or not body.strip():
            raise CorpusError(f"{path}:{lineno}: missing field 'abstract' (or 'text')")
        pid = rec.get("id", rec.get("_id"))
        authors = rec.get("authors", "")
        if isinstance(authors, list):
            authors = ", ".join(map(str, authors))
        known = {"id", "_id", "title", "authors", "abstract", "text", "url"}
        yield (f"{path.name}:{lineno}", Paper(
            id=str(pid) if pid not in (None, "") else text_id(body),
            title=str(rec.get("title") or _title_from(body)), text=body.strip(),
            authors=str(authors), url=str(rec.get("url") or ""), source=path.name,
            meta={k: v for k, v in rec.items() if k not in known}))


def load_document(path: Path, display_name: str | None = None) -> Paper:
    """One .txt/.md/.pdf file as one paper; its title is its first heading or line."""
    name = display_name or path.name
    if path.suffix.lower() == ".pdf":
        text = _pdf_text(path, name)
    else:
        text = read_text(path)
    lines = text.strip().split("\n")
    first = lines[0].strip().lstrip("#").strip()
    if len(lines) > 1 and 0 < len(first) <= 200:
        title, body = first, "\n".join(lines[1:]).strip()
    else:
        title, body = Path(name).stem, text.strip()
    if not body:
        body = text.strip()
    return Paper(id=text_id(body), title=title, text=body, source=name)


def _pdf_text(path: Path, name: str) -> str:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError:  # pragma: no cover - pypdf is a dependency
        raise CorpusError(f"{name}: reading PDFs needs pypdf") from None
    if path.stat().st_size > MAX_FILE_BYTES:
        raise CorpusError(f"{name}: over the {MAX_FILE_BYTES // 2**20} MB limit per file")
    try:
        reader = PdfReader(str(path))
        text = "\n".join((page.extract_text() or "") for page in reader.pages)
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        raise CorpusError(f"{name}: not a readable PDF ({exc})") from None
    if not text.strip():
        raise CorpusError(f"{name}: the PDF has no text layer (a scan?); OCR it first")
    return re.sub(r"[ \t]+\n", "\n", text)


def _title_from(text: str, limit: int = 90) -> str:
    first = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"
