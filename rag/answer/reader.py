"""The extractive reader: which sentences of the top paper answer the question.

Sentences are scored against the standalone query's *focus*: its content words (IDF-weighted,
request words such as "paper" or "ICML" left out) that are not in the top paper's title, since
the title's words only say which paper is meant, not what is asked about it. A sentence scores
its share of the focus plus 0.3 times its share of all the question's words. The answer takes
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

from ..retrieve.signals import question_terms
from ..text import Idf, content_terms, share
from ..types import Passage

MAX_SENTENCES = 3
ALL_TERMS_WEIGHT = 0.3
_PART = re.compile(r"\b(?:and|also|plus|as well as)\s+(?:what|which|how|who|why|where|when|does|"
                   r"did|is|are|was|were|its?|the)\b|,\s*(?:what|which|how)\b", re.I)


def parts(query: str) -> int:
    """How many things the question asks: 'What is X and how fast is it?' -> 2."""
    return 1 + len(_PART.findall(query)) + max(0, query.count("?") - 1)


def pick(query: str, passage: Passage, idf: Idf | None) -> list[int]:
    """Positions (in `passage.sentence_texts()` order) of the sentences that answer `query`,
    in the abstract's order; empty when no sentence holds any of the question's focus."""
    sentences = [t for _, _, t in passage.sentence_texts()]
    if not sentences:
        return []
    asked = question_terms(query, idf)
    title = content_terms(passage.title)
    focus = {t: w for t, w in asked.items() if t not in title}
    about = not focus
    focus = focus or asked
    terms = [content_terms(s) for s in sentences]
    scores = [share(focus, t) + ALL_TERMS_WEIGHT * share(asked, t) for t in terms]
    k = min(MAX_SENTENCES, 1 + parts(query) + int(about), len(sentences))
    order = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
    return sorted(i for i in order[:k] if scores[i] > 0 or about)
