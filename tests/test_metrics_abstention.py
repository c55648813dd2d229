"""Abstention metrics and the threshold sweep, on hand-computed cases."""

from __future__ import annotations

import pytest

from rag.eval.metrics.abstention import abstention_scores, at_threshold, choose_threshold, sweep


def test_docstring_example():
    s = abstention_scores([True, True, False, False], [False, True, True, False])
    assert (s.precision, s.recall, s.false_abstention_rate) == (0.5, 0.5, 0.5)
    assert (s.true_abstentions, s.false_abstentions, s.unanswerable, s.answerable) == (1, 1, 2, 2)


def test_a_system_that_never_abstains_has_no_precision_and_zero_recall():
    s = abstention_scores([False] * 4, [True, True, False, False])
    assert s.precision is None
    assert s.recall == 0.0
    assert s.false_abstention_rate == 0.0


def test_a_system_that_always_abstains_has_full_recall_and_full_false_abstention():
    s = abstention_scores([True] * 4, [True, False, False, False])
    assert s.precision == 0.75
    assert s.recall == 1.0
    assert s.false_abstention_rate == 1.0


def test_rates_are_undefined_when_their_denominator_is_empty():
    assert abstention_scores([True], [True]).recall is None
    assert abstention_scores([True], [False]).false_abstention_rate is None


def test_lengths_must_match():
    with pytest.raises(ValueError):
        abstention_scores([True], [True, False])


# Gate scores of six questions: answerable ones score high, unanswerable ones low, one overlap.
SCORES = [0.80, 0.70, 0.45, 0.30, 0.20, 0.50]
ANSWERABLE = [True, True, True, False, False, False]


def test_at_threshold_abstains_strictly_below_the_threshold():
    s = at_threshold(SCORES, ANSWERABLE, 0.30)
    assert s.abstained == 1  # only 0.20; 0.30 is not below 0.30
    s = at_threshold(SCORES, ANSWERABLE, 0.46)
    assert (s.true_abstentions, s.false_abstentions) == (2, 1)


def test_sweep_is_monotone_in_recall_and_false_abstention():
    rows = sweep(SCORES, ANSWERABLE, [i / 20 for i in range(21)])
    recalls = [s.recall for _, s in rows]
    fars = [s.false_abstention_rate for _, s in rows]
    assert recalls == sorted(recalls) and fars == sorted(fars)


def test_choose_threshold_maximises_recall_within_the_false_abstention_budget():
    grid = [i / 100 for i in range(101)]
    # No false abstention allowed: every threshold in 0.31..0.45 catches 0.30 and 0.20 without
    # touching 0.45; the middle of that range is taken.
    assert choose_threshold(SCORES, ANSWERABLE, grid, max_false_abstention=0.0) == 0.38
    # One of three answerable may be lost: 0.51..0.70 also catch 0.50 (and lose 0.45).
    assert choose_threshold(SCORES, ANSWERABLE, grid, max_false_abstention=0.34) == 0.60


def test_choose_threshold_falls_back_to_the_lowest_when_nothing_fits():
    assert choose_threshold([0.1], [True], [0.5, 0.9], max_false_abstention=0.0) == 0.5


def test_auroc_docstring_example_and_edges():
    from rag.eval.metrics.abstention import auroc

    assert auroc([0.9, 0.4, 0.5], [True, True, False]) == 0.5
    assert auroc([0.9, 0.8, 0.1], [True, True, False]) == 1.0
    assert auroc([0.5, 0.5], [True, False]) == 0.5  # a tie is a coin flip
    assert auroc([0.5], [True]) is None


def test_cross_validation_judges_each_question_with_a_threshold_chosen_without_it():
    from rag.eval.metrics.abstention import cross_validated

    grid = [i / 100 for i in range(101)]
    # Perfectly separable scores: every fold learns a threshold between the two groups.
    scores = [0.9, 0.8, 0.7, 0.6, 0.2, 0.1]
    answerable = [True, True, True, True, False, False]
    s = cross_validated(scores, answerable, grid, folds=3, max_false_abstention=0.0)
    assert (s.recall, s.false_abstention_rate) == (1.0, 0.0)
    # An unanswerable question scoring like the answerable ones (0.85) is missed out of sample,
    # and the folds that learn from it set a threshold that wrongly abstains on 0.8.
    s = cross_validated([0.9, 0.8, 0.85, 0.1, 0.1], [True, True, False, False, False], grid,
                        folds=5, max_false_abstention=0.0)
    assert s.recall == pytest.approx(2 / 3)
    assert s.false_abstention_rate == 0.5


def test_a_bootstrap_interval_holds_the_mean_and_narrows_with_more_questions():
    from rag.eval.metrics.intervals import fmt, interval, ratio_interval

    assert interval([]) is None and ratio_interval([]) is None
    assert interval([1.0] * 20) == (1.0, 1.0)  # no spread, no interval
    few, many = interval([1, 0] * 5), interval([1, 0] * 200)
    assert few[0] < 0.5 < few[1] and many[0] < 0.5 < many[1]
    assert many[1] - many[0] < few[1] - few[0]
    assert interval([1, 0, 1, 1]) == interval([1, 0, 1, 1])  # seeded: a report is repeatable
    low, high = ratio_interval([(1, 1), (0, 1), (1, 1), (0, 0)])  # precision 2/3
    assert low <= 2 / 3 <= high
    assert fmt(0.5, (0.25, 0.75)) == "0.500 [0.250, 0.750]" and fmt(None, None) == "–"
