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
- gate:     the passages grown to whole abstracts; their sentence scores asked of the
            `reader` scorer, once (`retrieve/sentences.py`); the answerability verdict
            (`retrieve/answerability.py`) for the routes that take it.
- write:    the language model's P(YES) may veto the gate first (`answer/verdict.py`); then the
            writer the route and the verdict choose: the person's papers, an abstention,
            "the abstract does not state X", a list, the extractive reader, or a language
            model, which first shows the extractive answer, checked, as a `Draft`.
- check:    the citations numbered and quoted, then the list of checks (`check/support.py`
            `CHECKS`) run once on the answer; a language model's answer that fails (cites
            nothing, nothing supported, the backend broke) ends in the draft, with a notice.

The logger "rag.engine" writes, at DEBUG, each stage as it ends and one line per question
listing the stages visited with their times (`rag ask -v` shows it).
Example: "stages: route 2.1 ms > retrieve 35.0 ms > gate 4.2 ms > write 1.3 ms > check 2.0 ms".
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from typing import Callable, Iterator, Sequence

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
from .retrieve.answerability import (ABSTAIN, ANSWER, NOT_STATED, GateModel, decide,
                                    gate_for)
from .retrieve.background import background
from .retrieve.catalog import catalog
from .retrieve.gate import relevance
from .retrieve.retrievers import Retriever
from .retrieve.route import instructions_removed, route
from .retrieve.search import search
from .retrieve.sentences import gate_of, scorer_for
from .retrieve.signals import compute
from .settings import Settings
from .types import Answer, Draft, Turn, Written

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
        t1 = time.perf_counter()  # the model's veto counts as generation, as before
        start = t1
        written = yield from self.write(turn)
        self._visited(turn, "write", start)
        start = time.perf_counter()
        answer = self.check(turn, *written)
        self._visited(turn, "check", start)
        t2 = time.perf_counter()
        answer.timings_ms = {"retrieve": (t1 - turn.t0) * 1000, "generate": (t2 - t1) * 1000,
                             "total": (t2 - turn.t0) * 1000, **turn.timings}
        log.debug("stages: %s", " > ".join(f"{name} {ms:.1f} ms" for name, ms in turn.trace))
        yield answer

    def prepare(self, turn: Turn, gate: GateModel | None = None) -> Turn:
        """The stages before writing (route, retrieve, gate): what the gate's fitting reads.
        `gate` stands in for the fitted gate of the setting `reader` (fitting a new one reads
        the signals only, before that gate exists)."""
        for name, stage in (("route", self.route), ("retrieve", self.retrieve),
                            ("gate", lambda t: self.gate(t, gate))):
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

    def gate(self, turn: Turn, gate: GateModel | None = None) -> None:
        r = turn.route
        if r.author is None:  # whole abstracts: a chunk may hold half of one
            turn.whole = [turn.snapshot.whole_paper(p) for p in turn.passages]
        if r.writer == "fact" and turn.whole:
            # a paper asked about as a whole ("what is X about?") is summed up by the rules'
            # choice: the reader model learnt which sentence states an asked fact, not which
            # ones sum a paper up (dev key facts on the bank's title questions: 0.88 vs 0.50)
            reader = self.settings.reader if r.gated else "rules"
            turn.scores = scorer_for(reader, turn.idf).score(turn.query, turn.whole)
            # the writers (the LLM's evidence too) read the scores with the sentences
            turn.whole = [dataclasses.replace(p, sentence_scores=tuple(s))
                          for p, s in zip(turn.whole, turn.scores)]
        if r.gated:
            override = self.settings.abstain_threshold
            signals = compute(turn.query, turn.whole, turn.idf, background(self.index),
                              turn.scores)
            turn.verdict = decide(signals, None if override < 0 else override,
                                  gate or gate_for(gate_of(self.settings.reader)))
        self._decide(turn)

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

    def write(self, turn: Turn):
        """The writer the route and the decision choose; returns (text to check or final
        answer, the LLM's draft, why the LLM failed while writing)."""
        if self.llm and turn.decision == ANSWER and turn.verdict is not None:
            self._consult(turn)
        if turn.route.author is not None:
            return person_answer(turn), None, None
        if turn.decision == ABSTAIN:
            return self._abstain(turn, self.generator_name, turn.notices), None, None
        if turn.decision == NOT_STATED:
            return not_stated(turn.question, turn.query, turn.whole, turn.notices,
                              turn.relevance), None, None
        listing = lister(turn.route, turn.passages, self.settings.list_limit, turn.idf,
                         turn.notices)
        ext = listing or Extractive(turn.idf, turn.scores[0] if turn.scores else None)
        asked = turn.query if listing is None else turn.question
        if not self.llm:
            pieces: list[str] = []
            for piece in _timed(ext.generate(asked, turn.whole, turn.history, idf=turn.idf),
                                turn):
                pieces.append(piece)
                yield piece
            return Written("".join(pieces), ext.name, turn.whole), None, None
        text = "".join(ext.generate(asked, turn.whole, turn.history, idf=turn.idf))
        draft = self._answer(turn, Written(text, ext.name, turn.whole), list(turn.notices))[0]
        if not draft.abstained:
            turn.timings["draft"] = (time.perf_counter() - turn.t0) * 1000
            yield Draft(draft)
        seen = self.shown(turn.whole, listing is not None)
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
            return Written(prune_citations(raw, seen, turn.idf), gen.name, seen), draft, None
        except GeneratorError as exc:
            return None, draft, str(exc)
        except Exception as exc:  # noqa: BLE001 - a backend bug must not cost the answer
            return None, draft, f"unexpected {type(exc).__name__}"

    def check(self, turn: Turn, written: Written | Answer | None, draft: Answer | None = None,
              reason: str | None = None) -> Answer:
        """The written text checked once (module doc); the draft when an LLM's answer fails."""
        if isinstance(written, Answer):
            return written
        if written is not None and draft is None:
            return self._answer(turn, written, turn.notices)[0]
        if written is not None:
            try:
                reason = unfit(written.text)
                if reason is None:
                    answer, reason = self._answer(turn, written, turn.notices)
                    if reason is None:
                        return answer
            except Exception as exc:  # noqa: BLE001 - a backend bug must not cost the answer
                reason = f"unexpected {type(exc).__name__}"
        assert draft is not None
        draft.notices.append(NOTICE_FALLBACK.format(generator=self.generator_name,
                                                    reason=reason))
        return draft

    # -- helpers of the stages -------------------------------------------------------------

    def shown(self, whole: list, listing: bool = False) -> list:
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
                                written.shown, turn.scores)
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
                      relevance=turn.relevance), reason

    def _abstain(self, turn: Turn, generator: str, notices: list[str]) -> Answer:
        return Answer(question=turn.question, text=CANNOT_ANSWER, citations=[],
                      passages=turn.passages, abstained=True, generator=generator,
                      timings_ms={}, query=turn.query, notices=notices,
                      relevance=turn.relevance)


def _keep_referent(turn: Turn) -> None:
    """A follow-up about one paper (`answer/rewrite.py`) is answered from that paper alone: the
    others leave the turn once the gate has judged them all (its signals compare the paper with
    the rest), and an abstention becomes "not stated" about it, since the conversation names it
    (what `answerability.named` asks of the question itself)."""
    keep = [i for i, p in enumerate(turn.passages) if p.paper_id == turn.route.referent]
    turn.passages = [turn.passages[i] for i in keep]
    turn.whole = [turn.whole[i] for i in keep] if turn.whole else turn.whole
    turn.scores = [turn.scores[i] for i in keep] if turn.scores else turn.scores
    if turn.decision == ABSTAIN and turn.passages:
        turn.decision = NOT_STATED


def _timed(pieces, turn: Turn):
    for piece in pieces:
        if isinstance(piece, str) and piece and "first_token" not in turn.timings:
            turn.timings["first_token"] = (time.perf_counter() - turn.t0) * 1000
        yield piece
