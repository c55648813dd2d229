"""95% bootstrap intervals for the eval's figures: every abstention and key-fact figure is
printed with one, so that a difference of a few questions is not read as a change.

`interval(values)` resamples the per-question values (1,000 times, a fixed seed, so a report is
the same run to run) and gives the 2.5th and 97.5th percentiles of the resampled means; a ratio
such as abstention precision resamples (numerator, denominator) pairs.

Example: interval([1, 0, 1, 1]) -> (0.25, 1.0).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

RESAMPLES = 1000
SEED = 0


def interval(values: Sequence[float], resamples: int = RESAMPLES) -> tuple[float, float] | None:
    """The 95% bootstrap interval of the mean of `values` (None when there are none)."""
    x = np.asarray(list(values), dtype=float)
    if not x.size:
        return None
    rng = np.random.default_rng(SEED)
    means = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def ratio_interval(pairs: Sequence[tuple[float, float]], resamples: int = RESAMPLES
                   ) -> tuple[float, float] | None:
    """The 95% bootstrap interval of sum(num) / sum(den) over (num, den) pairs."""
    x = np.asarray(list(pairs), dtype=float)
    if not x.size or x[:, 1].sum() == 0:
        return None
    rng = np.random.default_rng(SEED)
    idx = rng.integers(0, len(x), size=(resamples, len(x)))
    num, den = x[idx, 0].sum(axis=1), x[idx, 1].sum(axis=1)
    ratios = num[den > 0] / den[den > 0]
    return float(np.quantile(ratios, 0.025)), float(np.quantile(ratios, 0.975))


def fmt(value: float | None, bounds: tuple[float, float] | None) -> str:
    """'0.370 [0.250, 0.490]', or the value alone when it has no interval."""
    if value is None:
        return "–"
    return f"{value:.3f}" + (f" [{bounds[0]:.3f}, {bounds[1]:.3f}]" if bounds else "")
