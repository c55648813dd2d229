"""The engine: one question's path, each stage visited once, in order.

    route -> retrieve -> gate -> write -> check

`factory.engine(settings)` builds an `Engine` once per settings, holding the components: the
index, its retriever, the embedder the checks use, the list of checks, and the language-model
backend the setting `generator` names (made on first use). A question becomes a `Turn`
(`rag/types.py`) that the engine carries through the stages; each stage reads the turn and adds
to it, and none calls back into whoever called the engine. One stage borrows another's
function: a language model's writer shows the extractive answer, checked by the check stage's
`checked`, as its `Draft` before the model's first token (and falls back on it).

- route:    the index's snapshot read, the one read of the question; a follow-up rewritten
            into a standalone query, about the paper the conversation names when it names one
            (`answer/rewrite.py`); the route settled (`retrieve/route.py`): person, table,
            compare, list or fact, and whether the gate is asked.
- retrieve: the route's passages (`retrieve/search.py`), through the turn's snapshot.
- gate:     the passages grown to whole abstracts, each carrying its sentence scores (the one
            copy of them: `Passage.sentence_scores`), asked of the `reader` scorer once
            (`retrieve/sentences.py`); the answerability verdict (`retrieve/answerability.py`)
            for the routes that take it, which a language model's P(YES) may revise
            (`answer/verdict.py`); a table's cells (`retrieve/cells.py`); the decision:
            answer, not stated, or abstain.
- write:    the writer the route and the decision choose returns a `Written` with its
            decision: the person's papers, an abstention, "the abstract does not state X", a
            table, a list, the extractive reader, or a language model wrapping the extractive reader
            (its answer checked first and shown as a `Draft`, kept as the fallback).
- check:    `check(turn, written)`, the only road to an `Answer` (`check/answer.py`): the
            citations numbered and quoted, the checks (`check/support.py`) run once; a
            language model's answer that fails ends in its draft, with a notice.

The logger "rag.engine" writes, at DEBUG, each stage as it ends and one line per question
listing the stages visited with their times (`rag ask -v` shows it).
Example: "stages: route 2.1 ms > retrieve 35.0 ms > gate 4.2 ms > write 1.3 ms > check 2.0 ms".
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from typing import Callable, Generator as Generator_, Iterator, Sequence

from .answer import Generator
from .answer.backends import make_backend
from .answer.extractive import Extractive
from .answer.listing import lister
from .answer.not_stated import not_stated
from .answer.person import person_answer
from .answer.prompting import Prompt
from .answer.prompts import CANNOT_ANSWER
from .answer.rewrite import resolve, standalone_query
from .answer.table import build_table, table_text
from .answer.verdict import consult
from .check.answer import Checker, checked, finish
from .check.reply import attribute_citations
from .check.support import CHECKS, Check, prune_citations
from .errors import GeneratorError
from .index.opened import Index
from .models.embedders import Embedder
from .retrieve.answerability import (ABSTAIN, ANSWER, NOT_STATED, GateModel, decide,
                                    keep_referent)
from .retrieve.background import background
from .retrieve.catalog import catalog
from .retrieve.gate import relevance
from .retrieve.retrievers import Retriever
from .retrieve.cells import cell_gate, read_cells
from .retrieve.route import instructions_removed, route, table_route
from .retrieve.search import search
from .registry import GATES
from .retrieve.sentences import gate_of, scorer_for
from .retrieve.signals import compute
from .settings import Settings
from .types import ANSWERED, CANNOT, LIST, TABLE, Answer, Draft, Passage, Turn, Written

log = logging.getLogger("rag.engine")
STAGES = ("route", "retrieve", "gate", "write", "check")


class Engine:
    """The stages assembled for one `Settings`, shared by every question asked with them; it
    keeps no question's state (that is the `Turn`)."""

    def __init__(self, settings: Settings, generator_name: str, index: Index,
                 retriever: Retriever, embedder: Embedder, checks: Sequence[Check] = CHECKS,
                 make: Callable[[str, Settings], Generator] = make_backend):
        self.settings, self.generator_name = settings, generator_name
        self.index, self.retriever, self.embedder = index, retriever, embedder
        self.checks = tuple(checks)
        self.checker = Checker(self.checks, embedder, settings.llm_focus, generator_name)
        self._make = make
        self._backend: Generator | None = None
        self._lock = threading.Lock()

    @property
    def llm(self) -> bool:
        """Whether a language model writes the answers (else the extractive reader does)."""
        return self.generator_name != "extractive"

    def backend(self) -> Generator:
        """The language-model backend (`answer/backends.py`), made on first use."""
        with self._lock:
            if self._backend is None:
                self._backend = self._make(self.generator_name, self.settings)
            return self._backend

    # -- the path --------------------------------------------------------------------------

    def run(self, turn: Turn) -> Iterator[str | Draft | Answer]:
        """The stages in order (module doc): yields text pieces (and an LLM's `Draft`), then
        the Answer."""
        self.prepare(turn)
        t1 = start = time.perf_counter()
        written = yield from self.write(turn)
        self._visited(turn, "write", start)
        start = time.perf_counter()
        answer = self.check(turn, written)
        self._visited(turn, "check", start)
        t2 = time.perf_counter()
        answer.timings_ms = {"retrieve": (t1 - turn.t0) * 1000, "generate": (t2 - t1) * 1000,
                             "total": (t2 - turn.t0) * 1000, **turn.timings}
        log.debug("stages: %s", " > ".join(f"{name} {ms:.1f} ms" for name, ms in turn.trace))
        yield answer

    def prepare(self, turn: Turn, gate: GateModel | None = None, veto: bool = True) -> Turn:
        """The stages before writing (route, retrieve, gate): what the gate's fitting reads.
        `gate` stands in for the fitted gate of the setting `reader` (fitting a new one reads
        the signals only, before that gate exists); `veto=False` leaves out the language
        model's revision of the verdict (what fitting that revision reads)."""
        for name, stage in (("route", self.route), ("retrieve", self.retrieve),
                            ("gate", lambda t: self.gate(t, gate, veto))):
            start = time.perf_counter()
            stage(turn)
            self._visited(turn, name, start)
        return turn

    def _visited(self, turn: Turn, stage: str, start: float) -> None:
        ms = (time.perf_counter() - start) * 1000
        turn.trace.append((stage, ms))
        log.debug("%s %.1f ms", stage, ms)

    # -- the stages ------------------------------------------------------------------------

    def route(self, turn: Turn) -> None:
        turn.snapshot = self.index.snapshot()  # the turn's one read of the index
        turn.idf = turn.snapshot.idf()
        cat = catalog(self.index, turn.snapshot)
        if turn.request is not None:  # a table asked for directly: its route is given
            req = turn.request
            turn.route = table_route(req.topic, req.columns, req.paper_ids)
            turn.query = req.topic
            return
        asked = instructions_removed(turn.question)  # orders to the assistant are no question
        follow = resolve(asked, turn.history, cat) if asked else None  # about one paper
        if not asked:
            turn.query = ""
        elif follow:
            turn.query = follow.query
        else:
            turn.query = standalone_query(asked, turn.history, self.backend if self.llm else None)
        if asked and turn.query != turn.question:
            turn.timings["rewrite"] = (time.perf_counter() - turn.t0) * 1000
        turn.route = route(follow.query if follow else asked, turn.query, cat,
                           follow.paper_id if follow else "")
        turn.query = turn.route.query

    def retrieve(self, turn: Turn) -> None:
        if not turn.query.strip():  # nothing asked (only orders to the assistant): abstain
            turn.passages = []
            return
        turn.passages = search(turn.route, self.retriever, turn.snapshot,
                               catalog(self.index, turn.snapshot), turn.idf, self.settings)

    def gate(self, turn: Turn, gate: GateModel | None = None, veto: bool = True) -> None:
        r = turn.route
        assert r is not None and turn.snapshot is not None
        if r.author is None:  # whole abstracts: a chunk may hold half of one
            turn.whole = [turn.snapshot.whole_paper(p) for p in turn.passages]
        if r.writer == "table":  # every row asked every column
            turn.whole = turn.whole[: self.settings.table_rows]
            scorer = scorer_for(self.settings.reader, turn.idf)
            turn.cells = read_cells(list(r.intent.columns), turn.whole, scorer,
                                    cell_gate(self.settings.reader))
        scored = r.writer == "fact" and bool(turn.whole)
        if scored:
            # a paper asked about as a whole ("what is X about?") is summed up by the rules'
            # choice: the reader model learnt which sentence states an asked fact, not which
            # ones sum a paper up (dev key facts on the bank's title questions: 0.88 vs 0.50)
            reader = self.settings.reader if r.gated else "rules"
            # the papers a writer may quote are scored; the one copy of their scores rides
            # with the sentences it scores
            quoted = turn.whole[: self.quoted(turn.whole)]
            scores = scorer_for(reader, turn.idf).score(turn.query, quoted)
            turn.whole = [dataclasses.replace(p, sentence_scores=tuple(s))
                          for p, s in zip(quoted, scores)] + turn.whole[len(quoted):]
        if r.gated:
            override = self.settings.abstain_threshold
            signals = compute(turn.query, turn.whole, turn.idf, background(self.index),
                              turn.whole[0].sentence_scores if scored else None)
            turn.verdict = decide(signals, None if override < 0 else override,
                                  gate or _gate(gate_of(self.settings.reader)))
        self._decide(turn)
        if veto and self.llm and turn.decision == ANSWER and turn.verdict is not None:
            self._consult(turn)

    def _decide(self, turn: Turn) -> None:
        verdict = turn.verdict
        turn.relevance = verdict.answerable if verdict else relevance(turn.passages)
        if turn.route.author is None and (not turn.passages or (verdict and
                                                               verdict.decision == ABSTAIN)):
            turn.decision = ABSTAIN
        elif turn.route.author is None and verdict and verdict.decision == NOT_STATED:
            turn.decision = NOT_STATED
        else:
            turn.decision = ANSWER
        if turn.route.referent:
            keep_referent(turn)

    def write(self, turn: Turn) -> Generator_[str | Draft, None, Written]:
        """The writer the route and the decision choose (module doc); yields text pieces as
        they are written (and an LLM's `Draft`), returns the `Written` for the check."""
        r = turn.route
        assert r is not None
        if r.author is not None:
            return person_answer(turn)
        if r.writer == "table" and turn.whole:  # each row's cells, read by the gate
            table, cited = build_table(r.intent.query, r.intent.columns, turn.whole, turn.cells)
            return Written(table_text(table), "extractive", turn.whole, decision=TABLE,
                           table=table, citations=cited)
        if turn.decision == ABSTAIN:
            return Written(CANNOT_ANSWER, self.generator_name, turn.passages, decision=CANNOT)
        if turn.decision == NOT_STATED:
            return not_stated(turn.query, turn.whole)
        listing = lister(r, turn.passages, self.settings.list_limit, turn.idf, turn.notices)
        ext = listing or Extractive(turn.idf)
        asked = turn.query if listing is None else turn.question
        decision = LIST if listing is not None else ANSWERED
        if not self.llm:
            pieces: list[str] = []
            for piece in _timed(ext.generate(asked, turn.whole, turn.history, idf=turn.idf),
                                turn):
                pieces.append(piece)
                yield piece
            return Written("".join(pieces), ext.name, turn.whole, decision=decision)
        text = "".join(ext.generate(asked, turn.whole, turn.history, idf=turn.idf))
        draft = checked(turn, Written(text, ext.name, turn.whole, decision=decision),
                        list(turn.notices), self.checker)[0]
        if not draft.abstained:
            turn.timings["draft"] = (time.perf_counter() - turn.t0) * 1000
            yield Draft(draft)
        return (yield from self._llm_write(turn, draft, listing is not None, decision))

    def _llm_write(self, turn: Turn, draft: Answer, listing: bool, decision: str
                   ) -> Generator_[str, None, Written]:
        """The language model's writer, wrapping the extractive one: its text, or, when the
        backend breaks, nothing but the reason, with the extractive `draft` to fall back on."""
        seen = self.shown(turn.whole, listing)
        try:
            gen, pieces = self.backend(), []
            for piece in _timed(gen.generate(turn.question, seen, turn.history, idf=turn.idf),
                                turn):
                if isinstance(piece, Prompt):
                    seen = seen[: piece.passages]
                    turn.notices.extend(piece.notices)
                    continue
                pieces.append(piece)
                yield piece
            raw = attribute_citations("".join(pieces), seen, turn.idf)
            return Written(prune_citations(raw, seen, turn.idf), gen.name, seen,
                           decision=decision, draft=draft)
        except GeneratorError as exc:
            return Written("", self.generator_name, seen, decision=decision, draft=draft,
                           failure=str(exc))
        except Exception as exc:  # noqa: BLE001 - a backend bug must not cost the answer
            return Written("", self.generator_name, seen, decision=decision, draft=draft,
                           failure=f"unexpected {type(exc).__name__}")

    def check(self, turn: Turn, written: Written) -> Answer:
        """The only road to an `Answer` (`check/answer.py`)."""
        return finish(turn, written, self.checker)

    # -- helpers of the stages -------------------------------------------------------------

    def quoted(self, whole: list[Passage]) -> int:
        """How many of the papers a writer may quote: the top one for the extractive reader,
        those shown to a language model (`shown`) for it."""
        return len(self.shown(whole)) if self.llm else 1

    def shown(self, whole: list[Passage], listing: bool = False) -> list[Passage]:
        """The papers an LLM reads: `local_passages` for the local model, `list_limit` for a
        list."""
        out = whole[: self.settings.local_passages] if self.generator_name == "local" else whole
        return out[: self.settings.list_limit] if listing else out

    def _consult(self, turn: Turn) -> None:
        """The gate's "answer" revised by the model's P(YES) (`answer/verdict.py`)."""
        if not self.settings.llm_verdict:
            return
        start = time.perf_counter()
        revised = consult(self.backend, turn, self.shown(turn.whole))
        if revised is not None:
            turn.timings["verdict"] = (time.perf_counter() - start) * 1000
            turn.verdict = revised
            self._decide(turn)


def _gate(name: str) -> GateModel:
    """The fitted gate registered as `name` (`rag.registry.GATES`)."""
    return GATES[name].maker()(name)


def _timed(pieces, turn: Turn):
    for piece in pieces:
        if isinstance(piece, str) and piece and "first_token" not in turn.timings:
            turn.timings["first_token"] = (time.perf_counter() - turn.t0) * 1000
        yield piece
