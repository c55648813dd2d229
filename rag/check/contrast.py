"""Names the cited abstract gives only as what the paper sets itself against (issue 17, item 6:
a baseline stated as the method's own).

Asked what approximate inference VITS uses, a small model answered "VITS uses approximate
inference techniques, such as Laplace approximation or MCMC methods [1]", citing an abstract
that names them only to criticise them: "However, current approximate techniques yield to
either poor estimation (Laplace approximation) or can be computationally expensive (MCMC
methods ...)". Every word is in the abstract; the role is not.

A name of the abstract is *set against* where it stands
  - in a sentence about others' work: one opening with a `PRIOR` word ("Existing methods",
    "However, current techniques", "Previous work") and with no first person ("we", "our"), or
  - within `REACH` words after a `COMPARING` word ("unlike", "than", "compared to",
    "outperforms", "instead of").
`set_against(claim, evidence, asked)` lists the claim's names (`names.claim_names`) that every
cited evidence sentence writing them sets against, unless the claim or the question compares
or speaks of others' work (one of those words, or a `CLAIM_CONTRAST` word such as "improves",
"avoids" or "tighter": "Whose bound does it tighten?" is answered by a baseline), or the
question names them too (the paper asked about is never its own baseline).

Example: "VITS uses Laplace approximation [1]." citing "However, current approximate
techniques yield to poor estimation (Laplace approximation)." -> ['Laplace'].
Example: "VITS avoids the poor estimates of the Laplace approximation [1]." -> [].
"""

from __future__ import annotations

import functools
import re

from ..lexicon import CLAIM_CONTRAST, COMPARING, CONTRAST_OPENERS, FIRST_PERSON, PRIOR
from ..ingest.chunking import split_sentences
from .names import name_form, name_forms, claim_names, clean

REACH = 6
_WORD = re.compile(r"[A-Za-z][\w\-]*")


@functools.lru_cache(maxsize=512)
def _set_against(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(forms of the words the text only sets against, forms of those it writes otherwise)."""
    against: set[str] = set()
    own: set[str] = set()
    text = clean(text)
    for s, e in split_sentences(text):
        sentence = text[s:e]
        words = [m.group(0) for m in _WORD.finditer(sentence)]
        lower = [w.lower() for w in words]
        opening = [w for w in lower[:4] if w not in CONTRAST_OPENERS][:2]
        about_others = bool(PRIOR & set(opening)) and not FIRST_PERSON & set(lower)
        for i, word in enumerate(words):
            form = name_form(word)
            compared = any(w in COMPARING for w in lower[max(0, i - REACH):i])
            (against if about_others or compared else own).add(form)
    return frozenset(against - own), frozenset(own)


def set_against(claim: str, evidence: list[str], asked: str = "") -> list[str]:
    """The claim's names that the evidence writes only as others' work (module doc)."""
    words = {w.lower() for w in _WORD.findall(clean(f"{claim} {asked}"))}
    if words & CLAIM_CONTRAST:
        return []  # the claim, or the question it answers, compares
    against: set[str] = set()
    own: set[str] = set()
    for text in evidence:
        a, o = _set_against(text)
        against |= a
        own |= o
    asked_forms = name_forms(asked) if asked else frozenset()
    return [name for name in claim_names(claim)
            if name_form(name) in against - own and name_form(name) not in asked_forms]
