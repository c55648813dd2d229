"""Latency percentiles per pipeline stage, from each answer's `timings_ms`.

Percentiles interpolate linearly between order statistics (numpy's default, "linear"), so
p50 of [10, 20, 30, 40] is 25.0 and p95 is 38.5.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100) of `values`; None for no values."""
    if not 0 <= q <= 100:
        raise ValueError("q must be between 0 and 100")
    xs = sorted(float(v) for v in values)
    if not xs:
        return None
    pos = (len(xs) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def stage_summary(timings: Sequence[Mapping[str, float]]) -> dict[str, dict[str, float | None]]:
    """{stage: {p50, p95, mean, max, n}} over the answers that timed that stage."""
    stages = sorted({s for t in timings for s in t})
    out = {}
    for stage in stages:
        xs = [float(t[stage]) for t in timings if stage in t]
        out[stage] = {"p50": percentile(xs, 50), "p95": percentile(xs, 95),
                      "mean": sum(xs) / len(xs), "max": max(xs), "n": len(xs)}
    return out
