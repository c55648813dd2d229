"""`ask()`: question -> retrieval -> abstention gate -> generator -> citation check -> Answer.

`factory.pipeline(settings)` assembles a `Pipeline` once per settings: the index, its
retriever, the extractive reader, the generator `auto` resolves to, the IDF table and the
embedder the checks use. `ask_stream` gets it once and runs its stages in order. Writing the
answer is `compose.py`: an LLM first shows the extractive answer as a `Draft`, and a failing LLM
backend never loses the answer (the draft stays, with a visible notice). Follow-ups are
rewritten into a standalone query before retrieval.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Iterator, Sequence

from . import compose, factory
from .answer import Generator, History
from .answer.extractive import Extractive
from .answer.listing import lister
from .answer.not_stated import not_stated
from .answer.prompts import NOTICE_TRUNCATED
from .answer.rewrite import normalise_history, standalone_query
from .check.metadata import metadata_answer
from .errors import InputError
from .index.bm25 import idf_table
from .index.opened import Index
from .models.embedders import Embedder
from .retrieve.answerability import ABSTAIN, NOT_STATED, Verdict, decide
from .retrieve.background import background
from .retrieve.gate import relevance
from .retrieve.signals import Signals, compute
from .retrieve.retrievers import Retriever
from .retrieve.search import search
from .settings import Settings
from .text import Idf, clean_question
from .types import Answer, Draft, Passage


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
               **overrides: Any) -> Iterator[str | Draft | Answer]:
    """Like `ask`, but yields answer text pieces as they are generated, then the Answer; an LLM
    answer is preceded by a `Draft`, the cited evidence to show while the model writes."""
    settings = settings or Settings.load()
    if overrides:
        settings = settings.replace(**overrides)
    t0 = time.perf_counter()
    text, notices = prepare_question(question, settings)
    turns = normalise_history(history)
    yield from factory.pipeline(settings).run(text, turns, notices, t0)


class Pipeline:
    """The stages assembled for one `Settings`, shared by every question asked with them.

    It holds no per-question state: the reader (IDF table and extractive generator) follows the
    index's snapshot, the LLM generator is made on first use (a failure to make it is a fallback,
    as when it fails later), and both are kept under a lock."""

    def __init__(self, settings: Settings, generator_name: str, index: Index,
                 retriever: Retriever, embedder: Embedder, make_generator: Callable[[], Generator]):
        self.settings, self.generator_name = settings, generator_name
        self.index, self.retriever, self.embedder = index, retriever, embedder
        self._make_generator = make_generator
        self._generator: Generator | None = None
        self._reader: tuple | None = None  # (snapshot, idf, Extractive) of that snapshot
        self._lock = threading.Lock()
        self._generator_lock = threading.Lock()

    def reader(self) -> tuple[Idf, Extractive]:
        """The corpus's IDF table and the extractive generator using it, for the current
        snapshot of the index (rebuilt when another process changed the index)."""
        snap = self.index.snapshot()
        with self._lock:
            if self._reader is None or self._reader[0] is not snap:
                idf = idf_table(snap.bm25)
                self._reader = (snap, idf, Extractive(idf=idf))
            return self._reader[1], self._reader[2]

    def generator(self) -> Generator:
        """The LLM generator (`generator_name` is not extractive), made on first use."""
        with self._generator_lock:
            if self._generator is None:
                self._generator = self._make_generator()
            return self._generator

    def run(self, text: str, turns: History, notices: list[str], t0: float
            ) -> Iterator[str | Draft | Answer]:
        """The stages in order: query rewriting, retrieval, the gate, generation, the checks."""
        s, timings = self.settings, {}
        llm = None if self.generator_name == "extractive" else self.generator
        query = standalone_query(text, turns, llm)
        if query != text:
            timings["rewrite"] = (time.perf_counter() - t0) * 1000
        found = search(text, query, self.retriever, self.index, s)  # what the question asks
        query, passages = found.query, found.passages
        whole = [] if found.by_metadata else self.whole_papers(passages)  # gate and generator
        verdict = None if found.skip_gate else self.judge(query, whole)
        t1 = time.perf_counter()  # the model's veto counts as generation
        if verdict is not None and llm is not None:  # the LLM's P(YES) may veto an answer
            verdict = compose.consult(self, text, whole, turns, verdict, timings)
        score = verdict.answerable if verdict else relevance(passages)
        if found.by_metadata:  # a person's papers, from the author index
            answer = metadata_answer(text, found, self.reader()[0], notices)
        elif not passages or (verdict and verdict.decision == ABSTAIN):
            answer = compose.abstain(text, query, passages, self.generator_name, notices, score)
        elif verdict and verdict.decision == NOT_STATED:
            answer = not_stated(text, query, whole, notices, score)
        else:
            answer = yield from compose.write(
                self, text, query, passages, whole, turns, notices, t0, timings,
                lister(found, s.list_limit, self.reader()[0], notices), score)
        t2 = time.perf_counter()
        answer.timings_ms = {"retrieve": (t1 - t0) * 1000, "generate": (t2 - t1) * 1000,
                             "total": (t2 - t0) * 1000, **timings}
        yield answer

    def signals(self, query: str, whole: list[Passage]) -> Signals:
        """What the answerability gate reads (`retrieve/signals.py`) of the retrieved papers,
        given as whole abstracts (`whole_papers`)."""
        return compute(query, whole, self.reader()[0], background(self.index))

    def judge(self, query: str, whole: list[Passage]) -> Verdict:
        """The gate's verdict on whole abstracts; `abstain_threshold` >= 0 overrides the fitted
        threshold."""
        override = self.settings.abstain_threshold
        return decide(self.signals(query, whole), None if override < 0 else override)

    def whole_papers(self, passages: list[Passage]) -> list[Passage]:
        """Each passage grown to its paper's whole abstract, for the generator to read: a chunk
        may hold half an abstract, and the answer may sit in the other half (seed evals:
        key-fact recall of the extractive answer 0.507 -> 0.517). Citations and the support
        check then quote from the whole abstract, at the same paper-relative offsets."""
        snap = self.index.snapshot()
        return [snap.whole_paper(p) for p in passages]
