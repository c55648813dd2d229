"""Small text helpers shared by the generators, the citation check and the support check."""

from __future__ import annotations

import re
import unicodedata

from .bm25 import tokenize

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f"     # C0 controls, DEL
                      r"\u200b-\u200f\u202a-\u202e\u2066-\u2069"  # zero-width, bidi
                      r"\ud800-\udfff\ufeff]")                     # lone surrogates, BOM


def clean_question(text: str) -> str:
    """NFC-normalised, the characters of `_CONTROL` removed, whitespace collapsed."""
    text = unicodedata.normalize("NFC", text)
    text = _CONTROL.sub(" ", text)
    return re.sub(r"\s+", " ", text).strip()


def content_terms(text: str) -> set[str]:
    """Stemmed content words: the unit of lexical overlap."""
    return set(tokenize(text))


def coverage(claim: str, evidence: str) -> float:
    """Share of the claim's content words found in the evidence (1.0 for an empty claim)."""
    terms = content_terms(claim)
    if not terms:
        return 1.0
    return len(terms & content_terms(evidence)) / len(terms)
