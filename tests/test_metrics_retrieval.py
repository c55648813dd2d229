"""Retrieval metrics: hand-computed cases, then agreement with ranx on random rankings."""

from __future__ import annotations

import math
import random

import pytest

from rag.eval.metrics.retrieval import (dcg, hit_at_k, mrr_at_k, ndcg_at_k, recall_at_k, unique)


def test_recall_counts_the_share_of_gold_found_in_the_top_k():
    ranked = ["a", "x", "b", "y"]
    assert recall_at_k(ranked, {"a", "b"}, 1) == 0.5
    assert recall_at_k(ranked, {"a", "b"}, 2) == 0.5
    assert recall_at_k(ranked, {"a", "b"}, 3) == 1.0
    assert recall_at_k(ranked, {"z"}, 10) == 0.0


def test_metrics_are_undefined_without_gold_rather_than_zero_or_one():
    for metric in (lambda r, g: recall_at_k(r, g, 5), lambda r, g: hit_at_k(r, g, 5),
                   mrr_at_k, ndcg_at_k):
        assert metric(["a", "b"], set()) is None
        assert metric(["a", "b"], {"a": 0}) is None  # a judged-irrelevant doc is not gold


def test_a_paper_retrieved_twice_counts_once_at_its_first_rank():
    assert unique(["a", "b", "a", "c"]) == ["a", "b", "c"]
    # Without dedup "c" would sit at rank 4 and fall out of the top 3.
    assert recall_at_k(["a", "a", "b", "c"], {"c"}, 3) == 1.0
    assert mrr_at_k(["x", "x", "x", "g"], {"g"}) == 0.5


def test_mrr_is_the_reciprocal_rank_of_the_first_relevant_within_k():
    assert mrr_at_k(["x", "y", "g", "h"], {"g", "h"}) == pytest.approx(1 / 3)
    assert mrr_at_k(["x", "y", "g"], {"g"}, k=2) == 0.0


def test_dcg_discounts_by_log2_of_rank_plus_one():
    assert dcg([1, 1, 1]) == pytest.approx(1 + 1 / math.log2(3) + 0.5)


def test_ndcg_worked_example_from_the_docstring():
    assert ndcg_at_k(["a", "x", "b"], {"a", "b"}) == pytest.approx(
        (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3)))
    assert ndcg_at_k(["a", "x", "b"], {"a", "b"}) == pytest.approx(0.9197, abs=1e-4)


def test_ndcg_ideal_dcg_comes_from_the_gold_not_from_the_retrieved_list():
    # One of three relevant documents retrieved at rank 1. llama-index's version takes the
    # ideal DCG over the retrieved list (here one item) and would report 1.0.
    expected = 1 / (1 + 1 / math.log2(3) + 1 / math.log2(4))
    assert ndcg_at_k(["a"], {"a", "b", "c"}) == pytest.approx(expected)
    assert ndcg_at_k(["a"], {"a", "b", "c"}) < 0.5


def test_ndcg_uses_graded_gains_and_the_ideal_order_of_the_grades():
    gold = {"a": 1, "b": 2}
    ideal = 2 + 1 / math.log2(3)
    assert ndcg_at_k(["a", "b"], gold) == pytest.approx((1 + 2 / math.log2(3)) / ideal)
    assert ndcg_at_k(["b", "a"], gold) == pytest.approx(1.0)


def test_ndcg_ideal_is_cut_at_k():
    gold = {d: 1 for d in "abcdefghijkl"}  # 12 relevant, only 10 can be shown
    assert ndcg_at_k(list("abcdefghij"), gold, k=10) == pytest.approx(1.0)


def _random_case(rng: random.Random):
    docs = [f"d{i}" for i in range(30)]
    ranked = rng.sample(docs, rng.randint(1, 20))
    gold = {d: rng.choice([1, 1, 2]) for d in rng.sample(docs, rng.randint(1, 6))}
    return ranked, gold


@pytest.mark.slow
def test_every_metric_agrees_with_ranx_on_200_random_queries():
    ranx = pytest.importorskip("ranx")
    rng = random.Random(7)
    cases = {f"q{i}": _random_case(rng) for i in range(200)}
    qrels = ranx.Qrels({q: {d: int(g) for d, g in gold.items()} for q, (_, gold) in cases.items()})
    run = ranx.Run({q: {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
                    for q, (ranked, _) in cases.items()})
    names = ["recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10", "hit_rate@5"]
    oracle = ranx.evaluate(qrels, run, names, return_mean=False)
    ours = {"recall@1": lambda r, g: recall_at_k(r, g, 1),
            "recall@5": lambda r, g: recall_at_k(r, g, 5),
            "recall@10": lambda r, g: recall_at_k(r, g, 10),
            "mrr@10": lambda r, g: mrr_at_k(r, g, 10),
            "ndcg@10": lambda r, g: ndcg_at_k(r, g, 10),
            "hit_rate@5": lambda r, g: hit_at_k(r, g, 5)}
    for name in names:
        # ranx orders its per-query results by query id as given to Qrels.
        mine = [ours[name](*cases[q]) for q in qrels.keys()]
        assert mine == pytest.approx(list(oracle[name]), abs=1e-9), name
