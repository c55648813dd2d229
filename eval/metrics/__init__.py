"""Metric families, one module each; every function is pure (plain values in, a number out).

`retrieval`: Recall@k, MRR@k, nDCG@k over ranked paper ids. `answers`: key-fact recall,
citation precision and recall (ALCE-style), support rate. `abstention`: precision, recall and
false-abstention rate of "cannot answer", and threshold sweeps. `latency`: percentiles per stage.

A metric that is undefined for a question (no gold papers, no citations) returns None, and
`mean` leaves it out, so a summary never averages in made-up zeros or ones.
"""

from __future__ import annotations

from typing import Iterable


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the defined values; None when none is defined. Example: [1, None, 0] -> 0.5."""
    vals = [float(v) for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None
