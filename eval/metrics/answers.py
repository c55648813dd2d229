"""Answer metrics that do not depend on the pipeline's own rules: key facts and gold papers.

Each answer sentence comes with one `CitationJudgement` per citation it carries: whether the
cited paper is one of the question's gold papers. Nothing here asks the pipeline's support
check whether a citation "supports" its sentence: grading the pipeline with its own rule made
citation precision, citation recall and the support rate 1.0 by construction for the
extractive answer (a gate that could not fail). Then:

- gold citation precision: over all (sentence, citation) pairs, the share pointing at a gold
  paper (a list question's gold set is complete, so a citation outside it is a wrong paper).
- cites gold: 1.0 when some citation of the answer points at a gold paper.
- key-fact recall: the share of the reference key facts (written by a person from the
  abstract) found in the answer text, compared case-insensitively with punctuation and
  spacing normalised ("3,668" matches "3 668").

Example: sentences [[gold], [not gold, gold], []] -> gold precision 2/3, cites gold 1.0.

Not handled: paraphrased key facts (an LLM answer that says "three thousand" misses "3,000";
use `--judge` for meaning).
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


def gold_citation_precision(sentences: Sentences) -> float | None:
    """Share of (sentence, citation) pairs that point at a gold paper; None without any."""
    pairs = [j for s in sentences for j in s]
    return sum(1 for j in pairs if j.gold) / len(pairs) if pairs else None


def cites_gold(sentences: Sentences) -> float | None:
    """1.0 when some citation of the answer points at a gold paper; None without citations."""
    pairs = [j for s in sentences for j in s]
    return float(any(j.gold for j in pairs)) if pairs else None
