"""`ask()`: question -> retrieval -> abstention gate -> generator -> citation check -> Answer.

A failing LLM backend never loses the answer: the extractive generator answers instead, with a
visible notice. Follow-ups are rewritten into a standalone query before retrieval.
"""

from __future__ import annotations

import time
from typing import Any, Iterator, Sequence

from . import factory
from .answer import History
from .answer.prompting import Prompt
from .answer.prompts import (CANNOT_ANSWER, NOTICE_FALLBACK, NOTICE_TRUNCATED, NOTICE_UNCITED,
                             NOTICE_UNSUPPORTED)
from .answer.rewrite import normalise_history, standalone_query
from .check.citations import check_citations
from .check.reply import attribute_citations, is_abstention, output_problem
from .check.support import check_support, prune_citations
from .errors import GeneratorError, InputError
from .retrieve.gate import passes, relevance
from .settings import Settings
from .text import clean_question
from .types import Answer, Passage

def prepare_question(question: Any, settings: Settings) -> tuple[str, list[str]]:
    """The cleaned question and any notice; InputError for an empty or non-text question."""
    if not isinstance(question, str):
        raise InputError("the question must be text")
    text = clean_question(question)
    if not text:
        raise InputError("the question is empty; type a question about the indexed papers")
    notices = []
    if len(text) > settings.max_question_chars:
        text = text[: settings.max_question_chars].rsplit(" ", 1)[0] or text[: settings.max_question_chars]
        notices.append(NOTICE_TRUNCATED.format(limit=settings.max_question_chars))
    return text, notices


def ask(question: str, history: Sequence | None = None, settings: Settings | None = None,
        **overrides: Any) -> Answer:
    """Answer `question` from the indexed abstracts, with checked citations.

    Args:
        question: the user's question.
        history: earlier (question, answer) pairs, or chat messages, oldest first.
        settings: a Settings object; built from defaults, config file and env when omitted.
        **overrides: any Settings field, e.g. `k=3`, `retriever="bm25"`, `corpus="icml2024"`.
    """
    answer = None
    for event in ask_stream(question, history, settings, **overrides):
        if isinstance(event, Answer):
            answer = event
    assert answer is not None
    return answer


def ask_stream(question: str, history: Sequence | None = None, settings: Settings | None = None,
               **overrides: Any) -> Iterator[str | Answer]:
    """Like `ask`, but yields answer text pieces as they are generated, then the Answer."""
    settings = settings or Settings.load()
    if overrides:
        settings = settings.replace(**overrides)
    t0 = time.perf_counter()
    text, notices = prepare_question(question, settings)
    turns = normalise_history(history)
    timings: dict[str, float] = {}
    llm = None if factory.generator_name(settings) == "extractive" else (
        lambda: factory.generator(settings))
    query = standalone_query(text, turns, llm)
    if query != text:
        timings["rewrite"] = (time.perf_counter() - t0) * 1000
    retriever = factory.retriever(settings)
    passages = retriever.retrieve(query, settings.k, settings.max_per_paper)
    t1 = time.perf_counter()
    gen_name = factory.generator_name(settings)
    score = relevance(passages)
    if not passes(passages, settings.abstain_threshold):
        answer = _abstain(text, query, passages, gen_name, notices, score)
    else:
        raw, gen_name, shown = yield from _generate(settings, text, passages, turns, notices,
                                                    t0, timings)
        answer = _finish(text, query, raw, passages, shown, gen_name, notices, score, settings)
    t2 = time.perf_counter()
    answer.timings_ms = {"retrieve": (t1 - t0) * 1000, "generate": (t2 - t1) * 1000,
                         "total": (t2 - t0) * 1000, **timings}
    yield answer


def _generate(settings: Settings, question: str, passages: list[Passage], history: History,
              notices: list[str], t0: float, timings: dict):
    """(raw text, generator name, passages the generator was shown); streams the pieces.

    Every generator reads each passage's whole abstract (`whole_papers`). An LLM generator
    first yields the `Prompt` it sent (how many passages fit, any notice), then text.
    Sentences it left uncited get the shown passage that clearly supports them
    (`attribute_citations`), and citations their passage does not back are dropped
    (`prune_citations`). Whatever goes wrong with an LLM (an error before or during the
    stream, a stall, an empty, unreadable, uncited or wholly unsupported answer) ends in the
    extractive answer with a notice."""
    name = factory.generator_name(settings)
    pieces: list[str] = []
    passages = whole_papers(settings, passages)
    if name == "extractive":
        gen = factory.extractive(settings)
        for piece in _timed(gen.generate(question, passages, history), t0, timings):
            pieces.append(piece)
            yield piece
        return "".join(pieces), gen.name, passages
    shown = passages[: settings.local_passages] if name == "local" else passages
    try:
        gen = factory.generator(settings)
        for piece in _timed(gen.generate(question, shown, history), t0, timings):
            if isinstance(piece, Prompt):
                shown = shown[: piece.passages]
                notices.extend(piece.notices)
                continue
            pieces.append(piece)
            yield piece
        idf = factory.idf(settings)
        raw = prune_citations(attribute_citations("".join(pieces), shown, idf), shown, idf)
        problem = output_problem(raw, shown, factory.embedder(settings), idf)
        if problem is None:
            return raw, gen.name, shown
        reason = problem
    except GeneratorError as exc:
        reason = str(exc)
    except Exception as exc:  # a backend bug must not cost the user the answer
        reason = f"unexpected {type(exc).__name__}"
    notices.append(NOTICE_FALLBACK.format(generator=name, reason=reason))
    ext = factory.extractive(settings)
    return "".join(ext.generate(question, passages, history)), ext.name, passages


def whole_papers(settings: Settings, passages: list[Passage]) -> list[Passage]:
    """Each passage grown to its paper's whole abstract, for the generator to read: a chunk may
    hold half an abstract, and the answer may sit in the other half (seed evals: key-fact
    recall of the extractive answer 0.507 -> 0.517). Citations and the support check then quote
    from the whole abstract, at the same paper-relative offsets."""
    snap = factory.index(settings).snapshot()
    return [snap.whole_paper(p) for p in passages]


def _timed(pieces, t0: float, timings: dict):
    for piece in pieces:
        if isinstance(piece, str) and piece and "first_token" not in timings:
            timings["first_token"] = (time.perf_counter() - t0) * 1000
        yield piece


def _abstain(question: str, query: str, passages: list[Passage], gen: str, notices: list[str],
             score: float) -> Answer:
    return Answer(question=question, text=CANNOT_ANSWER, citations=[], passages=passages,
                  abstained=True, generator=gen, timings_ms={}, query=query, notices=notices,
                  relevance=score)


def _finish(question: str, query: str, raw: str, passages: list[Passage], shown: list[Passage],
            gen: str, notices: list[str], score: float, settings: Settings) -> Answer:
    if not raw.strip() or is_abstention(raw):
        return _abstain(question, query, passages, gen, notices, score)
    checked = check_citations(raw, shown)
    check_support(checked, factory.embedder(settings) if gen != "extractive" else None,
                  factory.idf(settings))
    if gen != "extractive":
        unsupported = sum(1 for s in checked.sentences if s.unbacked)
        uncited = sum(1 for s in checked.sentences if not s.citations)
        if unsupported:
            notices.append(NOTICE_UNSUPPORTED.format(count=unsupported))
        if uncited:
            notices.append(NOTICE_UNCITED.format(count=uncited))
    return Answer(question=question, text=checked.text, citations=checked.citations,
                  passages=passages, abstained=False, generator=gen, timings_ms={},
                  sentences=checked.sentences, query=query, notices=notices, relevance=score)
