"""The question-only baseline: how much of an abstention figure wording alone can earn.

A TF-IDF logistic regression (scikit-learn) that sees only the question text, fitted on the
bank's train split to tell answerable from unanswerable questions. Its AUROC on a split's
answerable questions against one kind of unanswerable question says how far that kind can be
told apart by its wording: near misses that ask "which GPU / what learning rate" score high,
twins score 0.5 by construction (a twin is its answerable question, word for word). An
abstention figure is evidence of reading only where this baseline is near 0.5.

Example: fitted on ["What GPU was used?" (no), "What does X propose?" (yes), ...], it scores
"Which GPUs trained Y?" low and "What does Y propose?" high: AUROC 1.0 on that pair.
Not handled: anything but the question's words (no paper, no retrieval): that is the point.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from .metrics.abstention import auroc

SEED = 0


@dataclass
class QuestionOnly:
    """A fitted question-only classifier; `score` is its P(answerable) per question."""

    vectorizer: TfidfVectorizer
    model: LogisticRegression
    fitted_on: str

    def score(self, questions: Sequence[str]) -> list[float]:
        return [float(p) for p in self.model.predict_proba(
            self.vectorizer.transform(list(questions)))[:, 1]]


def fit(questions: Sequence[str], answerable: Sequence[bool], fitted_on: str = "") -> QuestionOnly:
    """TF-IDF over word unigrams and bigrams (sublinear tf), then an L2 logistic regression."""
    if len(set(answerable)) < 2:
        raise ValueError("the question-only baseline needs answerable and unanswerable questions")
    vectorizer = TfidfVectorizer(lowercase=True, ngram_range=(1, 2), sublinear_tf=True)
    x = vectorizer.fit_transform(list(questions))
    model = LogisticRegression(C=1.0, max_iter=1000, random_state=SEED)
    model.fit(x, [int(a) for a in answerable])
    return QuestionOnly(vectorizer, model, fitted_on)


def fit_on_train() -> QuestionOnly:
    """The baseline fitted on every question of the bank's train split."""
    from .datasets import load_dataset

    train = load_dataset("icml2024-train").questions
    return fit([q.question for q in train], [q.answerable for q in train], "icml2024-train")


def figures(baseline: QuestionOnly, questions: Sequence[Any],
            twins: Sequence[tuple[str, str]] = ()) -> dict[str, dict[str, Any]]:
    """The baseline's AUROC beside each abstention figure of a dataset, with the counts:
    `unanswerable` (answerable vs every unanswerable question), `near_miss` (vs the near
    misses), `twins` (each twin's answerable question vs the twin; `twins` holds (question
    text, twin question text) pairs). A figure without both sides is left out."""
    scores = baseline.score([q.question for q in questions])
    pos = [s for s, q in zip(scores, questions) if q.answerable]
    out: dict[str, dict[str, Any]] = {}
    groups = {"unanswerable": [s for s, q in zip(scores, questions) if not q.answerable],
              "near_miss": [s for s, q in zip(scores, questions)
                            if not q.answerable and q.type == "near_miss"]}
    for name, neg in groups.items():
        if pos and neg:
            out[name] = {"auroc": auroc(pos + neg, [True] * len(pos) + [False] * len(neg)),
                         "answerable": len(pos), "unanswerable": len(neg)}
    if twins:
        a = baseline.score([t[0] for t in twins])
        b = baseline.score([t[1] for t in twins])
        out["twins"] = {"auroc": auroc(a + b, [True] * len(a) + [False] * len(b)),
                        "answerable": len(a), "unanswerable": len(b)}
    return out
