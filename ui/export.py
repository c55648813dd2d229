"""Plain-text and Markdown renderings of an Answer (the UI has its own HTML rendering), and
what the protocol endpoints (MCP, the OpenAI-compatible API) say about it."""

from __future__ import annotations

from rag.types import Answer


def answer_with_references(answer: Answer) -> str:
    """The answer with its `[n]` markers, then a short numbered reference list and any notes:
    what a chat client that knows nothing of citations shows.

    Example: "Kernels X avoid it [1].\n\nReferences:\n[1] Title <https://...>"
    """
    out = [answer.text]
    if answer.citations:
        out += ["", "References:"]
        out += [f"[{c.n}] {c.passage.title}" + (f" <{c.passage.url}>" if c.passage.url else "")
                for c in answer.citations]
    if answer.notices:
        out += [""] + [f"Note: {note}" for note in answer.notices]
    return "\n".join(out)


def answer_to_text(answer: Answer) -> str:
    lines = [answer.text, ""]
    for note in answer.notices:
        lines.append(f"note: {note}")
    if answer.abstained and answer.passages:
        lines.append("You may be looking for:")
        lines += [f"  - {p.title}" for p in answer.passages[:3]]
    for c in answer.citations:
        lines.append(f"[{c.n}] {c.passage.title}" + (f" <{c.passage.url}>" if c.passage.url else ""))
        if c.quote:  # a "does not state" answer cites its paper without quoting it
            lines.append(f"    \u201c{c.quote}\u201d")
    t = answer.timings_ms
    lines.append(f"({answer.generator}; retrieve {t.get('retrieve', 0):.0f} ms, generate "
                 f"{t.get('generate', 0):.0f} ms)")
    return "\n".join(lines).rstrip()


def evidence_to_text(draft: Answer) -> str:
    """The evidence shown while a language model writes: the extractive answer and its
    papers."""
    return "\n".join([draft.text, *(f"[{c.n}] {c.passage.title}" for c in draft.citations)])


def answer_to_markdown(answer: Answer) -> str:
    """The answer with a numbered reference list, for copy/export."""
    out = [f"**Q:** {answer.question}", "", answer.text, ""]
    if answer.citations:
        out.append("**References**")
        out.append("")
        for c in answer.citations:
            p = c.passage
            link = f" <{p.url}>" if p.url else ""
            authors = f" {p.authors}." if p.authors else ""
            out.append(f"[{c.n}] {p.title}.{authors} ICML 2024.{link}")
    return "\n".join(out).rstrip() + "\n"


def papers_of(answer: Answer) -> list:
    """The papers an answer is about, once each, in order: a table's rows, else the cited
    papers (an answer's, a list's, a person's)."""
    passages = answer.passages if answer.table is not None else [c.passage for c in
                                                                  answer.citations]
    return list({p.paper_id: p for p in passages}.values())


def answer_to_bibtex(answer: Answer) -> str:
    """BibTeX entries for the papers of any answer (`papers_of`), from the corpus metadata."""
    return papers_bibtex(papers_of(answer))


def papers_bibtex(papers) -> str:
    """BibTeX entries (title, authors, booktitle, year, URL) for passages' papers."""
    entries = []
    for p in papers:
        key = p.paper_id.replace("icml2024-poster-", "icml2024_")
        authors = " and ".join(a.strip() for a in p.authors.split(",") if a.strip())
        fields = [f"  title = {{{p.title}}}"]
        if authors:
            fields.append(f"  author = {{{authors}}}")
        fields.append("  booktitle = {Proceedings of the 41st International Conference on "
                      "Machine Learning (ICML 2024)}")
        fields.append("  year = {2024}")
        if p.url:
            fields.append(f"  url = {{{p.url}}}")
        entries.append(f"@inproceedings{{{key},\n" + ",\n".join(fields) + "\n}")
    return "\n\n".join(entries) + ("\n" if entries else "")
