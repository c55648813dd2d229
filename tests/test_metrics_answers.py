"""Answer metrics: key-fact recall and ALCE-style citation precision/recall, hand-computed."""

from __future__ import annotations

import pytest

from rag.eval.metrics.answers import (CitationJudgement as J, citation_precision, citation_recall,
                                  cites_gold, gold_citation_precision, key_fact_recall,
                                  normalise)

GOLD_OK = J(gold=True, supports=True)
GOLD_ONLY = J(gold=True, supports=False)
SUPPORT_ONLY = J(gold=False, supports=True)
WRONG = J(gold=False, supports=False)


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
    sentences = [[GOLD_OK], [WRONG, GOLD_OK], []]
    assert citation_precision(sentences) == pytest.approx(2 / 3)
    assert gold_citation_precision(sentences) == pytest.approx(2 / 3)
    assert citation_recall(sentences) == pytest.approx(2 / 3)


def test_citation_precision_accepts_gold_or_supporting_citations():
    sentences = [[GOLD_ONLY], [SUPPORT_ONLY], [WRONG]]
    assert citation_precision(sentences) == pytest.approx(2 / 3)
    assert gold_citation_precision(sentences) == pytest.approx(1 / 3)


def test_citation_recall_needs_a_supporting_citation_not_just_a_gold_one():
    # A gold paper cited under a sentence it does not support does not back that sentence.
    assert citation_recall([[GOLD_ONLY], [SUPPORT_ONLY]]) == 0.5
    assert citation_recall([[WRONG, SUPPORT_ONLY]]) == 1.0


def test_uncited_sentences_lower_recall_but_not_precision():
    sentences = [[GOLD_OK], [], []]
    assert citation_recall(sentences) == pytest.approx(1 / 3)
    assert citation_precision(sentences) == 1.0


def test_citation_metrics_are_undefined_for_an_empty_answer():
    assert citation_precision([]) is None
    assert citation_recall([]) is None
    assert citation_precision([[], []]) is None  # sentences but no citations at all
    assert citation_recall([[], []]) == 0.0


def test_cites_gold_is_whether_any_citation_points_at_a_gold_paper():
    assert cites_gold([[WRONG], [SUPPORT_ONLY, GOLD_ONLY]]) == 1.0
    assert cites_gold([[WRONG], [SUPPORT_ONLY]]) == 0.0
    assert cites_gold([[]]) is None
