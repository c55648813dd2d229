"""Answer metrics: key-fact recall and gold-paper citation metrics, hand-computed; none of them
uses the pipeline's own support rule."""

from __future__ import annotations

import pytest

from rag.eval.metrics.answers import (CitationJudgement as J, cites_gold, gold_citation_precision,
                                      key_fact_recall, normalise)

GOLD = J(gold=True)
WRONG = J(gold=False)


def test_key_facts_match_case_and_punctuation_insensitively():
    answer = "WMDP holds 3,668 multiple-choice questions on BioSecurity and cyber-security."
    assert key_fact_recall(answer, ["3,668", "biosecurity", "cybersecurity"]) == pytest.approx(
        2 / 3)  # "cyber-security" is two words, "cybersecurity" one: not the same fact
    assert key_fact_recall(answer, ["3 668", "Multiple choice"]) == 1.0


def test_key_facts_match_whole_words_only():
    assert key_fact_recall("they use BL890 here", ["BL89"]) == 0.0
    assert key_fact_recall("they build on BL89.", ["BL89"]) == 1.0


def test_key_fact_recall_keeps_non_ascii_letters():
    assert normalise("Matérn-5/2 kernels") == "matérn 5 2 kernels"
    assert key_fact_recall("resembling Matérn kernels", ["Matérn"]) == 1.0


def test_key_fact_recall_is_undefined_without_key_facts():
    assert key_fact_recall("anything", []) is None


def test_docstring_example():
    sentences = [[GOLD], [WRONG, GOLD], []]
    assert gold_citation_precision(sentences) == pytest.approx(2 / 3)
    assert cites_gold(sentences) == 1.0


def test_gold_precision_counts_every_citation_of_every_sentence():
    assert gold_citation_precision([[GOLD], [WRONG], [WRONG]]) == pytest.approx(1 / 3)
    assert gold_citation_precision([[GOLD, GOLD]]) == 1.0


def test_citation_metrics_are_undefined_without_citations():
    assert gold_citation_precision([]) is None
    assert gold_citation_precision([[], []]) is None  # sentences but no citations at all
    assert cites_gold([[]]) is None


def test_cites_gold_is_whether_any_citation_points_at_a_gold_paper():
    assert cites_gold([[WRONG], [WRONG, GOLD]]) == 1.0
    assert cites_gold([[WRONG], [WRONG]]) == 0.0


def test_no_metric_asks_the_pipeline_whether_a_citation_supports_its_sentence():
    import dataclasses

    import rag.eval.metrics.answers as answers

    assert [f.name for f in dataclasses.fields(J)] == ["gold"]
    assert not hasattr(answers, "citation_recall") and not hasattr(answers, "citation_precision")
