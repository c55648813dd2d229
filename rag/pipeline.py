"""`ask()` and `ask_stream()`: a question cleaned, made into a `Turn`, and carried by the engine.

`factory.engine(settings)` gives the `Engine` assembled once for the settings (`rag/engine.py`:
route -> retrieve -> gate -> write -> check); this module only checks the question, builds the
turn and hands it over. An LLM answer is preceded by a `Draft` (the extractive answer, cited),
and a failing LLM backend never loses the answer (the draft stays, with a visible notice).
"""

from __future__ import annotations

import time
from typing import Any, Iterator, Sequence

from . import factory
from .answer.prompts import NOTICE_TRUNCATED
from .answer.rewrite import normalise_history
from .errors import InputError
from .settings import Settings
from .text import clean_question
from .types import Answer, Draft, Table, TableRequest, Turn


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
    return _final(ask_stream(question, history, settings, **overrides))


def table(topic: str, columns: Sequence[str], paper_ids: Sequence[str] = (),
          settings: Settings | None = None, **overrides: Any) -> Answer:
    """A table across papers (the engine's table route): rows are the papers found for `topic`
    (as a list finds them; the setting `table_rows` caps them) or the `paper_ids` given, columns
    the asked attributes. The Answer's `table` holds it; its text is the table in Markdown and
    its citations are the quoted sentences of the stated cells.

    Example: rag.table("KV cache compression", ["memory reduction", "benchmark"]).table
    """
    settings = settings or Settings.load()
    if overrides:
        settings = settings.replace(**overrides)
    columns = tuple(dict.fromkeys(" ".join(str(c).split()) for c in columns if str(c).strip()))
    topic = clean_question(topic) if isinstance(topic, str) else ""
    if not columns:
        raise InputError("give at least one column, e.g. --columns \"benchmark, speedup\"")
    if not topic and not paper_ids:
        raise InputError("give a topic (or the papers' ids) for the table's rows")
    request = TableRequest(topic or "the given papers", columns, tuple(paper_ids))
    question = f"Compare the papers on {request.topic} by {', '.join(columns)}"
    turn = Turn(question, [], [], time.perf_counter(), request=request)
    answer = _final(factory.engine(settings).run(turn))
    if answer.table is None:  # no paper found: an empty table, said plainly
        answer.table = Table(request.topic, columns, ())
    return answer


def _final(events: Iterator[str | Draft | Answer]) -> Answer:
    """The Answer an engine run ends with (the text pieces and a draft before it skipped)."""
    answer = None
    for event in events:
        if isinstance(event, Answer):
            answer = event
    assert answer is not None
    return answer


def ask_stream(question: str, history: Sequence | None = None, settings: Settings | None = None,
               **overrides: Any) -> Iterator[str | Draft | Answer]:
    """Like `ask`, but yields answer text pieces as they are generated, then the Answer; an LLM
    answer is preceded by a `Draft`, the cited evidence to show while the model writes."""
    settings = settings or Settings.load()
    if overrides:
        settings = settings.replace(**overrides)
    t0 = time.perf_counter()
    text, notices = prepare_question(question, settings)
    turn = Turn(text, normalise_history(history), notices, t0)
    yield from factory.engine(settings).run(turn)
