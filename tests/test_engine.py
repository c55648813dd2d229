"""One engine, one turn (issue 22): a question visits route, retrieve, gate, write and check once
each, in that order, reads the index's snapshot once, and the parts the engine holds (checks,
sentence scorer, backends) are swapped by a list entry or a registry line."""

from __future__ import annotations

import json

import logging
import time

import pytest

import rag
from rag.settings import Settings
from rag import factory
from rag.answer import Generator
from rag.answer.backends import register_backend, unregister_backend
from rag.check.support import CHECKS, Problem
from rag.engine import STAGES, Engine
from rag.errors import ConfigError
from rag.index.opened import Index
from rag.registry import SCORERS, WRITERS
from rag.retrieve.sentences import RulesScorer, register_scorer
from rag.types import Turn

GP_QUESTION = "Which kernels avoid mean reversion in Gaussian process regression?"
GP_PAPER = "icml2024-poster-34936"
QUESTIONS = [  # one of each route, and the gate's three decisions
    GP_QUESTION,  # fact, answered
    "Which papers study speculative decoding?",  # list
    "Papers by Sergey Levine",  # person
    "How does Genie differ from DsDm?",  # compare
    "What learning rate did the WMDP paper use?",  # fact, not stated
    "How do I bake sourdough bread at home?",  # fact, abstained
]


def _engine(settings, **kwargs) -> Engine:
    return Engine(settings, "extractive", factory.index(settings), factory.retriever(settings),
                  factory.embedder(settings), **kwargs)


def _turn(question: str) -> Turn:
    return Turn(question, [], [], time.perf_counter())


@pytest.mark.parametrize("question", QUESTIONS)
def test_each_question_reads_the_index_snapshot_exactly_once(seed_settings, monkeypatch,
                                                             question):
    reads = []
    real = Index.snapshot

    def counted(self):
        reads.append(question)
        return real(self)

    rag.ask(question, settings=seed_settings)  # caches warm: opened index, catalog, background
    monkeypatch.setattr(Index, "snapshot", counted)
    answer = rag.ask(question, settings=seed_settings)
    assert answer.text
    assert len(reads) == 1


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_debug_trace_lists_each_stage_once_in_order(seed_settings, caplog, question):
    with caplog.at_level(logging.DEBUG, logger="rag.engine"):
        rag.ask(question, settings=seed_settings)
    lines = [r.getMessage() for r in caplog.records if r.name == "rag.engine"]
    visited = [line.split()[0] for line in lines if not line.startswith("stages:")]
    assert visited == list(STAGES)
    summary = [line for line in lines if line.startswith("stages:")]
    assert len(summary) == 1
    assert [part.split()[0] for part in summary[0][len("stages: "):].split(" > ")] == \
        list(STAGES)


def test_the_turn_carries_what_each_stage_added(seed_settings):
    engine = _engine(seed_settings)
    turn = engine.prepare(_turn(GP_QUESTION))
    assert [name for name, _ in turn.trace] == ["route", "retrieve", "gate"]
    assert turn.route.kind == "fact" and turn.route.gated
    assert turn.snapshot is not None and turn.idf is turn.snapshot.idf()
    assert turn.passages[0].paper_id == GP_PAPER
    assert [p.paper_id for p in turn.whole] == [p.paper_id for p in turn.passages]
    # the one copy of the sentence scores rides on the scored papers: every sentence of the
    # top paper, the one the extractive writer may quote (the reader model reads it alone)
    scores = [p.sentence_scores for p in turn.whole]
    assert len(scores[0]) == len(turn.whole[0].sentence_texts())
    assert all(len(s) in (0, len(p.sentence_texts())) for s, p in zip(scores, turn.whole))
    assert turn.verdict.decision == turn.decision == "answer"
    assert turn.verdict.signals.values["reader_best"] == max(scores[0])
    assert not hasattr(turn, "scores")


def test_the_papers_a_language_model_is_shown_are_all_scored_by_the_reader(seed_settings):
    """An LLM may quote every paper it is shown, so each carries the model's scores, not the
    top one alone (its prompt picks sentences by them, answer/prompting.py)."""
    settings = seed_settings.replace(local_passages=3)
    engine = Engine(settings, "local", factory.index(settings), factory.retriever(settings),
                    factory.embedder(settings))  # the model itself is made only to write
    turn = engine.prepare(_turn(GP_QUESTION), veto=False)
    shown = engine.shown(turn.whole)
    assert len(shown) >= 2
    assert all(len(p.sentence_scores) == len(p.sentence_texts()) for p in shown)
    assert all(p.sentence_scores == () for p in turn.whole[len(shown):])


def test_a_check_added_to_the_list_flags_sentences_and_one_removed_stops_flagging(
        seed_settings):
    class NoKernels:
        """Flags every sentence that says "kernel": a rule anyone can see the effect of."""

        name = "no-kernels"

        def problems(self, answer, evidence):
            return [Problem(c.position, self.name) for c in evidence.claims
                    if "kernel" in c.text.lower()]

    plain = list(_engine(seed_settings).run(_turn(GP_QUESTION)))[-1]
    assert plain.sentences and all(s.supported for s in plain.sentences)
    strict = list(_engine(seed_settings, checks=(*CHECKS, NoKernels())).run(
        _turn(GP_QUESTION)))[-1]
    flagged = [s.supported for s in strict.sentences]
    assert flagged == ["kernel" not in s.text.lower() for s in strict.sentences]
    assert False in flagged
    assert strict.text == plain.text  # a check judges the answer; it does not rewrite it
    loose = list(_engine(seed_settings, checks=()).run(_turn(GP_QUESTION)))[-1]
    assert [s.supported for s in loose.sentences] == [bool(s.citations) for s in loose.sentences]


def test_the_reader_setting_chooses_the_sentence_scorer_from_the_registry(seed_settings):
    class LastSentences(RulesScorer):
        """Rules, but each sentence also scores its position: the abstract's end wins."""

        name = "last"

        def score(self, question, passages):
            return [[s + 10.0 * i for i, s in enumerate(row)]
                    for row in super().score(question, passages)]

    register_scorer("last", LastSentences)
    try:
        rules = rag.ask(GP_QUESTION, settings=seed_settings.replace(reader="rules"))
        last = rag.ask(GP_QUESTION, settings=seed_settings.replace(reader="last"))
    finally:
        SCORERS.unregister("last")
    top = rules.citations[0].passage
    sentences = [t for _, _, t in top.sentence_texts()]
    assert last.citations[0].paper_id == rules.citations[0].paper_id == GP_PAPER
    assert sentences[-1].strip().rstrip(".") in last.text  # the scorer chose what is quoted
    assert last.text != rules.text
    # an unknown reader fails when the settings are made, naming the known ones
    with pytest.raises(ConfigError, match="unknown reader 'nope': choose one of model, rules"):
        Settings.load(home=seed_settings.home, env={}, reader="nope")


class Quoter(Generator):
    """A backend with `generate` only: quotes the first sentence of the first paper shown,
    cited. The optional methods (`verdict`, `rewrite`, `model`) keep their defaults."""

    name = "quoter"

    def __init__(self, settings):
        self.settings = settings

    def generate(self, question, passages, history=(), idf=None):
        first = passages[0].sentence_texts()[0][2].strip().rstrip(".")
        yield f"{first} [1]."


def test_a_registered_backend_writes_with_every_optional_method_defaulted(seed_settings):
    register_backend("quoter", Quoter)
    try:
        engine = Engine(seed_settings, "quoter", factory.index(seed_settings),
                        factory.retriever(seed_settings), factory.embedder(seed_settings))
        events = list(engine.run(_turn(GP_QUESTION)))
        follow = Turn("What data did they use?", [(GP_QUESTION, events[-1].text)], [],
                      time.perf_counter())
        engine.prepare(follow)  # rewrite() defaults to None: the rule rewrites the follow-up
    finally:
        unregister_backend("quoter")
    answer = events[-1]
    assert answer.generator == "quoter" and not answer.notices
    assert answer.citations[0].paper_id == GP_PAPER and answer.sentences[0].supported
    assert type(events[0]).__name__ == "Draft"  # the extractive answer shown first
    assert follow.query.startswith(GP_QUESTION)


def test_an_unregistered_backend_ends_in_the_draft_with_a_notice(seed_settings):
    engine = Engine(seed_settings, "missing", factory.index(seed_settings),
                    factory.retriever(seed_settings), factory.embedder(seed_settings))
    answer = list(engine.run(_turn(GP_QUESTION)))[-1]
    assert answer.generator == "extractive" and answer.citations[0].paper_id == GP_PAPER
    assert "no generator backend named 'missing'" in answer.notices[-1]


def test_a_registered_backend_is_a_setting_at_once_and_rag_ask_writes_with_it(seed_settings):
    """One `register_backend` line: `Settings` accepts the name (it reads the registry), the
    availability listing shows it, and `rag.ask` writes with it; unregistered, it is unknown."""
    with pytest.raises(ConfigError, match="unknown generator 'quoter': choose one of auto, "
                                          "extractive, local, openai"):
        Settings.load(home=seed_settings.home, env={}, generator="quoter")
    register_backend("quoter", Quoter, "quotes the first sentence of the first paper")
    try:
        settings = Settings.load(home=seed_settings.home, env={}, corpus="seeds",
                                 generator="quoter")
        assert "quoter" in WRITERS and WRITERS["quoter"].why_unavailable({}) is None
        from rag.ui.availability import generator_status

        assert generator_status({})["quoter"].available
        answer = rag.ask(GP_QUESTION, settings=settings)
    finally:
        unregister_backend("quoter")
    assert answer.generator == "quoter" and answer.citations[0].paper_id == GP_PAPER


def test_rag_backends_lists_every_registered_part_and_whether_it_is_available(capsys):
    from rag.ui import cli

    assert cli.main(["backends", "--json"]) == 0
    rows = {(r["kind"], r["name"]): r for r in json.loads(capsys.readouterr().out)}
    assert {("answer writer", n) for n in ("auto", "extractive", "openai", "local")} <= set(rows)
    assert {("sentence scorer", "rules"), ("sentence scorer", "model"),
            ("fitted gate", "rules"), ("fitted gate", "model")} <= set(rows)
    assert rows[("sentence scorer", "model")]["available"]  # the weights are committed
    assert rows[("fitted gate", "model")]["available"]
    assert "openai_model" in rows[("answer writer", "openai")]["options"]
