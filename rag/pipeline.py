"""`ask()`: question -> retrieval -> abstention gate -> generator -> citation check -> Answer.

A failing LLM backend never loses the answer: the extractive generator answers instead, with a
visible notice. Follow-ups are rewritten into a standalone query before retrieval.
"""

from __future__ import annotations

import re
import time
from typing import Any, Iterator, Sequence

from . import factory
from .citations import check_citations
from .errors import GeneratorError, InputError
from .gate import passes, relevance
from .generate import History
from .prompts import CANNOT_ANSWER, NOTICE_FALLBACK, NOTICE_TRUNCATED, NOTICE_UNSUPPORTED
from .settings import Settings
from .support import check_support
from .text import clean_question, content_terms
from .types import Answer, Passage

_FOLLOW_UP = re.compile(r"\b(they|them|their|it|its|this|that|these|those|the paper|the method|"
                        r"the authors|the model|same|above|previous|mentioned)\b", re.I)


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


def rewrite_query(question: str, history: History) -> str:
    """A standalone query for a follow-up, by rule: borrow the previous question's terms when
    this one refers back to it ('what data did they use?') or is too short to stand alone."""
    if not history:
        return question
    previous = clean_question(str(history[-1][0]))
    if _FOLLOW_UP.search(question) or len(content_terms(question)) <= 2:
        return f"{previous} {question}"
    return question


def _normalise_history(history: Sequence | None) -> list[tuple[str, str]]:
    out = []
    for turn in history or ():
        if isinstance(turn, dict):  # {"role": ..., "content": ...} messages
            if turn.get("role") == "user":
                out.append((str(turn.get("content", "")), ""))
            elif out and turn.get("role") == "assistant":
                out[-1] = (out[-1][0], str(turn.get("content", "")))
        else:
            q, a = turn
            out.append((str(q), str(a)))
    return out


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
    turns = _normalise_history(history)
    query = rewrite_query(text, turns)
    retriever = factory.retriever(settings)
    passages = retriever.retrieve(query, settings.k, settings.max_per_paper)
    t1 = time.perf_counter()
    gen_name = factory.generator_name(settings)
    score = relevance(passages)
    if not passes(passages, settings.abstain_threshold):
        answer = _abstain(text, query, passages, gen_name, notices, score)
    else:
        raw, gen_name = yield from _generate(settings, text, passages, turns, notices)
        answer = _finish(text, query, raw, passages, gen_name, notices, score, settings)
    t2 = time.perf_counter()
    answer.timings_ms = {"retrieve": (t1 - t0) * 1000, "generate": (t2 - t1) * 1000,
                         "total": (t2 - t0) * 1000}
    yield answer


def _generate(settings: Settings, question: str, passages: list[Passage], history: History,
              notices: list[str]):
    name = factory.generator_name(settings)
    pieces: list[str] = []
    try:
        gen = factory.generator(settings)
        if name != "extractive":
            passages = passages[: settings.local_passages] if name == "local" else passages
        for piece in gen.generate(question, passages, history):
            pieces.append(piece)
            yield piece
        return "".join(pieces), gen.name
    except GeneratorError as exc:
        if name == "extractive":
            raise
        notices.append(NOTICE_FALLBACK.format(generator=name, reason=str(exc)))
        ext = factory.extractive(settings)
        return "".join(ext.generate(question, passages, history)), ext.name


def _abstain(question: str, query: str, passages: list[Passage], gen: str, notices: list[str],
             score: float) -> Answer:
    return Answer(question=question, text=CANNOT_ANSWER, citations=[], passages=passages,
                  abstained=True, generator=gen, timings_ms={}, query=query, notices=notices,
                  relevance=score)


def _finish(question: str, query: str, raw: str, passages: list[Passage], gen: str,
            notices: list[str], score: float, settings: Settings) -> Answer:
    if not raw.strip() or CANNOT_ANSWER.lower().rstrip(".") in raw.lower():
        return _abstain(question, query, passages, gen, notices, score)
    checked = check_citations(raw, passages)
    check_support(checked, factory.embedder(settings) if gen != "extractive" else None)
    unsupported = sum(1 for s in checked.sentences if not s.supported)
    if unsupported and gen != "extractive":
        notices.append(NOTICE_UNSUPPORTED.format(count=unsupported))
    return Answer(question=question, text=checked.text, citations=checked.citations,
                  passages=passages, abstained=False, generator=gen, timings_ms={},
                  sentences=checked.sentences, query=query, notices=notices, relevance=score)
