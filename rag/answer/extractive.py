"""The extractive generator: an answer made of the retrieved abstracts' own sentences.

No language model: the sentences of the top-ranked paper that carry what the question asks
(`reader.py`) are quoted verbatim with their `[n]`, so the answer is faithful by construction.
Questions asking for several papers ("which papers study X?") are answered by `listing.py`.

Example: "Which kernels avoid mean reversion?" -> "We show that non-positive kernels ... [1]"
"""

from __future__ import annotations

import re
from typing import Iterator

from ..types import Passage
from . import Generator, History
from .reader import pick


class Extractive(Generator):
    """Quotes the sentences of the top paper that `reader.pick` says answer the question.

    Nothing when no sentence holds the question's focus: the engine then says the abstract
    does not state it (or abstains), rather than quoting a sentence that misses the point.
    The order is the top paper's `sentence_scores`, when the gate's scorer gave them (the
    rules' otherwise)."""

    name = "extractive"

    def __init__(self, idf=None):
        self.idf = idf  # (vocabulary, idf array) of the index, for weighting question terms

    def generate(self, question: str, passages: list[Passage], history: History = (),
                 idf=None) -> Iterator[str]:
        if not passages:
            return
        top = passages[0]
        sentences = [t for _, _, t in top.sentence_texts()]
        chosen = pick(question, top, idf or self.idf, list(top.sentence_scores) or None)
        if chosen:
            yield " ".join(cite(sentences[i], 1) for i in chosen)


def cite(sentence: str, n: int) -> str:
    """The sentence with its marker before the final punctuation: 'We find X [1].'"""
    m = re.match(r"(.*?)([.!?]+[\"')\]]*)?\s*$", sentence.strip(), re.S)
    body, end = m.group(1), m.group(2) or "."
    return f"{body} [{n}]{end}"
