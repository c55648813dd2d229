"""The abstention gate: answer only when something retrieved is relevant enough.

Relevance is the best cosine similarity (all-MiniLM-L6-v2) between the query and a retrieved
passage, whatever retriever produced it. Measured on eval/datasets/seeds.jsonl (81 answerable,
23 unanswerable questions over the seeds): see DEFAULT_THRESHOLD below.
"""

from __future__ import annotations

from ..types import Passage

# Calibrated with `python -m rag.eval.calibrate` on the seed question set (default settings, hybrid
# z-score fusion, k=5; 2026-12-02). Rule: the highest abstention recall with false abstention on
# answerable questions at or under 5%, taking the middle of the tied range. Measured:
#   0.35: abstains on 9/23 unanswerable (recall 0.391), 3/81 answerable (0.037)
#   0.36: abstains on 12/23 unanswerable (recall 0.522), 3/81 answerable (0.037)  <- chosen
#   0.40: recall 0.609, false abstention 0.062 (over budget); 0.45: 0.826 and 0.173
# 5-fold cross-validated at this rule: recall 0.522, false abstention 0.049. The margin is thin
# (unanswerable questions at 0.357, an answerable one at 0.364), and near-miss questions
# (median 0.43) overlap answerable ones (median 0.55): this signal alone cannot reach
# abstention recall 0.9 without losing a third of the answerable questions.
DEFAULT_THRESHOLD = 0.36


def relevance(passages: list[Passage]) -> float:
    return max((p.scores.get("dense", 0.0) for p in passages), default=0.0)


def passes(passages: list[Passage], threshold: float) -> bool:
    return bool(passages) and relevance(passages) >= threshold
