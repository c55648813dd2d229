"""The extractive generator: an answer made of the retrieved abstracts' own sentences.

No language model: each sentence of the retrieved passages is scored against the question
(the IDF-weighted share of the question's terms it contains, plus its passage's cosine
similarity to the question), and the best ones are quoted verbatim with their `[n]`, so the answer is faithful by construction. Questions asking
for several papers ("which papers study X?") are answered by `listing.py`.

Example: "Which kernels avoid mean reversion?" -> "We show that non-positive kernels ... [1]"
"""

from __future__ import annotations

import re
from typing import Iterator

from ..text import content_terms, coverage
from ..types import Passage
from . import History

MAX_SENTENCES = 3


def weighted_coverage(question: str, sentence: str, idf=None) -> float:
    """IDF-weighted share of the question's terms that the sentence contains (0 if none)."""
    return coverage(question, sentence, idf) if content_terms(question) else 0.0


class Extractive:
    name = "extractive"

    def __init__(self, min_relevance: float = 0.0, idf=None):
        self.min_relevance = min_relevance
        self.idf = idf  # (vocabulary, idf array) of the index, for weighting question terms

    def score_sentences(self, question: str, passages: list[Passage]
                        ) -> list[tuple[float, int, int, str]]:
        """(score, passage index, sentence position, sentence) for every passage sentence."""
        cands = [(i, j, t) for i, p in enumerate(passages)
                 for j, (_, _, t) in enumerate(p.sentence_texts()) if t.strip()]
        # A sentence from a less relevant passage needs proportionally more of the question's
        # terms to win: its coverage is scaled by its passage's cosine relative to the best.
        rel = [max(p.scores.get("dense", 0.0), 1e-6) for p in passages]
        top = max(rel) if rel else 1.0
        return [(weighted_coverage(question, t, self.idf) * (rel[i] / top) ** 2, i, j, t)
                for i, j, t in cands]

    def generate(self, question: str, passages: list[Passage],
                 history: History = ()) -> Iterator[str]:
        relevant = [i for i, p in enumerate(passages)
                    if p.scores.get("dense", 1.0) >= self.min_relevance]
        pool = [passages[i] for i in relevant]
        scored = self.score_sentences(question, pool)
        if not scored:
            return
        scored.sort(key=lambda r: (-r[0], r[1], r[2]))
        top = scored[0][0]
        chosen, per_passage = [], {}
        for score, pi, sj, sent in scored:
            if len(chosen) == MAX_SENTENCES or score < 0.85 * top:
                break
            if per_passage.get(pi, 0) >= 2:
                continue
            per_passage[pi] = per_passage.get(pi, 0) + 1
            chosen.append((pi, sj, sent))
        # Sentences of one paper stay together and in the paper's order.
        order = {pi: k for k, (pi, _, _) in enumerate(chosen)}
        chosen.sort(key=lambda r: (order[r[0]], r[1]))
        yield " ".join(cite(sent, relevant[pi] + 1) for pi, _, sent in chosen)


def cite(sentence: str, n: int) -> str:
    """The sentence with its marker before the final punctuation: 'We find X [1].'"""
    m = re.match(r"(.*?)([.!?]+[\"')\]]*)?\s*$", sentence.strip(), re.S)
    body, end = m.group(1), m.group(2) or "."
    return f"{body} [{n}]{end}"
