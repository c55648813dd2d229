"""The retrieval-side relevance of an answer: the best query-passage cosine (all-MiniLM-L6-v2),
whatever retriever produced the passages. Recorded by the evals and shown for answers that
skip the answerability gate (lists, a person's papers); the gate itself is
`answerability.py`, which reads this cosine relative to the corpus's background.

History: a single cosine threshold (0.36, fitted on the 90 seed papers) used to decide
abstention. It could not transfer: the best cosine rises with corpus size and with how much of
a paper's wording a question reuses (abstention recall 0.14-0.40 on the full corpus).
"""

from __future__ import annotations

from ..types import Passage


def relevance(passages: list[Passage]) -> float:
    return max((p.scores.get("dense", 0.0) for p in passages), default=0.0)
