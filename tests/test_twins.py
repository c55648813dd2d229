"""Twins (eval/twins.py): an answerable question against its abstract without the answer; the
question-only baseline (eval/baseline.py); and both reported by `rag eval`."""

from __future__ import annotations

import pytest

from rag.eval.twins import contains_fact, make_twin, normalise, twin_rows

ABSTRACT = ("We present Spider, a unified model.  It handles eight different tasks,\n"
            "including 4 natural scenes. New tasks need fine-tuning of less than 1% of the "
            "parameters. It runs in 2018 hardware budgets at 0.8 seconds.")
TITLE = "Spider: A Unified Context-Dependent Concept Segmentation Model"


# -- making a twin ---------------------------------------------------------------------------


def test_a_twin_loses_exactly_the_sentences_that_state_a_key_fact_and_keeps_the_rest():
    twin = make_twin(TITLE, ABSTRACT, ["8 different", "less than 1%"])
    assert twin is not None
    assert twin.removed == ("It handles eight different tasks,\nincluding 4 natural scenes.",
                            "New tasks need fine-tuning of less than 1% of the parameters.")
    assert twin.kept == ("We present Spider, a unified model.",
                         "It runs in 2018 hardware budgets at 0.8 seconds.")
    # the kept sentences byte for byte, each with the whitespace that stood before it
    assert twin.abstract == ("We present Spider, a unified model. It runs in 2018 hardware "
                             "budgets at 0.8 seconds.")
    for sentence in twin.kept:
        assert sentence in ABSTRACT and sentence in twin.abstract
    assert not contains_fact(twin.abstract, ["8 different", "less than 1%"])


def test_the_first_sentence_removed_leaves_no_leading_space():
    twin = make_twin(TITLE, ABSTRACT, ["a unified model"])
    assert twin is not None and twin.abstract.startswith("It handles eight different tasks,\n")


def test_a_twin_is_dropped_when_a_key_fact_survives_in_the_title_or_another_sentence():
    assert make_twin(TITLE, ABSTRACT, ["Context-Dependent"]) is None  # in the title
    text = "We use 8 GPUs. Training takes a day. Inference also needs 8 GPUs, not one."
    # every sentence holding the fact goes, so a twin keeps none of it ...
    twin = make_twin("A title", text, ["8 GPUs"])
    assert twin is not None and twin.abstract == "Training takes a day."
    # ... but a fact split across two sentences is still in the abstract: no twin
    assert make_twin("A title", "It uses eight. GPUs are fast. Done.", ["eight. GPUs"]) is None
    # nothing removed (the fact is not there) or nothing left: no twin either
    assert make_twin("A title", text, ["TPUs"]) is None
    assert make_twin("A title", "We use 8 GPUs.", ["8 GPUs"]) is None


def test_facts_match_across_case_whitespace_dashes_and_number_words():
    assert normalise("Eight  Different\u00a0Tasks") == "8 different tasks"
    assert contains_fact("errors drop by 34\u201372%", ["34-72%"])
    assert contains_fact("a 15.4\u00d7 speed-up", ["15.4x"])
    assert contains_fact("TWELVE out of 26", ["12 out of 26"])
    # a number matches only at a number's edge
    assert not contains_fact("since 2018 and at 0.8", ["8"])
    assert contains_fact("with 8 heads", ["8"]) and contains_fact("8.", ["8"])


# -- the bank's twins --------------------------------------------------------------------------


@pytest.mark.parametrize("split", ["dev", "test"])
def test_twin_rows_of_a_split_are_honest_twins(split):
    from rag.eval.datasets import load_dataset

    rows = twin_rows(split)
    questions = {q.id: q for q in load_dataset(f"icml2024-{split}").questions}
    assert len(rows) >= 30
    for r in rows:
        q = questions[r["question_id"]]
        assert r["question"] == q.question and r["paper_id"] == q.gold[0]
        assert r["removed"] and r["kept"]
        assert not contains_fact(r["abstract"] + " " + r["title"], q.key_facts)
        assert all(contains_fact(s, q.key_facts) for s in r["removed"])
        assert all(s in r["original"] for s in r["removed"] + r["kept"])
        assert len(r["abstract"]) < len(r["original"])
