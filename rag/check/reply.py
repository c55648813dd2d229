"""Reading an LLM's reply before it is shown: is it an abstention, which sentences it left
uncited can be attributed, and is it fit to show at all (`output_problem`)? A reply that is
not ends in the extractive answer, with a notice naming the reason.
"""

from __future__ import annotations

import re
from typing import Sequence

from ..answer.extractive import cite
from ..answer.prompts import (CANNOT_ANSWER, REASON_EMPTY, REASON_GARBAGE, REASON_NO_CITATIONS,
                              REASON_UNSUPPORTED)
from ..ingest.chunking import split_sentences
from ..text import content_terms, coverage
from ..types import Passage
from .citations import MARKER, Checked, check_citations
from .support import MIN_COVERAGE, check_support

_REFUSAL = re.compile(r"\b(?:abstracts?|passages?|papers?|documents?|context)\b[^.\n]{0,40}?"
                      r"\b(?:do(?:es)?\s*n[o']?t|cannot|can't|fails? to)\s+(?:\w+\s+){0,2}?"
                      r"(?:answer|contain|address|cover|mention|say|state|provide)", re.I)


def is_abstention(text: str) -> bool:
    """The sentinel, or (in an answer citing nothing) a paraphrase of it such as "The abstracts
    do not answer this question." that small models write instead."""
    if CANNOT_ANSWER.lower().rstrip(".") in text.lower():
        return True
    return not MARKER.search(text) and bool(_REFUSAL.search(text))


def attribute_citations(raw: str, shown: Sequence[Passage], idf=None) -> str:
    """`raw` with a marker added to each uncited sentence that one shown passage clearly backs.

    Small models often cite only the last sentence, or none ("HesScale builds on BL89.").
    A sentence with no marker gets `[n]` of the passage covering the most of its content words,
    if that passage covers at least `support.MIN_COVERAGE` of them; otherwise it stays uncited
    and is flagged. The support check still runs on the result, as on any answer.

    Example: "HesScale builds on BL89." with passage 1 saying so -> "HesScale builds on BL89 [1]."
    """
    if is_abstention(raw):
        return raw
    lines = []
    for line in raw.split("\n"):
        spans = split_sentences(line)
        out, cursor = [], 0
        for i, (s, e) in enumerate(spans):
            out.append(line[cursor:s])
            cursor = e
            piece = line[s:e]
            after = line[e:spans[i + 1][0]] if i + 1 < len(spans) else line[e:]
            lone_marker_next = i + 1 < len(spans) and not MARKER.sub(
                "", line[spans[i + 1][0]:spans[i + 1][1]]).strip(" .")
            if MARKER.search(piece) or MARKER.search(after) or lone_marker_next:
                out.append(piece)
                continue
            n = _supporting_passage(piece, shown, idf)
            out.append(cite(piece, n) if n else piece)
        out.append(line[cursor:])
        lines.append("".join(out))
    return "\n".join(lines)


def _supporting_passage(sentence: str, shown: Sequence[Passage], idf=None) -> int | None:
    body = sentence.strip(" -*")
    if len(content_terms(body)) < 3:
        return None
    scores = [coverage(body, f"{p.title}. {p.text}", idf) for p in shown]
    if not scores or max(scores) < MIN_COVERAGE:
        return None
    return scores.index(max(scores)) + 1


def output_problem(raw: str, shown: Sequence[Passage], embedder=None, idf=None,
                   question: str = "") -> str | None:
    """Why an LLM's answer cannot be shown as it is, or None when it can.

    An abstention can; otherwise the answer must be readable text that cites at least one
    passage the model was shown, with at least one sentence its citations support. (The
    engine runs the same three steps, checking the answer once: `unfit`, its checks, then
    `unbacked`.)"""
    reason = unfit(raw)
    if reason is not None or is_abstention(raw):
        return reason
    checked = check_citations(raw.strip(), list(shown))
    check_support(checked, embedder, idf, question, shown)
    return unbacked(checked)


def unfit(raw: str) -> str | None:
    """Why the reply is no answer at all (empty, unreadable), before any check; else None."""
    text = raw.strip()
    if not text:
        return REASON_EMPTY
    if is_abstention(text):
        return None
    readable = sum(ch.isalnum() or ch.isspace() or ch in _PUNCT for ch in text)
    if readable < 0.8 * len(text) or text.count("\ufffd") > 2:
        return REASON_GARBAGE
    return None


def unbacked(checked: Checked) -> str | None:
    """Why the checked reply cannot be shown: it cites nothing shown, or no sentence of it is
    supported; else None."""
    if not checked.citations:
        return REASON_NO_CITATIONS
    if not any(s.supported for s in checked.sentences if s.citations):
        return REASON_UNSUPPORTED
    return None


_PUNCT = ".,;:!?'\"()[]-\u2013\u2014/%+=<>&*#"
