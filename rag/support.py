"""The offline support check: is each cited answer sentence backed by the passages it cites?

A sentence is supported when its content words are covered by one cited passage's quote (or the
passage), by at least `MIN_COVERAGE`; with an embedder, a paraphrase with lower word overlap
also counts if it is close in meaning (`MIN_COSINE`). This catches invented facts, numbers and
names; it does not catch a negation flipped with the same words.
"""

from __future__ import annotations

import re

import numpy as np

from .citations import Checked
from .text import coverage

MIN_COVERAGE = 0.6
MIN_COVERAGE_WITH_COSINE = 0.35
MIN_COSINE = 0.6


def check_support(checked: Checked, embedder=None) -> None:
    """Fill `supported` and `support` of every answer sentence in place."""
    by_n = {c.n: c for c in checked.citations}
    for sent in checked.sentences:
        if not sent.citations:
            sent.supported, sent.support = False, 0.0
            continue
        claim = re.sub(r"\[\d+\]", "", sent.text).strip(" -*")
        best_cov, best_text = 0.0, ""
        for n in sent.citations:
            c = by_n.get(n)
            if c is None:
                continue
            for evidence in (c.quote, f"{c.passage.title}. {c.passage.text}"):
                cov = coverage(claim, evidence)
                if cov > best_cov:
                    best_cov, best_text = cov, evidence
        sent.support = best_cov
        sent.supported = best_cov >= MIN_COVERAGE
        if not sent.supported and embedder is not None and best_cov >= MIN_COVERAGE_WITH_COSINE:
            vecs = embedder.embed([claim, best_text])
            cos = float(np.dot(vecs[0], vecs[1]))
            sent.supported = cos >= MIN_COSINE
