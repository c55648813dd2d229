"""Small text helpers every stage may use: search terms (the BM25 tokenizer), word overlap,
question cleaning, slugs. Imports no stage.

Tokens: lowercase alphanumeric runs, English stop words removed, Snowball-stemmed (PyStemmer).
"""

from __future__ import annotations

import functools
import re
import unicodedata

Idf = tuple  # (vocabulary: dict[str, int], idf per term id: np.ndarray), from index/bm25.py idf_table

_WORD = re.compile(r"[a-z0-9]+")


@functools.lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def tokenize(text: str) -> list[str]:
    """Search terms of `text`. Example: "Kernels avoiding mean-reversion" -> ['kernel', 'avoid',
    'mean', 'revers']."""
    stop = _stopwords()
    words = [w for w in _WORD.findall(text.lower()) if w not in stop]
    return _stemmer().stemWords(words)


def slug(text: str) -> str:
    """Lowercase alphanumeric runs joined by '-': 'My Notes (v2)' -> 'my-notes-v2'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"

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


def coverage(claim: str, evidence: str, idf: Idf | None = None) -> float:
    """Share of the claim's content words found in the evidence (1.0 for an empty claim).

    With an index's `(vocabulary, idf)` table (`rag.index.bm25.idf_table`) each word counts by
    its IDF, and a word the index has never seen counts as the rarest: "translation" weighs more
    than "papers", so restating a question's common words does not pass for support.
    Example: coverage("HesScale builds on BL89", "HesScale improves BL89.") == 2/3 unweighted."""
    weights = term_weights(claim, idf)
    return share(weights, content_terms(evidence)) if weights else 1.0


def share(weights: dict[str, float], found: set[str]) -> float:
    """The weighted share of `weights`' words that are in `found` (0.0 when there are none).
    Example: share({"a": 3.0, "b": 1.0}, {"a"}) == 0.75."""
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if t in found) / total if total else 0.0


def term_weights(text: str, idf: Idf | None = None) -> dict[str, float]:
    """The text's content words with their weight: 1 each, or their IDF (unseen: the rarest)."""
    terms = content_terms(text)
    if idf is None:
        return dict.fromkeys(terms, 1.0)
    vocab, table = idf
    rarest = float(table.max()) if len(table) else 1.0
    return {t: float(table[vocab[t]]) if t in vocab and vocab[t] < len(table) else rarest
            for t in terms}
