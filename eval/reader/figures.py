"""How well a sentence scorer reads, on the bank's dev (or test) split: the reader's figures.

A scorer maps (question, [pair_text, ...]) to P(states the answer) per sentence; a paper's
score for a question is its best sentence's. Two AUROCs, both "answerable above not":
- `twin_auroc`: each twin question (eval/twins.py) against its original abstract (positive)
  and against the abstract that lost the answering sentences (negative). Same words asked,
  so wording cannot help: it measures reading.
- `near_miss_auroc`: the split's answerable one-paper questions against their gold paper
  (positive) and its near-miss questions against their near paper (negative).

`cosine_scorer` (MiniLM bi-encoder cosine, the pipeline's signal before the reader) is the
baseline beside them.
"""

from __future__ import annotations

import json
from typing import Callable, Sequence

import numpy as np

from rag.models.reader import pair_text

from ..metrics.abstention import auroc
from ..twins import twin_rows
from .papers import DATASETS, corpus, sentences

Scorer = Callable[[str, Sequence[str]], np.ndarray]


def paper_score(scorer: Scorer, question: str, title: str, sents: Sequence[str]) -> float:
    texts = [pair_text(title, sents, i) for i in range(len(sents))]
    return float(np.max(scorer(question, texts))) if texts else 0.0


def _bank(split: str) -> list[dict]:
    path = DATASETS / f"icml2024-{split}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def figures(scorer: Scorer, split: str = "dev") -> dict[str, float | int]:
    twins = twin_rows(split)
    pos = [paper_score(scorer, t["question"], t["title"], sentences(t["original"])) for t in twins]
    neg = [paper_score(scorer, t["question"], t["title"], t["kept"]) for t in twins]
    twin = auroc(pos + neg, [True] * len(pos) + [False] * len(neg))
    papers = {p["id"]: p for p in corpus()}
    a, n = [], []
    for q in _bank(split):
        if q.get("answerable") and len(q.get("gold") or []) == 1 and q["type"] != "list":
            p = papers[q["gold"][0]]
            a.append(paper_score(scorer, q["question"], p["title"], sentences(p["abstract"])))
        elif not q.get("answerable") and q.get("near_paper") in papers:
            p = papers[q["near_paper"]]
            n.append(paper_score(scorer, q["question"], p["title"], sentences(p["abstract"])))
    near = auroc(a + n, [True] * len(a) + [False] * len(n))
    return {"twin_auroc": round(twin, 4), "near_miss_auroc": round(near, 4),
            "twins": len(twins), "answerable": len(a), "near_misses": len(n)}


def cosine_scorer() -> Scorer:
    """MiniLM cosine between the question and the sentence alone (no neighbours)."""
    from rag.models.embedders import MiniLM

    model = MiniLM()

    def score(question: str, texts: Sequence[str]) -> np.ndarray:
        sents = [t.split(" [SEP] ")[0] for t in texts]
        v = model.embed([question, *sents])
        return v[1:] @ v[0]

    return score
