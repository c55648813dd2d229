"""The answerability gate and the reader, on the real seed index: answer what the abstracts
state, say "the abstract of X does not state ..." when the paper is found but not the fact, and
abstain plainly when nothing relevant is there."""

from __future__ import annotations

import json

import pytest

import rag
from rag import factory
from rag.answer.not_stated import asked_phrase, not_stated, not_stated_text
from rag.answer.reader import parts, pick
from rag.retrieve.answerability import (ABSTAIN, ANSWER, MODEL_FILE, NOT_STATED, decide,
                                        gate_file, gate_for, load_model)
from rag.retrieve.background import PROBES, background
from rag.retrieve.sentences import gate_of
from rag.retrieve.signals import FEATURES, READER_FEATURE, Signals
from rag.types import Passage

WMDP = "icml2024-poster-32695"


def test_the_fitted_model_file_matches_the_signals_and_says_how_it_was_fitted():
    data = json.loads(MODEL_FILE.read_text())
    assert data["features"] == list(FEATURES)
    assert "icml2024-train" in data["about"] and "icml2024-dev" in data["about"]
    model = load_model()
    assert 0.0 < model.answer_threshold < 1.0 and 0.0 < model.found_threshold <= 1.0


def test_the_reader_models_gate_reads_its_score_and_keeps_old_signals_only_where_they_add():
    """answerability-model.json: fitted with the reader model's best sentence score and the
    twins; each old signal it reads survived backward elimination on dev (bank and twins)."""
    data = json.loads(gate_file("model").read_text())
    model = gate_for(gate_of("model"))
    reads = data["fit"]["answerable_reads"]
    assert READER_FEATURE in reads and set(model.features) <= set(FEATURES) | {READER_FEATURE}
    assert data["fit"]["train_twins"] > 50 and data["fit"]["dev_twins"] > 20
    steps = data["fit"]["selection"]
    assert [s["dropped"] for s in steps[1:]] == [f for f in steps[0]["features"]
                                                 if f not in reads]
    assert all(b["dev_auroc"] >= a["dev_auroc"] and b["dev_twin_auroc"] >= a["dev_twin_auroc"]
               for a, b in zip(steps, steps[1:]))  # a drop never cost on dev
    coef = dict(zip(model.features, model.answerable.coef))
    assert coef[READER_FEATURE] > 0  # the likelier a sentence states it, the likelier answered
    assert "--reader model" in data["about"] and 0.0 < model.answer_threshold < 1.0


def test_each_corpus_measures_its_own_background_and_keeps_it_on_disk(seed_settings):
    index = factory.index(seed_settings)
    bg = background(index)
    assert 0.0 < bg.mean < 0.5 and bg.std > 0.0  # everyday questions match research abstracts badly
    saved = json.loads((index.dir / "background.json").read_text())
    assert saved["probes"] == len(PROBES) and saved["mean"] == pytest.approx(bg.mean)


def test_a_stated_fact_is_answered_with_the_sentence_that_states_it(seed_settings):
    answer = rag.ask("How many multiple-choice questions does the WMDP benchmark contain?",
                     settings=seed_settings)
    assert not answer.abstained
    assert answer.citations[0].paper_id == WMDP and "3,668" in answer.text


def test_a_detail_the_abstract_lacks_is_not_answered_with_another_sentence(seed_settings):
    answer = rag.ask("What learning rate did the WMDP paper use?", settings=seed_settings)
    assert answer.abstained and answer.relevance < load_model().answer_threshold
    assert answer.text == rag.CANNOT_ANSWER or "does not state the learning rate" in answer.text


def test_found_paper_not_fact_names_and_cites_the_paper_without_quoting_it(seed_settings):
    paper = Passage(chunk_id="p#0", paper_id="p", title="The WMDP Benchmark", text="x", score=1)
    written = not_stated("What learning rate did the WMDP paper use?", [paper])
    assert written.decision == "not_stated" and written.shown == [paper]
    assert written.text == "The abstract of *The WMDP Benchmark* [1] does not state the learning rate."
    # through the engine's own path: cited, nothing quoted, an abstention
    answer = rag.ask("How long does training DiffAug take?", settings=seed_settings)
    assert answer.decision == "not_stated" and answer.abstained
    assert len(answer.citations) == 1 and answer.citations[0].quote == ""
    assert answer.citations[0].passage.title.startswith("DiffAug")


@pytest.mark.parametrize("question, phrase", [
    ("What learning rate did the WMDP paper use?", "the learning rate"),
    ("Which tabular datasets did the recourse paper use?", "the tabular datasets"),
    ("What is the batch size used in X?", "the batch size"),
    ("How many GPUs were used to train Genie?", "how many GPUs were used to train Genie"),
    ("Who funded the work on KPOD?", "who funded the work on KPOD"),
    ("Promptbreeder GSM8K accuracy?", "what was asked"),
])
def test_what_was_asked_is_phrased_from_the_question(question, phrase):
    assert asked_phrase(question) == phrase
    assert not_stated_text(question, "T.").endswith(f"does not state {phrase}.")


def test_unrelated_questions_abstain_plainly_and_cite_nothing(seed_settings):
    for q in ("What is the capital of Peru?", "How do I change a flat tire on a car?"):
        answer = rag.ask(q, settings=seed_settings)
        assert answer.abstained and answer.text == rag.CANNOT_ANSWER and not answer.citations


def _signals(**values) -> Signals:
    return Signals({name: values.get(name, 0.0) for name in FEATURES})


def test_the_verdict_follows_the_two_probabilities_and_the_naming_rule():
    model = load_model()
    strong = _signals(z_cosine=8.0, title_cover=0.6, abstract_cover=0.9, focus_sentence=0.9,
                      focus_abstract=1.0, title_rarest=1.0, rarest_present=1.0, margin=0.2)
    assert decide(strong).decision == ANSWER
    nothing = _signals(z_cosine=-1.0, rare_missing=1.0)
    assert decide(nothing).decision == ABSTAIN
    assert decide(strong, answer_threshold=1.0).decision in (NOT_STATED, ABSTAIN)
    unnamed = _signals(**{**strong.values, "title_cover": 0.0})
    assert decide(unnamed, answer_threshold=1.0).decision == ABSTAIN  # never cite an unnamed paper
    assert model.answerable.probability(strong.vector()) > model.answerable.probability(
        nothing.vector())


def test_the_reader_takes_one_more_sentence_than_the_question_has_parts():
    text = ("We propose Foo. Foo trains in 3 hours. Foo reaches 90% accuracy. Foo is open source. "
            "Bar is unrelated.")
    spans, start = [], 0
    for sent in text.split(". "):
        sent = sent if sent.endswith(".") else sent + "."
        spans.append((start, start + len(sent)))
        start += len(sent) + 1
    passage = Passage(chunk_id="f#0", paper_id="f", title="Foo", text=text, score=1.0,
                      end=len(text), sentences=tuple(spans))
    assert parts("How long does Foo train?") == 1
    assert parts("How long does Foo train and what accuracy does it reach?") == 2
    one = pick("How long does Foo train, in hours?", passage, None)
    assert 1 in one and len(one) == 2
    two = pick("How many hours does Foo train and what accuracy does it reach?", passage, None)
    assert {1, 2} <= set(two) and len(two) == 3
    assert pick("What is Foo about?", passage, None)  # nothing asked beyond its name: the gist
