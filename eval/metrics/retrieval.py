"""Ranking metrics over the ranked paper ids of one question: Recall@k, MRR@k, nDCG@k.

Inputs are a ranked list of document ids (best first) and the gold judgements, either a set of
relevant ids (binary) or a dict id -> grade (graded, as BEIR qrels). Repeated ids in the ranking
count once, at their first position (several chunks of one paper are one retrieved paper).
Gains are linear in the grade (trec_eval's and ranx's `ndcg`), and the ideal DCG is computed
from the gold judgements themselves: the best possible ranking of *all* relevant documents, cut
at k. (llama-index computes IDCG as if every retrieved item were relevant, which inflates nDCG
whenever fewer relevant documents are retrieved than k; that is not what is done here.)

Example: ranked ["a", "x", "b"], relevant {"a", "b"}:
    recall_at_k(.., 2) = 0.5, mrr_at_k(.., 10) = 1.0,
    ndcg_at_k(.., 10) = (1 + 1/log2(4)) / (1 + 1/log2(3)) = 0.9197.

Not handled: negative grades (treated as 0) and ties in the ranking (the order given is used).
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

Judgements = Mapping[str, float] | Iterable[str]


def _grades(gold: Judgements) -> dict[str, float]:
    if isinstance(gold, Mapping):
        return {str(k): max(float(v), 0.0) for k, v in gold.items()}
    return {str(k): 1.0 for k in gold}


def unique(ranked: Sequence[str]) -> list[str]:
    """The ranking with repeats removed, first occurrence kept. Example: a b a c -> a b c."""
    return list(dict.fromkeys(ranked))


def recall_at_k(ranked: Sequence[str], gold: Judgements, k: int) -> float | None:
    """Share of the relevant documents found in the top k; None when nothing is relevant."""
    relevant = {d for d, g in _grades(gold).items() if g > 0}
    if not relevant:
        return None
    return len(relevant & set(unique(ranked)[:k])) / len(relevant)


def hit_at_k(ranked: Sequence[str], gold: Judgements, k: int) -> float | None:
    """1.0 if any relevant document is in the top k, else 0.0; None when nothing is relevant."""
    relevant = {d for d, g in _grades(gold).items() if g > 0}
    if not relevant:
        return None
    return float(bool(relevant & set(unique(ranked)[:k])))


def mrr_at_k(ranked: Sequence[str], gold: Judgements, k: int = 10) -> float | None:
    """1 / rank of the first relevant document within the top k (0.0 if none)."""
    grades = _grades(gold)
    if not any(g > 0 for g in grades.values()):
        return None
    for rank, doc in enumerate(unique(ranked)[:k], start=1):
        if grades.get(doc, 0.0) > 0:
            return 1.0 / rank
    return 0.0


def dcg(gains: Sequence[float]) -> float:
    """Discounted cumulative gain of gains in rank order: sum of g_i / log2(i + 1)."""
    return sum(g / math.log2(i + 1) for i, g in enumerate(gains, start=1))


def ndcg_at_k(ranked: Sequence[str], gold: Judgements, k: int = 10) -> float | None:
    """DCG of the top k divided by the DCG of the ideal ordering of the gold judgements."""
    grades = _grades(gold)
    ideal = dcg(sorted((g for g in grades.values() if g > 0), reverse=True)[:k])
    if ideal == 0:
        return None
    return dcg([grades.get(doc, 0.0) for doc in unique(ranked)[:k]]) / ideal
