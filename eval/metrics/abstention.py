"""Abstention metrics: does the assistant say "cannot answer" exactly when it should?

Positives are the unanswerable questions. Precision: of the abstentions, the share on
unanswerable questions. Recall: of the unanswerable questions, the share abstained on. False
abstention rate: of the answerable questions, the share wrongly abstained on (the cost users
feel). `sweep` evaluates a score gate (abstain when score < threshold) at many thresholds and
`choose_threshold` picks one by a stated rule; `rag.eval.fit_answerability` uses it.

Example: abstained [T, T, F, F], answerable [F, T, T, F] -> precision 0.5, recall 0.5,
false abstention 0.5.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class AbstentionScores:
    precision: float | None  # None when it never abstained
    recall: float | None  # None when every question is answerable
    false_abstention_rate: float | None  # None when no question is answerable
    abstained: int
    unanswerable: int
    answerable: int
    true_abstentions: int
    false_abstentions: int


def abstention_scores(abstained: Sequence[bool], answerable: Sequence[bool]) -> AbstentionScores:
    """Precision, recall and false-abstention rate of a run's abstentions."""
    if len(abstained) != len(answerable):
        raise ValueError("abstained and answerable must have one entry per question")
    tp = sum(1 for a, ok in zip(abstained, answerable) if a and not ok)
    fp = sum(1 for a, ok in zip(abstained, answerable) if a and ok)
    n_abst = tp + fp
    n_unans = sum(1 for ok in answerable if not ok)
    n_ans = len(answerable) - n_unans
    return AbstentionScores(
        precision=tp / n_abst if n_abst else None,
        recall=tp / n_unans if n_unans else None,
        false_abstention_rate=fp / n_ans if n_ans else None,
        abstained=n_abst, unanswerable=n_unans, answerable=n_ans,
        true_abstentions=tp, false_abstentions=fp)


def at_threshold(scores: Sequence[float], answerable: Sequence[bool], threshold: float
                 ) -> AbstentionScores:
    """The scores of a gate that abstains when `score < threshold`."""
    return abstention_scores([s < threshold for s in scores], answerable)


def sweep(scores: Sequence[float], answerable: Sequence[bool], thresholds: Sequence[float]
          ) -> list[tuple[float, AbstentionScores]]:
    """`at_threshold` at every threshold, in the order given."""
    return [(t, at_threshold(scores, answerable, t)) for t in thresholds]


def choose_threshold(scores: Sequence[float], answerable: Sequence[bool],
                     thresholds: Sequence[float], max_false_abstention: float = 0.05) -> float:
    """The threshold with the highest abstention recall whose false-abstention rate stays at
    or under `max_false_abstention`. Several thresholds usually tie (every value between two
    neighbouring scores does the same on this data); the middle one of them is taken, the
    widest margin on both sides, which holds up better on new questions than either edge.
    Falls back to the lowest threshold when none qualifies."""
    rows = [(t, s.recall or 0.0) for t, s in sweep(scores, answerable, sorted(thresholds))
            if (s.false_abstention_rate or 0.0) <= max_false_abstention]
    if not rows:
        return min(thresholds)
    best = max(r for _, r in rows)
    tied = [t for t, r in rows if r == best]
    return tied[(len(tied) - 1) // 2]


def auroc(scores: Sequence[float], answerable: Sequence[bool]) -> float | None:
    """How well a score separates answerable (high) from unanswerable (low) questions: the
    chance that a random answerable question outscores a random unanswerable one, ties counting
    half. 1.0 is a perfect gate signal, 0.5 is chance. Example: [0.9, 0.4, 0.5], [T, T, F] ->
    0.5. None unless both kinds of question are present."""
    pos = [s for s, ok in zip(scores, answerable) if ok]
    neg = [s for s, ok in zip(scores, answerable) if not ok]
    if not pos or not neg:
        return None
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def cross_validated(scores: Sequence[float], answerable: Sequence[bool],
                    thresholds: Sequence[float], folds: int = 5,
                    max_false_abstention: float = 0.05) -> AbstentionScores:
    """An out-of-sample estimate of `choose_threshold`: each question is judged with the
    threshold chosen on the other folds (question i is in fold i mod `folds`)."""
    decisions = []
    for i, (s, _) in enumerate(zip(scores, answerable)):
        train = [j for j in range(len(scores)) if j % folds != i % folds]
        t = choose_threshold([scores[j] for j in train], [answerable[j] for j in train],
                             thresholds, max_false_abstention)
        decisions.append(s < t)
    return abstention_scores(decisions, answerable)
