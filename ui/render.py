"""Pure rendering of answers, sources and papers to the HTML the chat shows (and Markdown to copy).

Every function takes plain data (an `Answer`, a `Paper`, strings) and returns a string; nothing
here imports gradio or touches the index, so it is unit-tested directly. Text goes through
`rag.ui.markup` (escaped, emphasis and math kept); `[n]` markers become links `#rag:c/<turn>/<n>`
that the page's script turns into "show source n of answer <turn>".
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from rag.answer.prompts import CANNOT_ANSWER
from .export import answer_to_bibtex, answer_to_markdown
from rag.answer.table import table_csv
from rag.types import Answer, Paper, Passage

from .markup import blocks, esc, highlighted, inline


# -- pieces of an answer -----------------------------------------------------------------------


def short_authors(authors: str, limit: int = 3) -> str:
    names = [a.strip() for a in str(authors).split(",") if a.strip()]
    if len(names) > limit:
        return ", ".join(names[:limit]) + " et al."
    return ", ".join(names)


def cite_link(turn: int, n: int, title: str = "") -> str:
    tip = f' title="{esc(title)}"' if title else ""
    return f'<a class="rag-cite" href="#rag:c/{turn}/{n}"{tip}>{n}</a>'


def card(href: str, badge: str, title: str, authors: str, note: str = "") -> str:
    parts = [f'<a class="rag-card" href="{href}">', f'<span class="rag-badge">{esc(badge)}</span>',
             '<span class="rag-card-body">', f'<span class="rag-card-title">{inline(title)}</span>']
    if authors:
        parts.append(f'<span class="rag-card-authors">{esc(short_authors(authors))}</span>')
    if note:
        parts.append(f'<span class="rag-card-note">{inline(note)}</span>')
    parts.append("</span></a>")
    return "".join(parts)


def _clip(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "\u2026"


def sources_html(answer: Answer, turn: int) -> str:
    cards = [card(f"#rag:c/{turn}/{c.n}", str(c.n), c.passage.title, c.passage.authors,
                  _clip(c.quote)) for c in answer.citations]
    return ('<div class="rag-sources"><div class="rag-label">Sources</div>'
            f'<div class="rag-cards">{"".join(cards)}</div></div>') if cards else ""


def suggestions_html(answer: Answer, turn: int, limit: int = 3) -> str:
    cards = [card(f"#rag:p/{turn}/{k}", "\u2192", p.title, p.authors)
             for k, p in enumerate(answer.passages[:limit])]
    return ('<div class="rag-sources"><div class="rag-label">You may be looking for</div>'
            f'<div class="rag-cards">{"".join(cards)}</div></div>') if cards else ""


def _ms(value: float) -> str:
    return f"{value / 1000:.1f} s" if value >= 1000 else f"{value:.0f} ms"


def meta_html(answer: Answer, turn: int) -> str:
    """The discreet footer: generator, timings, the query searched (marked if rewritten), export."""
    t = answer.timings_ms
    bits = [f'<span class="rag-gen">{esc(answer.generator)}</span>',
            f'<span>retrieve {_ms(t.get("retrieve", 0.0))}</span>',
            f'<span>generate {_ms(t.get("generate", 0.0))}</span>']
    words = [set(re.findall(r"\w+", x.lower())) for x in (answer.query, answer.question)]
    rewritten = "rewrite" in t or (words[0] - words[1] and not answer.query.startswith("author:"))
    label = "Searched as (follow-up rewritten)" if rewritten else "Searched as"
    query = (f'<details class="rag-query"><summary>{label}</summary>'
             f'<code>{esc(answer.query or answer.question)}</code></details>')
    export = (f'<a class="rag-act" href="#rag:x/{turn}">Export</a>'
              f'<a class="rag-act rag-on-map" href="#rag:m/{turn}">Show on map</a>'
              if answer.citations else "")
    return f'<div class="rag-meta">{" · ".join(bits)}{export}{query}</div>'


def notices_html(notices: Sequence[str]) -> str:
    return "".join(f'<div class="rag-notice">{inline(n)}</div>' for n in notices)


def answer_html(answer: Answer, turn: int) -> str:
    """The whole assistant message for a finished answer (or an abstention)."""
    if answer.abstained:
        own = answer.text.strip() not in ("", CANNOT_ANSWER)  # "No paper by X in this corpus."
        sub = "" if own else "No retrieved abstract supports an answer with a citation."
        return ('<div class="rag-answer rag-abstained">'
                f'<div class="rag-abstain-head">{esc(answer.text if own else CANNOT_ANSWER)}</div>'
                + (f'<p class="rag-abstain-sub">{sub}</p>' if sub else '') +
                f'{notices_html(answer.notices)}{suggestions_html(answer, turn)}'
                f'{meta_html(answer, turn)}</div>')
    if answer.table is not None:
        return (f'<div class="rag-answer rag-table-answer">{table_html(answer, turn)}'
                f'{notices_html(answer.notices)}{sources_html(answer, turn)}'
                f'{meta_html(answer, turn)}</div>')
    titles = {c.n: c.passage.title for c in answer.citations}
    unsupported = [s.text for s in answer.sentences if s.unbacked]
    body = blocks(answer.text, lambda n: cite_link(turn, n, titles.get(n, "")), unsupported)
    return (f'<div class="rag-answer"><div class="rag-text">{body}</div>'
            f'{notices_html(answer.notices)}{sources_html(answer, turn)}'
            f'{meta_html(answer, turn)}</div>')


def table_html(answer: Answer, turn: int) -> str:
    """A table answer: its line, then an HTML table whose stated cells carry their citation
    link, the quoted sentence showing on hover (`title`); "not stated" cells are greyed."""
    table = answer.table
    assert table is not None
    lead = answer.text.split("\n\n", 1)[0]
    head = "".join(f"<th>{esc(c)}</th>" for c in ("Paper", *table.columns))
    rows = []
    for row in table.rows:
        title = (f'<a href="{esc(row.url)}" target="_blank" rel="noopener">{inline(row.title)}</a>'
                 if row.url else inline(row.title))
        cells = [f'<td class="rag-cell-title">{title}</td>']
        for col in table.columns:
            cell = row.cells[col]
            if cell.stated:
                quote = esc(cell.quote or "")
                cells.append(f'<td class="rag-cell" title="{quote}"><span class="rag-cell-value">'
                             f'{inline(cell.value or "")}</span> '
                             f'{cite_link(turn, cell.citation or 0, cell.quote or "")}'
                             f'<span class="rag-cell-quote">\u201c{quote}\u201d</span></td>')
            else:
                cells.append('<td class="rag-cell rag-cell-missing">not stated</td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (f'<p class="rag-text">{inline(lead)}</p><div class="rag-table-wrap">'
            f'<table class="rag-table"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def error_html(message: str, title: str = "Couldn\u2019t answer that") -> str:
    """A friendly error in the chat: what happened and what to do, never a traceback."""
    text = str(message).strip()
    text = text[:1].upper() + text[1:]
    if text and text[-1] not in ".!?":
        text += "."
    return (f'<div class="rag-answer rag-error"><div class="rag-error-head">{esc(title)}</div>'
            f'<p>{inline(text)}</p></div>')


def user_html(question: str) -> str:
    return f'<div class="rag-question">{esc(question)}</div>'


# -- the source panel and the corpus tab ---------------------------------------------------


def source_html(title: str, text: str, spans: Iterable[tuple[int, int]] = (), offset: int = 0,
                authors: str = "", url: str = "", badge: str = "", source: str = "",
                quote: str = "", partial: bool = False) -> str:
    """A paper shown in full: title, authors, its ICML page, the abstract with the cited
    sentence(s) highlighted."""
    spans = list(spans)
    head = f'<span class="rag-badge">{esc(badge)}</span>' if badge else ""
    parts = [f'<div class="rag-src">'
             f'<div class="rag-src-title">{head}<span>{inline(title)}</span></div>']
    if authors:
        parts.append(f'<div class="rag-src-authors">{esc(authors)}</div>')
    links = []
    if url:
        links.append(f'<a class="rag-src-link" href="{esc(url)}" target="_blank" '
                     f'rel="noopener">ICML 2024 page \u2197</a>')
    if source:
        links.append(f'<span class="rag-src-file">{esc(source)}</span>')
    if links:
        parts.append(f'<div class="rag-src-links">{" ".join(links)}</div>')
    if spans:
        parts.append('<div class="rag-label">Abstract \u2014 cited sentence highlighted</div>')
    else:
        parts.append('<div class="rag-label">Abstract</div>')
    parts.append(f'<div class="rag-src-text">{highlighted(text, spans, offset)}</div>')
    if partial:
        parts.append('<div class="rag-notice">Only the retrieved part of this document is '
                     'shown.</div>')
    if quote and not spans:
        parts.append(f'<blockquote class="rag-quote">{inline(quote)}</blockquote>')
    parts.append("</div>")
    return "".join(parts)


def passage_source_html(passage: Passage, spans=(), badge: str = "", quote: str = "",
                        paper: Paper | None = None, source: str = "") -> str:
    """The source panel for a passage, using its whole paper when it is known."""
    if paper is not None:
        return source_html(paper.title, paper.text, spans, 0, paper.authors, paper.url, badge,
                           source, quote)
    return source_html(passage.title, passage.text, spans, passage.start, passage.authors,
                       passage.url, badge, source, quote, partial=True)


def empty_source_html() -> str:
    return ('<div class="rag-src rag-src-empty"><div class="rag-src-title"><span>Sources'
            '</span></div><p>Click a citation like <span class="rag-cite">1</span> or a source '
            'card under an answer to read the paper here, with the cited sentence highlighted.'
            '</p></div>')


def paper_list_html(papers: Sequence[Paper], total: int, query: str = "",
                    names: dict[str, str] | None = None) -> str:
    """The corpus tab's list: one clickable row per paper (`#rag:d/<paper id>`)."""
    names = names or {}
    if not papers:
        what = f" matching \u201c{esc(query)}\u201d" if query.strip() else ""
        return f'<div class="rag-empty">No papers{what}.</div>'
    rows = []
    for p in papers:
        tag = "upload" if p.source in names else ""
        extra = f'<span class="rag-tag">{esc(names[p.source])}</span>' if tag else ""
        rows.append(f'<a class="rag-row" href="#rag:d/{esc(p.id)}"><span class="rag-row-title">'
                    f'{inline(p.title)}</span>{extra}<span class="rag-row-authors">'
                    f'{esc(short_authors(p.authors))}</span></a>')
    noun = "paper" if total == 1 else "papers"
    shown = (f"Showing {len(papers)} of {total} {noun}" if len(papers) < total
             else f"{total} {noun}")
    what = f" matching \u201c{esc(query)}\u201d" if query.strip() else ""
    return (f'<div class="rag-count">{shown}{what}</div>'
            f'<div class="rag-rows">{"".join(rows)}</div>')


def upload_report_html(report) -> str:
    """What happened to each uploaded file: added, skipped as duplicate, rejected and why."""
    rows = []
    for a in report.added:
        rows.append(("added", a.name, f"indexed as \u201c{a.title}\u201d"))
    for d in report.duplicates:
        rows.append(("duplicate", d.name, d.reason))
    for r in report.rejected:
        rows.append(("rejected", r.name, r.reason))
    if not rows:
        return '<div class="rag-empty">No files were given.</div>'
    labels = {"added": "Added", "duplicate": "Skipped (duplicate)", "rejected": "Rejected"}
    body = "".join(f'<tr class="rag-up-{k}"><td><span class="rag-pill rag-pill-{k}">'
                   f'{labels[k]}</span></td><td class="rag-up-name">{esc(name)}</td>'
                   f'<td>{inline(why)}</td></tr>' for k, name, why in rows)
    head = esc(report.summary())
    if getattr(report, "index", None) is not None:
        head += f" \u2014 the corpus now holds {report.index.papers} papers"
    return (f'<div class="rag-upload-report"><div class="rag-count">{head}</div>'
            f'<table><tbody>{body}</tbody></table></div>')


# -- copy / export ---------------------------------------------------------------------------


def export_markdown(answer: Answer) -> str:
    """The answer with its numbered references, then the quoted sentences, as Markdown."""
    out = [answer_to_markdown(answer).rstrip()]
    if any(c.quote for c in answer.citations):
        out += ["", "**Quoted**", ""]
        out += [f"[{c.n}] \u201c{c.quote}\u201d" for c in answer.citations if c.quote]
    return "\n".join(out) + "\n"


def export_csv(answer: Answer) -> str:
    """A table answer's table as CSV (values and their quotes); empty for another answer."""
    return table_csv(answer.table) if answer.table is not None else ""


def export_bibtex(answer: Answer) -> str:
    return answer_to_bibtex(answer)


def export_file_text(answer: Answer) -> str:
    """What the download button saves: the Markdown, then the BibTeX entries."""
    bib = export_bibtex(answer)
    return export_markdown(answer) + (f"\n```bibtex\n{bib}```\n" if bib else "")
