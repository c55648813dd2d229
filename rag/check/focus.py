"""The focus check: an answer sentence that restates the question must cite a paper that speaks
of what was asked (issue 17, item 6: facts from the wrong paper).

A small model often repeats the question and attaches a fact from another retrieved paper:
asked "What's the name of the algorithm giving the first finite-time guarantee for
decentralized nonsmooth nonconvex stochastic optimization?", it answers "The algorithm giving
the first finite-time guarantee for decentralized nonsmooth nonconvex stochastic optimization is
AdaMDOS and AdaMDOF [1]", citing a paper on adaptive decentralized algorithms for *smooth*
finite-sum problems. The support check passes it: most of its words are in the cited abstract.
But the words it took from the question ("nonsmooth", "finite-time", "guarantee") are not, so
the cited paper is not about what was asked.

What was asked is the question's content words (stems, `text.tokenize`; generic ones such as
"paper" or "propose" left out) that the shown paper matching the question best also writes
(`asked_terms`): the question's own phrasing ("how large were", "what role does it play") is
left out, the topic it names kept. `off_focus(claim, asked, evidence)`: the claim's words among
those, weighted by rarity (IDF), must be held by the cited evidence for at least `MIN_FOCUS` of
their weight, when there are at least `MIN_RESTATED` of them. Words the claim does not repeat
from the question are left to the support check.
"""

from __future__ import annotations

from typing import Sequence

from ..lexicon import ASKING_WORDS
from ..text import Idf, content_terms, share, term_weights
from ..types import Passage

# Chosen on the local model's answers to train and dev questions (eval/fit_focus.py): it flags
# 3 of 5 sentences citing only a wrong paper and 3 of 152 citing the right one.
MIN_FOCUS = 0.85
MIN_RESTATED = 2  # restated words, or the claim repeats too little of the question to judge



def asked_terms(question: str, shown: Sequence[Passage], idf: Idf | None = None
                ) -> frozenset[str]:
    """The question's content words that the shown passage covering most of them writes."""
    weights = {t: w for t, w in term_weights(question, idf).items() if t not in ASKING_WORDS}
    best: set[str] = set()
    for passage in shown:
        found = set(weights) & content_terms(f"{passage.title}. {passage.text}")
        if share(weights, found) > share(weights, best):
            best = found
    return frozenset(best)


def focus(claim: str, asked: frozenset[str], evidence: list[str], idf: Idf | None = None
          ) -> float | None:
    """The IDF-weighted share of the asked words the claim repeats that the evidence holds;
    None when the claim repeats fewer than `MIN_RESTATED` of them."""
    restated = content_terms(claim) & asked
    if len(restated) < MIN_RESTATED:
        return None
    weights = {t: w for t, w in term_weights(claim, idf).items() if t in restated}
    found = set().union(*(content_terms(text) for text in evidence)) if evidence else set()
    return share(weights, found)


def off_focus(claim: str, asked: frozenset[str], evidence: list[str], idf: Idf | None = None
              ) -> bool:
    """Whether the claim restates what was asked about papers that do not speak of it."""
    value = focus(claim, asked, evidence, idf)
    return value is not None and value < MIN_FOCUS
