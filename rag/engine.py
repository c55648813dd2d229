"""The engine: one question's path, each stage visited once, in order.

    route -> retrieve -> gate -> write -> check

`factory.engine(settings)` builds an `Engine` once per settings, holding the components: the
index, its retriever, the embedder the checks use, the list of checks, and the language-model
backend the setting `generator` names (made on first use). A question becomes a `Turn`
(`rag/types.py`) that the engine carries through the stages; each stage reads the turn and adds
to it, and none calls another stage or back into whoever called the engine.

- route:    the index's snapshot read, the one read of the question; a follow-up rewritten
            into a standalone query, about the paper the conversation names when it names one
            (`answer/rewrite.py`); the route settled (`retrieve/route.py`): person, compare,
            list or fact, and whether the gate is asked.
- retrieve: the route's passages (`retrieve/search.py`), through the turn's snapshot.
- gate:     the passages grown to whole abstracts, each carrying its sentence scores (the one
            copy of them: `Passage.sentence_scores`), asked of the `reader` scorer once
            (`retrieve/sentences.py`); the answerability verdict (`retrieve/answerability.py`)
            for the routes that take it, which a language model's P(YES) may revise
            (`answer/verdict.py`); the decision: answer, not stated, or abstain.
- write:    the writer the route and the decision choose returns a `Written` with its
            decision: the person's papers, an abstention, "the abstract does not state X", a
            list, the extractive reader, or a language model wrapping the extractive reader
            (its answer checked first and shown as a `Draft`, kept as the fallback).
- check:    `check(turn, written)`, the only road to an `Answer`: the citations numbered and
            quoted, then the list of checks (`check/support.py` `CHECKS`) run once; a language
            model's answer that fails (cites nothing, nothing supported, the backend broke)
            ends in its draft, with a notice.

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
from .answer.prompts import CANNOT_ANSWER, NOTICE_FALLBACK, NOTICE_UNCITED, NOTICE_UNSUPPORTED
from .answer.rewrite import resolve, standalone_query
from .answer.verdict import combination_for, second_opinion
from .check.citations import check_citations
from .check.reply import attribute_citations, is_abstention, unbacked, unfit
from .check.support import CHECKS, Check, evidence_for, prune_citations, run_checks
from .errors import GeneratorError
from .index.opened import Index
from .models.embedders import Embedder
from .retrieve.answerability import ABSTAIN, ANSWER, NOT_STATED, GateModel, decide
from .retrieve.background import background
from .retrieve.catalog import catalog
from .retrieve.gate import relevance
from .retrieve.retrievers import Retriever
from .retrieve.route import instructions_removed, route
from .retrieve.search import search
from .registry import GATES
from .retrieve.sentences import gate_of, scorer_for
from .retrieve.signals import compute
from .settings import Settings
from .types import (ANSWERED, CANNOT, LIST, NOT_STATED as NOT_STATED_, Answer, Citation, Draft,
                    Passage, Turn, Written)

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
            _keep_referent(turn)

    def write(self, turn: Turn) -> Generator_[str | Draft, None, Written]:
        """The writer the route and the decision choose (module doc); yields text pieces as
        they are written (and an LLM's `Draft`), returns the `Written` for the check."""
        r = turn.route
        assert r is not None
        if r.author is not None:
            return person_answer(turn)
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
        draft = self._answer(turn, Written(text, ext.name, turn.whole, decision=decision),
                             list(turn.notices))[0]
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
        """The written text checked once (module doc): the only road to an `Answer`. An
        LLM's text that fails ends in its draft, with the fallback notice."""
        if written.decision == CANNOT:
            return self._abstain(turn, written.generator, turn.notices, written.text,
                                 written.shown)
        if written.decision == NOT_STATED_:
            top = written.shown[0]
            return Answer(question=turn.question, text=written.text,
                          citations=[Citation(n=1, passage=top, quote="")],
                          passages=turn.whole, abstained=True, generator=written.generator,
                          timings_ms={}, query=turn.query, notices=turn.notices,
                          relevance=turn.relevance, decision=NOT_STATED_)
        draft, reason = written.draft, written.failure
        if draft is None:
            return self._answer(turn, written, turn.notices)[0]
        if reason is None:
            try:
                reason = unfit(written.text)
                if reason is None:
                    answer, reason = self._answer(turn, written, turn.notices)
                    if reason is None:
                        return answer
            except Exception as exc:  # noqa: BLE001 - a backend bug must not cost the answer
                reason = f"unexpected {type(exc).__name__}"
        draft.notices.append(NOTICE_FALLBACK.format(generator=self.generator_name,
                                                    reason=reason))
        return draft

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
        """The gate's "answer" revised by the model's P(YES), when the setting is on and the
        model has a fitted combination; a failing model leaves the gate's verdict (writing
        meets the same failure and says why)."""
        if not self.settings.llm_verdict:
            return
        start = time.perf_counter()
        try:
            gen = self.backend()
            combo = combination_for(gen.model)
            if combo is None:
                return
            yes = gen.verdict(turn.question, self.shown(turn.whole), turn.history, idf=turn.idf)
        except Exception:  # noqa: BLE001 - see the docstring
            return
        turn.timings["verdict"] = (time.perf_counter() - start) * 1000
        turn.verdict = second_opinion(turn.verdict, yes, combo)
        self._decide(turn)

    def _answer(self, turn: Turn, written: Written, notices: list[str]
                ) -> tuple[Answer, str | None]:
        """`written` with its citations numbered and quoted and the checks run once (an
        abstention when it is empty or says it cannot answer), and for an LLM's text why it
        cannot be shown (`reply.unbacked`), if so."""
        reason = None
        person = bool(written.claims)
        if not person and (not written.text.strip() or is_abstention(written.text)):
            return self._abstain(turn, written.generator, notices), None
        checked = check_citations(written.text, written.shown)
        judged = check_citations(written.claims, written.shown) if person else checked
        llm = written.generator not in ("extractive", "metadata")
        focus = turn.query if llm and self.settings.llm_focus else ""
        evidence = evidence_for(judged, turn.idf, self.embedder if llm else None, focus,
                                written.shown)
        run_checks(judged, evidence, self.checks)
        if person:
            for sent, claim in zip(checked.sentences, judged.sentences):
                sent.supported, sent.support = claim.supported, claim.support
        if llm:
            reason = unbacked(checked)
            unsupported = sum(1 for s in checked.sentences if s.unbacked)
            uncited = sum(1 for s in checked.sentences if not s.citations)
            if reason is None and unsupported:
                notices.append(NOTICE_UNSUPPORTED.format(count=unsupported))
            if reason is None and uncited:
                notices.append(NOTICE_UNCITED.format(count=uncited))
        return Answer(question=turn.question, text=checked.text, citations=checked.citations,
                      passages=turn.passages, abstained=False, generator=written.generator,
                      timings_ms={}, sentences=checked.sentences, query=turn.query,
                      notices=notices if not person else list(notices),
                      relevance=turn.relevance, decision=written.decision), reason

    def _abstain(self, turn: Turn, generator: str, notices: list[str],
                 text: str = CANNOT_ANSWER, passages: list[Passage] | None = None) -> Answer:
        return Answer(question=turn.question, text=text or CANNOT_ANSWER, citations=[],
                      passages=turn.passages if passages is None else passages,
                      abstained=True, generator=generator, timings_ms={}, query=turn.query,
                      notices=notices, relevance=turn.relevance, decision=CANNOT)


def _keep_referent(turn: Turn) -> None:
    """A follow-up about one paper (`answer/rewrite.py`) is answered from that paper alone: the
    others leave the turn once the gate has judged them all (its signals compare the paper with
    the rest), and an abstention becomes "not stated" about it, since the conversation names it
    (what `answerability.named` asks of the question itself)."""
    keep = [i for i, p in enumerate(turn.passages) if p.paper_id == turn.route.referent]
    turn.passages = [turn.passages[i] for i in keep]
    turn.whole = [turn.whole[i] for i in keep] if turn.whole else turn.whole
    if turn.decision == ABSTAIN and turn.passages:
        turn.decision = NOT_STATED


def _gate(name: str) -> GateModel:
    """The fitted gate registered as `name` (`rag.registry.GATES`)."""
    return GATES[name].maker()(name)


def _timed(pieces, turn: Turn):
    for piece in pieces:
        if isinstance(piece, str) and piece and "first_token" not in turn.timings:
            turn.timings["first_token"] = (time.perf_counter() - turn.t0) * 1000
        yield piece
