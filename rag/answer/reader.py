"""The extractive reader: which sentences of the top paper answer the question.

Each sentence of the top paper has a score from the question's sentence scorer
(`retrieve/sentences.py`, the setting `reader`; the engine asks it once per question). The
default, "rules", scores a sentence by its share of the standalone query's *focus*: its content
words (IDF-weighted, request words such as "paper" or "ICML" left out) that are not in the top
paper's title, since the title's words only say which paper is meant, not what is asked about
it, plus 0.3 times its share of all the question's words. The answer takes
as many of the best sentences as the question has parts, plus one: two for "What does X
propose?", three for "What does X propose and how much faster is it?" or for "What is X
about?" (nothing asked beyond naming the paper), never more than `MAX_SENTENCES`, and never a
sentence that holds none of the question's words (none at all: nothing is returned). Whether
the abstract states what was asked is the answerability gate's call, made before the reader
runs (`retrieve/answerability.py`); it reads the same focus.

Measured on the train split of the ICML 2024 question bank (119 answerable questions with key
facts, top paper only): key facts in the answer 0.45 with one sentence, 0.63 with two, 0.72
with three, 0.66 with this rule (2.2 sentences on average); the previous reader, 0.41.
Example: "How many questions does WMDP contain?" -> the sentence with "3,668 multiple-choice
questions" and the one after it in score.
"""

from __future__ import annotations

import re

from ..retrieve.sentences import RulesScorer, focus_of
from ..text import Idf
from ..types import Passage

MAX_SENTENCES = 3
_PART = re.compile(r"\b(?:and|also|plus|as well as)\s+(?:what|which|how|who|why|where|when|does|"
                   r"did|is|are|was|were|its?|the)\b|,\s*(?:what|which|how)\b", re.I)


def parts(query: str) -> int:
    """How many things the question asks: 'What is X and how fast is it?' -> 2."""
    return 1 + len(_PART.findall(query)) + max(0, query.count("?") - 1)


def pick(query: str, passage: Passage, idf: Idf | None = None,
         scores: list[float] | None = None) -> list[int]:
    """Positions (in `passage.sentence_texts()` order) of the sentences that answer `query`,
    in the abstract's order, from their `scores` (the rules' when not given); empty when no
    sentence scores above 0 and the question asks something beyond naming the paper."""
    sentences = passage.sentence_texts()
    if not sentences:
        return []
    if scores is None:
        scores = RulesScorer(idf).score(query, [passage])[0]
    about = focus_of(query, passage, None)[2]  # which words, not how rare: no IDF needed
    k = min(MAX_SENTENCES, 1 + parts(query) + int(about), len(sentences))
    order = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
    return sorted(i for i in order[:k] if scores[i] > 0 or about)
