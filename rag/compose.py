"""Writing the answer once the gate lets it through: the extractive reader, or a language model
with the evidence shown first.

- `consult`: before an LLM writes, its P(YES) that the evidence states the answer revises the
  gate's "answer" verdict (`answer/verdict.py`); the model can only turn an answer into "not
  stated" or an abstention, never the reverse.
- `write`: the extractive reader yields its answer and is done. An LLM generator first gets a
  `Draft`: the extractive answer (cited, checked, ~30 ms), which the chat and `rag ask` show at
  once; then the model's text as it streams; then its checked Answer. Whatever goes wrong with
  the model (an error before or during the stream, a stall, an empty, unreadable, uncited or
  wholly unsupported answer) ends in the draft with a notice saying why.
- `finish`: citations checked and support checked, whoever wrote the text.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .answer import Generator, History
from .answer.prompting import Prompt
from .answer.prompts import CANNOT_ANSWER, NOTICE_FALLBACK, NOTICE_UNCITED, NOTICE_UNSUPPORTED
from .answer.verdict import combination_for, second_opinion
from .check.citations import check_citations
from .check.reply import attribute_citations, is_abstention, output_problem
from .check.support import check_support, prune_citations
from .errors import GeneratorError
from .retrieve.answerability import ANSWER, Verdict
from .types import Answer, Draft, Passage

if TYPE_CHECKING:
    from .pipeline import Pipeline


def shown(pipe: "Pipeline", whole: list[Passage], listing: Generator | None = None
          ) -> list[Passage]:
    """The papers the LLM reads: `local_passages` of them for the local model, `list_limit`
    for a list."""
    out = whole[: pipe.settings.local_passages] if pipe.generator_name == "local" else whole
    return out[: pipe.settings.list_limit] if listing is not None else out


def consult(pipe: "Pipeline", question: str, whole: list[Passage], history: History,
            verdict: Verdict, timings: dict) -> Verdict:
    """The gate's verdict revised by the LLM's P(YES), when the gate would answer, the setting
    is on and the model has a fitted combination; otherwise (or if the model fails: its answer
    will fall back with the reason) the gate's verdict."""
    if verdict.decision != ANSWER or not pipe.settings.llm_verdict:
        return verdict
    t0 = time.perf_counter()
    try:
        gen = pipe.generator()
        combo = combination_for(getattr(gen, "model", ""))
        if combo is None or not hasattr(gen, "verdict"):
            return verdict
        yes = gen.verdict(question, shown(pipe, whole), history)
    except Exception:  # noqa: BLE001 - writing the answer meets the same failure and says why
        return verdict
    timings["verdict"] = (time.perf_counter() - t0) * 1000
    return second_opinion(verdict, yes, combo)


def write(pipe: "Pipeline", question: str, query: str, passages: list[Passage],
          whole: list[Passage], history: History, notices: list[str], t0: float,
          timings: dict, listing: Generator | None, score: float):
    """The checked Answer (returned), streaming its text pieces (and an LLM's `Draft` first)."""
    ext = listing or pipe.reader()[1]
    asked = query if listing is None else question  # the reader reads the standalone query
    if pipe.generator_name == "extractive":
        pieces: list[str] = []
        for piece in _timed(ext.generate(asked, whole, history), t0, timings):
            pieces.append(piece)
            yield piece
        return finish(pipe, question, query, "".join(pieces), passages, whole, ext.name,
                      notices, score)
    draft = finish(pipe, question, query, "".join(ext.generate(asked, whole, history)),
                   passages, whole, ext.name, list(notices), score)
    if not draft.abstained:
        timings["draft"] = (time.perf_counter() - t0) * 1000
        yield Draft(draft)
    name, seen, pieces = pipe.generator_name, shown(pipe, whole, listing), []
    try:
        gen = pipe.generator()
        for piece in _timed(gen.generate(question, seen, history), t0, timings):
            if isinstance(piece, Prompt):
                seen = seen[: piece.passages]
                notices.extend(piece.notices)
                continue
            pieces.append(piece)
            yield piece
        idf = pipe.reader()[0]
        raw = prune_citations(attribute_citations("".join(pieces), seen, idf), seen, idf)
        reason = output_problem(raw, seen, pipe.embedder, idf, _focus(pipe, query))
        if reason is None:
            return finish(pipe, question, query, raw, passages, seen, gen.name, notices, score)
    except GeneratorError as exc:
        reason = str(exc)
    except Exception as exc:  # a backend bug must not cost the user the answer
        reason = f"unexpected {type(exc).__name__}"
    draft.notices.append(NOTICE_FALLBACK.format(generator=name, reason=reason))
    return draft


def finish(pipe: "Pipeline", question: str, query: str, raw: str, passages: list[Passage],
           seen: list[Passage], gen: str, notices: list[str], score: float) -> Answer:
    """`raw` with its citations and support checked against the passages `seen` (an
    abstention when it is empty or says it cannot answer)."""
    if not raw.strip() or is_abstention(raw):
        return abstain(question, query, passages, gen, notices, score)
    checked = check_citations(raw, seen)
    llm = gen != "extractive"
    check_support(checked, pipe.embedder if llm else None, pipe.reader()[0],
                  _focus(pipe, query) if llm else "", seen)
    if llm:
        unsupported = sum(1 for s in checked.sentences if s.unbacked)
        uncited = sum(1 for s in checked.sentences if not s.citations)
        if unsupported:
            notices.append(NOTICE_UNSUPPORTED.format(count=unsupported))
        if uncited:
            notices.append(NOTICE_UNCITED.format(count=uncited))
    return Answer(question=question, text=checked.text, citations=checked.citations,
                  passages=passages, abstained=False, generator=gen, timings_ms={},
                  sentences=checked.sentences, query=query, notices=notices, relevance=score)


def abstain(question: str, query: str, passages: list[Passage], gen: str, notices: list[str],
            score: float) -> Answer:
    return Answer(question=question, text=CANNOT_ANSWER, citations=[], passages=passages,
                  abstained=True, generator=gen, timings_ms={}, query=query, notices=notices,
                  relevance=score)


def _focus(pipe: "Pipeline", query: str) -> str:
    """The question an LLM's sentences are held to (`check/focus.py`), unless the setting is off."""
    return query if pipe.settings.llm_focus else ""


def _timed(pieces, t0: float, timings: dict):
    for piece in pieces:
        if isinstance(piece, str) and piece and "first_token" not in timings:
            timings["first_token"] = (time.perf_counter() - t0) * 1000
        yield piece
