"""Stage 5, check: a `Written` becomes the `Answer` (`finish`, the engine's check stage and the
only road to an Answer).

- an abstention ("cannot answer", or a person's name no author has) keeps its own words;
- "the abstract does not state X" cites its paper unquoted;
- a table's stated cells cite the sentences they quote (verbatim by construction, numbered by
  the table writer);
- any other text has its `[n]` markers numbered and quoted (`citations.py`), and the list of
  checks (`support.py` `CHECKS`) runs once on it; a language model's text that is unfit,
  cites nothing or is not backed ends in its `draft` (the extractive answer), with a notice.

Example: finish(turn, Written("X holds [1].", "extractive", [p])) -> Answer(citations=[1: p]).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..answer.prompts import CANNOT_ANSWER, NOTICE_FALLBACK, NOTICE_UNCITED, NOTICE_UNSUPPORTED
from ..types import (CANNOT, NOT_STATED, TABLE, Answer, Citation, Passage, Turn, Written)
from .citations import check_citations
from .reply import is_abstention, unbacked, unfit
from .support import Check, evidence_for, run_checks


@dataclass(frozen=True)
class Checker:
    """What checking needs besides the turn: the checks, the embedder an LLM's paraphrases are
    compared with, whether an LLM sentence is held to the question's focus, and the name of
    the generator a fallback notice names."""

    checks: Sequence[Check]
    embedder: object
    llm_focus: bool
    generator: str


def abstention(turn: Turn, generator: str, notices: list[str], text: str = CANNOT_ANSWER,
               passages: list[Passage] | None = None) -> Answer:
    return Answer(question=turn.question, text=text or CANNOT_ANSWER, citations=[],
                  passages=turn.passages if passages is None else passages,
                  abstained=True, generator=generator, timings_ms={}, query=turn.query,
                  notices=notices, relevance=turn.relevance, decision=CANNOT)


def finish(turn: Turn, written: Written, checker: Checker) -> Answer:
    """The Answer of what the write stage wrote (module doc)."""
    common = dict(question=turn.question, text=written.text, generator=written.generator,
                  timings_ms={}, query=turn.query, notices=turn.notices,
                  relevance=turn.relevance, decision=written.decision)
    if written.decision == CANNOT:
        return abstention(turn, written.generator, turn.notices, written.text, written.shown)
    if written.decision == TABLE:  # its cells quote their sentences verbatim, numbered
        return Answer(**common, citations=written.citations, passages=written.shown,
                      abstained=False, table=written.table)
    if written.decision == NOT_STATED:
        return Answer(**common, citations=[Citation(n=1, passage=written.shown[0], quote="")],
                      passages=turn.whole, abstained=True)
    draft, reason = written.draft, written.failure
    if draft is None:
        return checked(turn, written, turn.notices, checker)[0]
    if reason is None:
        try:
            reason = unfit(written.text)
            if reason is None:
                answer, reason = checked(turn, written, turn.notices, checker)
                if reason is None:
                    return answer
        except Exception as exc:  # noqa: BLE001 - a backend bug must not cost the answer
            reason = f"unexpected {type(exc).__name__}"
    draft.notices.append(NOTICE_FALLBACK.format(generator=checker.generator, reason=reason))
    return draft


def checked(turn: Turn, written: Written, notices: list[str], checker: Checker
            ) -> tuple[Answer, str | None]:
    """`written` with its citations numbered and quoted and the checks run once (an
    abstention when it is empty or says it cannot answer), and for an LLM's text why it
    cannot be shown (`reply.unbacked`), if so."""
    reason = None
    person = bool(written.claims)
    if not person and (not written.text.strip() or is_abstention(written.text)):
        return abstention(turn, written.generator, notices), None
    text = check_citations(written.text, written.shown)
    judged = check_citations(written.claims, written.shown) if person else text
    llm = written.generator not in ("extractive", "metadata")
    focus = turn.query if llm and checker.llm_focus else ""
    evidence = evidence_for(judged, turn.idf, checker.embedder if llm else None, focus,
                            written.shown)
    run_checks(judged, evidence, checker.checks)
    if person:
        for sent, claim in zip(text.sentences, judged.sentences):
            sent.supported, sent.support = claim.supported, claim.support
    if llm:
        reason = unbacked(text)
        unsupported = sum(1 for s in text.sentences if s.unbacked)
        uncited = sum(1 for s in text.sentences if not s.citations)
        if reason is None and unsupported:
            notices.append(NOTICE_UNSUPPORTED.format(count=unsupported))
        if reason is None and uncited:
            notices.append(NOTICE_UNCITED.format(count=uncited))
    return Answer(question=turn.question, text=text.text, citations=text.citations,
                  passages=turn.passages, abstained=False, generator=written.generator,
                  timings_ms={}, sentences=text.sentences, query=turn.query,
                  notices=notices if not person else list(notices),
                  relevance=turn.relevance, decision=written.decision), reason
