"""The table writer: papers by asked attributes, every cell cited or "not stated".

The gate stage read the cells (`retrieve/cells.py`: the sentence of each paper's abstract that
states each column's value, or none). Here each stated cell gets its short value, cut from that
sentence by rule (`cell_value`), and a numbered citation quoting the sentence; a cell the
reader found no sentence for says "not stated" and cites nothing. The answer's text is the
table in Markdown, with the `[n]` markers in its cells, which every door shows as it is (the UI
draws it as an HTML table, `ui/render.py`).

Example (topic "KV cache compression", column "memory reduction"):
    | Paper | memory reduction |
    |---|---|
    | [KIVI](https://...) | 2.6x less peak memory [1] |
    | [Another](https://...) | not stated |
"""

from __future__ import annotations

import re
from typing import Sequence

from ..lexicon import CLAUSE_BREAKS, CODE_COLUMNS, QUANTITY_LEADS, QUANTITY_NOUNS, QUANTITY_SCALES
from ..retrieve.cells import Reading
from ..text import content_terms
from ..types import Cell, Citation, Passage, Table, TableRow

NOT_STATED_CELL = "not stated"
MAX_VALUE_WORDS = 12


def _alt(words) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


# A quantity: "2.6x", "40%", "3,668", "1.5B parameters", "up to 8 times"
_QUANTITY = re.compile(rf"(?:(?:{_alt(QUANTITY_LEADS)})\s)?[~≈]?\d[\d,.]*\s*(?:%|x|×|"
                       rf"[kKMBT]\b|(?:{_alt(QUANTITY_SCALES)})\b)?"
                       rf"(?:\s+(?:{_alt(QUANTITY_NOUNS)})\b)?", re.I)
_URL = re.compile(r"https?://\S+[^\s.,;)]")
_CLAUSES = re.compile(rf"\s*(?:[,;]|:(?!//)|\s-\s|\b(?:{_alt(CLAUSE_BREAKS)})\b)\s*")


def cell_value(sentence: str, column: str) -> str:
    """The short value of a cell, cut from the sentence that states it: the link, for a column
    about code; its quantities when it holds any; else the clause that shares most words with the column (the first one on a tie),
    cut to MAX_VALUE_WORDS words.
    Example: cell_value("KIVI reduces peak memory by 2.6x while keeping quality.", "memory") ->
    "2.6x"."""
    text = " ".join(sentence.split()).rstrip(".")
    url = _URL.search(text)
    if url and set(column.lower().split()) & CODE_COLUMNS:
        return url.group(0)
    numbers = [m.group(0).strip(" ,.") for m in _QUANTITY.finditer(text)]
    numbers = [n for n in numbers if not re.fullmatch(r"(?:19|20)\d\d", n)]
    with_unit = [n for n in numbers if not re.fullmatch(r"[~≈]?[\d,.]+", n)]
    if with_unit or len(numbers) == 1:  # bare numbers beside others: counts, not the value
        return ", ".join(dict.fromkeys((with_unit or numbers)[:3]))
    words = content_terms(column)
    clauses = [c for c in _CLAUSES.split(text) if c and len(c.split()) >= 2] or [text]
    best = max(clauses, key=lambda c: (len(words & content_terms(c)), -clauses.index(c)))
    cut = best.split()
    return " ".join(cut[:MAX_VALUE_WORDS]) + (" \u2026" if len(cut) > MAX_VALUE_WORDS else "")


def build_table(topic: str, columns: Sequence[str], papers: list[Passage],
                readings: list[list[Reading]]) -> tuple[Table, list[Citation]]:
    """The table of `papers` (rows) by `columns`, from the gate's readings, and the citations
    its stated cells make, numbered in reading order (a sentence cited twice keeps its number)."""
    citations: list[Citation] = []
    numbered: dict[tuple[str, int], int] = {}
    rows = []
    for paper, row in zip(papers, readings):
        sentences = paper.sentence_texts()
        cells = {}
        for reading in row:
            if not reading.stated or reading.sentence < 0:
                cells[reading.column] = Cell(None, None, False, score=reading.score)
                continue
            start, end, quote = sentences[reading.sentence]
            quote = quote.strip()
            key = (paper.paper_id, reading.sentence)
            if key not in numbered:
                numbered[key] = len(citations) + 1
                citations.append(Citation(numbered[key], paper, quote, ((start, end),)))
            cells[reading.column] = Cell(cell_value(quote, reading.column), quote, True,
                                         numbered[key], reading.score)
        rows.append(TableRow(paper.paper_id, paper.title, paper.url, cells))
    return Table(topic, tuple(columns), tuple(rows)), citations


def _md(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def table_markdown(table: Table) -> str:
    """The table as Markdown, each stated cell followed by its `[n]`."""
    head = ["Paper", *table.columns]
    lines = ["| " + " | ".join(_md(h) for h in head) + " |",
             "|" + "---|" * len(head)]
    for row in table.rows:
        title = f"[{_md(row.title)}]({row.url})" if row.url else _md(row.title)
        cells = [f"{_md(c.value or '')} [{c.citation}]" if c.stated else NOT_STATED_CELL
                 for c in (row.cells[col] for col in table.columns)]
        lines.append("| " + " | ".join([title, *cells]) + " |")
    return "\n".join(lines)


def table_text(table: Table) -> str:
    """The answer's text: one line saying what the table is, then the table."""
    stated = sum(c.stated for r in table.rows for c in r.cells.values())
    total = len(table.rows) * len(table.columns)
    papers = f"{len(table.rows)} paper{'s' if len(table.rows) != 1 else ''}"
    return (f"{papers} on {table.topic} by {', '.join(table.columns)}; "
            f"{stated} of {total} cells are stated in the abstracts, each cited:\n\n"
            + table_markdown(table))


def table_csv(table: Table) -> str:
    """The table as CSV: paper, url, then each column's value and its quote."""
    import csv
    import io

    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["paper_id", "title", "url"] + [f"{c}{part}" for c in table.columns
                                               for part in ("", " (quote)")])
    for row in table.rows:
        values = []
        for col in table.columns:
            cell = row.cells[col]
            values += [cell.value if cell.stated else NOT_STATED_CELL, cell.quote or ""]
        w.writerow([row.paper_id, row.title, row.url] + values)
    return out.getvalue()
