"""The abstention gate: answer only when something retrieved is relevant enough.

Relevance is the best cosine similarity (all-MiniLM-L6-v2) between the query and a retrieved
passage, whatever retriever produced it. Measured on eval/datasets/seeds.jsonl (81 answerable,
23 unanswerable questions over the seeds): see DEFAULT_THRESHOLD below.
"""

from __future__ import annotations

from .types import Passage

# Calibrated with `python -m eval.calibrate` on the seed question set (see that script's
# output in the eval README): DEFAULT_THRESHOLD is the value that keeps false abstention on
# answerable questions at or under 5% while abstaining on as many unanswerable ones as it can.
DEFAULT_THRESHOLD = 0.35


def relevance(passages: list[Passage]) -> float:
    return max((p.scores.get("dense", 0.0) for p in passages), default=0.0)


def passes(passages: list[Passage], threshold: float) -> bool:
    return bool(passages) and relevance(passages) >= threshold
