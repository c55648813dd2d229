"""Answer metrics: key-fact recall, and citation precision and recall in the spirit of ALCE.

Each answer sentence comes with one `CitationJudgement` per citation it carries: whether the
cited paper is a gold paper, and whether the cited quote supports the sentence (decided by the
caller, in `rag.eval.observe`, with the pipeline's own lexical support check). Then:

- citation precision: over all (sentence, citation) pairs, the share whose citation points at a
  gold paper or whose quote supports the sentence (ALCE counts a citation as precise when it
  supports its statement; a gold paper is accepted too, since a reference answer exists).
- gold citation precision: the stricter share of pairs that point at a gold paper.
- citation recall: over all answer sentences, the share carrying at least one supporting
  citation (a sentence without citations counts as unsupported).
- key-fact recall: the share of the reference key facts found in the answer text, compared
  case-insensitively with punctuation and spacing normalised ("3,668" matches "3 668").

Example: sentences [[(gold, supports)], [(not gold, not supports), (gold, supports)], []] ->
precision 2/3, gold precision 2/3, recall 2/3.

Not handled: paraphrased key facts (an LLM answer that says "three thousand" misses "3,000";
use `--judge` for meaning); support is lexical, so a flipped negation still "supports".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


@dataclass(frozen=True)
class CitationJudgement:
    """One citation of one answer sentence."""

    gold: bool  # the cited paper is one of the question's gold papers
    supports: bool  # the cited quote supports the sentence


Sentences = Sequence[Sequence[CitationJudgement]]


def normalise(text: str) -> str:
    """Casefolded, every run of non-word characters one space. Example: 'BL-89,' -> 'bl 89'."""
    return _NON_WORD.sub(" ", text.casefold()).strip()


def key_fact_recall(answer: str, key_facts: Sequence[str]) -> float | None:
    """Share of key facts present in the answer as whole words; None without key facts."""
    if not key_facts:
        return None
    text = f" {normalise(answer)} "
    return sum(1 for f in key_facts if f" {normalise(f)} " in text) / len(key_facts)


def citation_precision(sentences: Sentences) -> float | None:
    """Share of (sentence, citation) pairs that are gold or supporting; None without any."""
    pairs = [j for s in sentences for j in s]
    return sum(1 for j in pairs if j.gold or j.supports) / len(pairs) if pairs else None


def gold_citation_precision(sentences: Sentences) -> float | None:
    """Share of (sentence, citation) pairs that point at a gold paper; None without any."""
    pairs = [j for s in sentences for j in s]
    return sum(1 for j in pairs if j.gold) / len(pairs) if pairs else None


def citation_recall(sentences: Sentences) -> float | None:
    """Share of answer sentences with at least one supporting citation; None without any."""
    if not sentences:
        return None
    return sum(1 for s in sentences if any(j.supports for j in s)) / len(sentences)


def cites_gold(sentences: Sentences) -> float | None:
    """1.0 when some citation of the answer points at a gold paper; None without citations."""
    pairs = [j for s in sentences for j in s]
    return float(any(j.gold for j in pairs)) if pairs else None
