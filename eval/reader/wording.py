"""Can the wording alone tell a writer's near-misses from its answerable questions?

    python -m rag.eval.reader.wording [GLOB ...]    # default: every team batch, old and new

A TF-IDF logistic regression on the question text (word 1-2 grams, as eval/baseline.py),
grouped 5-fold by paper (a paper's questions are never in both the fit and the scored fold),
per writer and for all rows: the AUROC of telling answerable (1) from near-miss (0). 0.5: the
wording gives nothing away; the goal for written data is at most 0.85 (issue 28).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold

from .papers import DATASETS

SEED = 13


def rows(globs: list[str]) -> list[dict]:
    out = []
    for pattern in globs:
        for path in sorted((DATASETS / "reader" / "team").glob(pattern)):
            out += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                    if line.strip()]
    return out


def auroc(found: list[dict]) -> float:
    text = [r["question"] for r in found]
    y = np.array([int(r["answerable"]) for r in found])
    groups = [r["paper_id"] for r in found]
    scores = np.zeros(len(found))
    for fit, held in GroupKFold(n_splits=5).split(text, y, groups):
        vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
        model = LogisticRegression(C=1.0, max_iter=1000, random_state=SEED)
        model.fit(vec.fit_transform([text[i] for i in fit]), y[fit])
        scores[held] = model.predict_proba(vec.transform([text[i] for i in held]))[:, 1]
    return float(roc_auc_score(y, scores))


def main(argv: list[str]) -> int:
    found = rows(argv or ["batch-*.jsonl"])
    print(f"all: {len(found)} rows, question-only AUROC {auroc(found):.3f}")
    for writer in sorted({r["writer"] for r in found}):
        mine = [r for r in found if r["writer"] == writer]
        if len({r["answerable"] for r in mine}) == 2 and len({r["paper_id"] for r in mine}) >= 5:
            print(f"{writer}: {len(mine)} rows, question-only AUROC {auroc(mine):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
