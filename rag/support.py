"""The offline support check: is each cited answer sentence backed by the passages it cites?

A sentence is supported when its content words are covered by one cited passage's quote (or the
passage), by at least `MIN_COVERAGE`; with an embedder, a paraphrase with lower word overlap
also counts if it is close in meaning (`MIN_COSINE`). Whatever the overlap, a sentence that states
a number none of its cited passages contain (an invented "factor of 2", a changed percentage) is
unsupported. This catches invented facts, numbers and names; it does not catch a negation flipped
with the same words.
"""

from __future__ import annotations

import re

import numpy as np

from .citations import Checked
from .text import coverage

MIN_COVERAGE = 0.6
MIN_COVERAGE_WITH_COSINE = 0.35
MIN_COSINE = 0.6

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
_NUMBER_WORDS = {
    "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "twice": "2", "double": "2", "half": "2", "triple": "3",
    "thrice": "3",
}
_NUMBER_WORD = re.compile(rf"\b({'|'.join(_NUMBER_WORDS)})\b", re.I)


def numbers(text: str) -> set[str]:
    """The numbers a text states, normalised ("1,000" -> "1000", "2.50" -> "2.5")."""
    found = set()
    for raw in _NUMBER.findall(text):
        value = raw.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+", raw) else raw
        if "." in value:
            value = value.rstrip("0").rstrip(".")
        found.add(value)
    return found


def unbacked_numbers(claim: str, evidence: list[str]) -> set[str]:
    """Numbers in the claim that no evidence text states, as digits or as a number word."""
    stated = numbers(claim)
    if not stated:
        return set()
    backed: set[str] = set()
    for text in evidence:
        backed |= numbers(text)
        backed |= {_NUMBER_WORDS[w.lower()] for w in _NUMBER_WORD.findall(text)}
    return stated - backed


def check_support(checked: Checked, embedder=None) -> None:
    """Fill `supported` and `support` of every answer sentence in place."""
    by_n = {c.n: c for c in checked.citations}
    for sent in checked.sentences:
        if not sent.citations:
            sent.supported, sent.support = False, 0.0
            continue
        claim = re.sub(r"\[\d+\]", "", sent.text).strip(" -*")
        best_cov, best_text, evidence_texts = 0.0, "", []
        for n in sent.citations:
            c = by_n.get(n)
            if c is None:
                continue
            evidence_texts.append(f"{c.passage.title}. {c.passage.text}")
            for evidence in (c.quote, evidence_texts[-1]):
                cov = coverage(claim, evidence)
                if cov > best_cov:
                    best_cov, best_text = cov, evidence
        sent.support = best_cov
        if unbacked_numbers(claim, evidence_texts):
            sent.supported = False
            continue
        sent.supported = best_cov >= MIN_COVERAGE
        if not sent.supported and embedder is not None and best_cov >= MIN_COVERAGE_WITH_COSINE:
            vecs = embedder.embed([claim, best_text])
            cos = float(np.dot(vecs[0], vecs[1]))
            sent.supported = cos >= MIN_COSINE
