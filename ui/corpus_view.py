"""The corpus tab's logic: the indexed papers (cached per index generation), search, a paper's
detail view (with the papers most like it), adding uploaded documents with a progress callback, and removing one of them
(built-in papers cannot be removed: `rag.documents.remove_document` says so).

Example: catalog(settings).papers -> every Paper of settings.corpus, sorted by title.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from rag import documents, factory
from rag.ingest import uploads
from rag.errors import RagError
from rag.index.sources import UPLOAD, origin
from rag.settings import Settings
from rag.types import Paper

from . import markup, render

PAGE = 50
SIMILAR = 5  # papers like the one shown, under its abstract


def search_papers(papers: Sequence[Paper], query: str, limit: int = 50) -> tuple[list[Paper], int]:
    """Papers whose title, authors, id or text contain every word of `query` (titles first)."""
    words = [w for w in re.split(r"\s+", query.lower().strip()) if w]
    if not words:
        return list(papers[:limit]), len(papers)
    hits = []
    for p in papers:
        head = f"{p.title} {p.authors} {p.id} {p.source}".lower()
        body = p.text.lower()
        if all(w in head or w in body for w in words):
            hits.append((0 if all(w in head for w in words) else 1, p))
    hits.sort(key=lambda h: h[0])
    return [p for _, p in hits[:limit]], len(hits)


@dataclass
class Catalog:
    generation: str
    papers: list[Paper]
    by_id: dict[str, Paper] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # stored upload name -> original name
    uploads: set[str] = field(default_factory=set)  # ids of uploaded documents (removable)


_lock = threading.Lock()
_cache: dict[tuple, Catalog] = {}


def catalog(settings: Settings) -> Catalog:
    """The papers of the session's corpus; rebuilt only when the index changed."""
    index = factory.index(settings)
    key = (str(settings.home_path), settings.chroma_url, settings.corpus)
    generation = index.generation
    with _lock:
        cat = _cache.get(key)
        if cat is not None and cat.generation == generation:
            return cat
    papers = index.papers()
    uploaded = {m.get("paper_id", "") for m in index.snapshot().metas if origin(m) == UPLOAD}
    cat = Catalog(generation, papers, {p.id: p for p in papers},
                  uploads.original_names(settings, settings.corpus), uploaded)
    with _lock:
        _cache[key] = cat
    return cat


def paper(settings: Settings, paper_id: str) -> Paper | None:
    try:
        return catalog(settings).by_id.get(paper_id)
    except RagError:
        return None


def removable(settings: Settings, paper_id: str) -> bool:
    """Whether `paper_id` is an uploaded document (the corpus's own papers stay)."""
    try:
        return paper_id in catalog(settings).uploads
    except RagError:
        return False


def list_html(settings: Settings, query: str = "") -> str:
    """The list of papers matching `query`, or a friendly message if there is no index."""
    try:
        cat = catalog(settings)
    except RagError as exc:
        return render.error_html(str(exc), "The corpus cannot be shown")
    hits, total = search_papers(cat.papers, query or "", PAGE)
    return render.paper_list_html(hits, total, query or "", cat.names)


def detail_html(settings: Settings, paper_id: str) -> str:
    try:
        cat = catalog(settings)
    except RagError as exc:
        return render.error_html(str(exc), "The paper cannot be shown")
    p = cat.by_id.get(paper_id)
    if p is None:
        return render.error_html(f"no paper {paper_id!r} in this corpus (was it removed?)",
                                 "Not found")
    return render.source_html(p.title, p.text, (), 0, p.authors, p.url, "",
                              cat.names.get(p.source, "")) + similar_html(settings, p.id)


def similar_html(settings: Settings, paper_id: str, k: int = SIMILAR) -> str:
    """"Papers like this one": the nearest papers by embedding, each opening its own detail."""
    import rag

    try:
        found = rag.similar(paper_id, k, settings, settings.corpus)
    except RagError:
        return ""
    cards = [render.card(f"#rag:d/{s.paper.id}", f"{s.score:.2f}", s.paper.title, s.paper.authors)
             for s in found]
    return ('<div class="rag-sources rag-similar"><div class="rag-label">Papers like this one'
            f'</div><div class="rag-cards">{"".join(cards)}</div></div>') if cards else ""


def add_files(paths: Sequence[str], settings: Settings,
              progress: Callable[[int, int], None] | None = None) -> str:
    """Add uploaded files (their temp paths; the file name is the user's) and report."""
    if not paths:
        return render.error_html("choose one or more .txt, .md, .jsonl or .pdf files first",
                                 "Nothing to add")
    pairs = [(str(p), Path(str(p)).name) for p in paths]
    try:
        report = documents.add_documents(pairs, settings, settings.corpus, progress=progress)
    except RagError as exc:
        return render.error_html(str(exc), "The documents could not be added")
    return render.upload_report_html(report)


def remove(settings: Settings, paper_id: str) -> str:
    """Remove an uploaded document from the session's corpus; what was removed, or why not."""
    if not paper_id:
        return render.error_html("pick an uploaded document in the list first",
                                 "Nothing to remove")
    try:
        removed = documents.remove_document(paper_id, settings, settings.corpus)
    except RagError as exc:
        return render.error_html(str(exc), "The document could not be removed")
    text = removed.summary()
    return (f'<div class="rag-src rag-removed"><div class="rag-src-title"><span>Document removed'
            f'</span></div><p>{markup.esc(text[:1].upper() + text[1:])}.</p></div>')
