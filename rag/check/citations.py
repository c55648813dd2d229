"""The citation check, run once after any generator.

`check_citations(text, passages)`: every `[n]` must name a passage that was given to the
generator; unknown numbers are removed; citations are renumbered 1..m in order of first use, and
two passages of one paper share one number. Each citation gets the passage sentence(s) that best
support the answer sentences citing it (its quote, with paper-relative spans).

Example: "A [3]. B [1][3]. C [9]." with passages 1..3 -> "A [1]. B [2][1]. C." where [1] is old
passage 3 and [2] old passage 1; [9] is dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..ingest.chunking import split_sentences
from ..text import coverage
from ..types import AnswerSentence, Citation, Passage

# Any bracketed number list is a marker, however long its numbers: "[10000]" must be checked
# (and removed) like "[9]", or it would stay in the text as a citation nobody can follow.
MARKER = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")
_LIST_ITEM = re.compile(r"\s*([-*\u2022]|\d{1,2}[.)])\s+")
_MARKERS_AFTER_END = re.compile(r"([.!?])[ \t]*((?:\[\d+\][ \t]*)+)(?=\s|$)")


def markers_before_end(line: str) -> str:
    """'A claim. [1][2] Next' -> 'A claim [1][2]. Next': markers belong to their sentence."""
    return _MARKERS_AFTER_END.sub(lambda m: f" {m.group(2).strip()}{m.group(1)}", line)


@dataclass
class Checked:
    text: str
    citations: list[Citation]
    sentences: list[AnswerSentence]
    removed: list[int]  # numbers that named no passage


def check_citations(text: str, passages: list[Passage]) -> Checked:
    removed: list[int] = []
    number_of_paper: dict[str, int] = {}
    passage_of_number: dict[int, Passage] = {}

    def renumber(match: re.Match) -> str:
        out = []
        for raw in re.split(r"\s*[,;]\s*", match.group(1)):
            n = int(raw) if len(raw) <= 12 else 10**12  # int() refuses 4,300+ digits
            if not 1 <= n <= len(passages):
                removed.append(n)
                continue
            p = passages[n - 1]
            if p.paper_id not in number_of_paper:
                number_of_paper[p.paper_id] = len(number_of_paper) + 1
                passage_of_number[number_of_paper[p.paper_id]] = p
            new = number_of_paper[p.paper_id]
            if new not in out:
                out.append(new)
        return "".join(f"[{n}]" for n in out)

    lines = []
    for line in text.split("\n"):
        line = markers_before_end(MARKER.sub(renumber, line))
        line = re.sub(r"(\[\d+\])(?:\1)+", r"\1", line)  # "[1][1]" -> "[1]"
        line = _SPACE_BEFORE_PUNCT.sub(r"\1", re.sub(r"[ \t]{2,}", " ", line)).rstrip()
        lines.append(line)
    clean = "\n".join(lines).strip()
    sentences = answer_sentences(clean)
    citations = []
    for n, p in passage_of_number.items():
        claims = [s.text for s in sentences if n in s.citations]
        spans, quote = best_quote(" ".join(claims), p)
        citations.append(Citation(n=n, passage=p, quote=quote, spans=spans))
    citations.sort(key=lambda c: c.n)
    return Checked(clean, citations, sentences, removed)


def answer_sentences(text: str) -> list[AnswerSentence]:
    """The answer split into sentences (and list lines), each with its citation numbers."""
    out = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        line = markers_before_end(line)
        # A list item ("- Title: claim [n]") is one unit: titles may hold "?" or ". ".
        spans = [(0, len(line))] if _LIST_ITEM.match(line) else split_sentences(line)
        for s, e in spans:
            piece = line[s:e]
            nums = tuple(dict.fromkeys(int(n) for n in re.findall(r"\[(\d+)\]", piece)))
            bare = re.sub(r"\[\d+\]", "", piece).strip()
            if not bare.strip(" .-*"):
                # a lone marker split off its sentence belongs to the previous one
                if out and nums:
                    prev = out[-1]
                    out[-1] = AnswerSentence(prev.text + " " + piece,
                                             tuple(dict.fromkeys(prev.citations + nums)))
                continue
            out.append(AnswerSentence(piece, nums))
    return out


def best_quote(claim: str, passage: Passage, max_sentences: int = 2
               ) -> tuple[tuple[tuple[int, int], ...], str]:
    """The passage sentence(s) that best cover `claim`, with their paper-relative spans."""
    sents = passage.sentence_texts()
    if not sents:
        sents = [(passage.start + s, passage.start + e, passage.text[s:e])
                 for s, e in split_sentences(passage.text)]
    if not sents:
        return ((passage.start, passage.end),), passage.text
    bare = re.sub(r"\[\d+\]", "", claim)
    scored = sorted(range(len(sents)), key=lambda i: (-coverage(bare, sents[i][2]), i))
    best = scored[0]
    chosen = [best]
    if max_sentences > 1 and len(scored) > 1:
        nxt = scored[1]
        if coverage(bare, sents[nxt][2]) >= 0.5 * max(coverage(bare, sents[best][2]), 1e-9) \
                and coverage(bare, sents[nxt][2]) > 0.2:
            chosen.append(nxt)
    chosen.sort()
    spans = tuple((sents[i][0], sents[i][1]) for i in chosen)
    return spans, " ".join(sents[i][2] for i in chosen)
