"""How well a sentence scorer reads, on the bank's dev (or test) split: the reader's figures.

A scorer maps (question, [pair_text, ...]) to P(states the answer) per sentence; a paper's
score for a question is its best sentence's. Two AUROCs, both "answerable above not":
- `twin_auroc`: each twin question (eval/twins.py) against its original abstract (positive)
  and against the abstract that lost the answering sentences (negative). Same words asked,
  so wording cannot help: it measures reading.
- `near_miss_auroc`: the split's answerable one-paper questions against their gold paper
  (positive) and its near-miss questions against their near paper (negative).

`answer_threshold` chooses, on dev, the paper score under which the reader says the abstract
does not state the answer. `cosine_scorer` (MiniLM bi-encoder cosine, the pipeline's signal before the reader) is the
baseline beside them.
"""

from __future__ import annotations

import json
from typing import Callable, Sequence

import numpy as np

from rag.models.reader import pair_text

from ..metrics.abstention import at_threshold, auroc, choose_threshold
from ..twins import twin_rows
from .papers import DATASETS, corpus, sentences

Scorer = Callable[[str, Sequence[str]], np.ndarray]
MAX_FALSE = 0.03  # of answerable dev questions the reader may turn away (the gate's budget is 0.05)


def paper_score(scorer: Scorer, question: str, title: str, sents: Sequence[str]) -> float:
    texts = [pair_text(title, sents, i) for i in range(len(sents))]
    return float(np.max(scorer(question, texts))) if texts else 0.0


def _bank(split: str) -> list[dict]:
    path = DATASETS / f"icml2024-{split}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


# The questions written on the held-out papers for issue 28 (bank/written-*.jsonl): figures
# measured before they existed are measured again without them (`original=True`).
ADDED = "bank-w-"


def paper_scores(scorer: Scorer, split: str = "dev", original: bool = False
                 ) -> dict[str, list[float]]:
    """Each question's paper score, by kind: the split's answerable one-paper questions on
    their gold paper, its near misses on their near paper, its twins on the original
    abstract (`twin_original`) and on the one that lost the answer (`twin`). `original`: the
    bank's questions as they were before the ones written for issue 28 (`ADDED`)."""
    twins = [t for t in twin_rows(split)
             if not (original and t["question_id"].startswith(ADDED))]
    out: dict[str, list[float]] = {
        "twin_original": [paper_score(scorer, t["question"], t["title"],
                                      sentences(t["original"])) for t in twins],
        "twin": [paper_score(scorer, t["question"], t["title"], t["kept"]) for t in twins],
        "answerable": [], "near_miss": []}
    papers = {p["id"]: p for p in corpus()}
    for q in _bank(split):
        if original and q["id"].startswith(ADDED):
            continue
        if q.get("answerable") and len(q.get("gold") or []) == 1 and q["type"] != "list":
            p, kind = papers[q["gold"][0]], "answerable"
        elif not q.get("answerable") and q.get("near_paper") in papers:
            p, kind = papers[q["near_paper"]], "near_miss"
        else:
            continue
        out[kind].append(paper_score(scorer, q["question"], p["title"], sentences(p["abstract"])))
    return out


def figures(scorer: Scorer, split: str = "dev",
            scores: dict[str, list[float]] | None = None, original: bool = False
            ) -> dict[str, float | int]:
    s = scores or paper_scores(scorer, split, original)
    pos, neg = s["twin_original"], s["twin"]
    a, n = s["answerable"], s["near_miss"]
    return {"twin_auroc": round(auroc(pos + neg, [True] * len(pos) + [False] * len(neg)), 4),
            "near_miss_auroc": round(auroc(a + n, [True] * len(a) + [False] * len(n)), 4),
            "twins": len(pos), "answerable": len(a), "near_misses": len(n)}


def answer_threshold(scores: dict[str, list[float]], max_false: float = MAX_FALSE) -> dict:
    """The reader's own threshold: the paper score under which the gate says the abstract
    does not state it, chosen on dev as the gate's is (the highest abstention recall on near
    misses and twins with at most `max_false` of answerable questions turned away)."""
    a, bad = scores["answerable"], scores["near_miss"] + scores["twin"]
    values, ok = a + bad, [True] * len(a) + [False] * len(bad)
    t = choose_threshold(values, ok, sorted(set(values) | {0.0, 1.0}), max_false)
    at = at_threshold(values, ok, t)
    caught = lambda xs: round(sum(x < t for x in xs) / max(1, len(xs)), 4)  # noqa: E731
    return {"threshold": round(float(t), 6), "false_abstention": round(at.false_abstention_rate
                                                                       or 0.0, 4),
            "near_misses_caught": caught(scores["near_miss"]), "twins_caught": caught(scores["twin"])}


def cosine_scorer() -> Scorer:
    """MiniLM cosine between the question and the sentence alone (no neighbours)."""
    from rag.models.embedders import MiniLM

    model = MiniLM()

    def score(question: str, texts: Sequence[str]) -> np.ndarray:
        sents = [t.split(" [SEP] ")[0] for t in texts]
        v = model.embed([question, *sents])
        return v[1:] @ v[0]

    return score
