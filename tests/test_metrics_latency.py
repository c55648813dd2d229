"""Latency percentiles: hand-computed cases and agreement with numpy's linear percentile."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rag.eval.metrics.latency import percentile, stage_summary


def test_docstring_example():
    assert percentile([10, 20, 30, 40], 50) == 25.0
    assert percentile([40, 10, 30, 20], 95) == pytest.approx(38.5)  # order does not matter


def test_edges():
    assert percentile([], 50) is None
    assert percentile([7], 95) == 7.0
    assert percentile([1, 2, 3], 0) == 1.0 and percentile([1, 2, 3], 100) == 3.0
    with pytest.raises(ValueError):
        percentile([1], 101)


def test_agrees_with_numpy_linear_interpolation():
    rng = random.Random(3)
    for _ in range(50):
        xs = [rng.uniform(0, 1000) for _ in range(rng.randint(1, 60))]
        for q in (50, 90, 95, 99):
            assert percentile(xs, q) == pytest.approx(float(np.percentile(xs, q)))


def test_stage_summary_reports_each_stage_over_the_answers_that_timed_it():
    timings = [{"retrieve": 10, "total": 30}, {"retrieve": 20, "total": 50}, {"retrieve": 30}]
    s = stage_summary(timings)
    assert s["retrieve"] == {"p50": 20.0, "p95": 29.0, "mean": 20.0, "max": 30.0, "n": 3}
    assert s["total"]["n"] == 2 and s["total"]["p50"] == 40.0
