"""The evidence the answerability model reads: does the retrieved paper state what was asked?

All signals come from one question's retrieved passages (grown to whole abstracts), the
corpus's IDF table and its background (`background.py`); none needs a model call:

- `z_cosine`: the best passage cosine as a z-score against the corpus's background, so it
  means the same on 90 papers and on 2,634.
- `margin`: how far the best cosine is ahead of the next paper's (one paper clearly meant).
- `title_cover`: the share of the question's words (IDF-weighted, request words such as
  "paper" or "ICML" left out) found in the top paper's title: the paper is named.
- `abstract_cover`: the same share over the top paper's title and whole abstract.
- `focus_sentence`, `focus_abstract`: the question's *focus* is what remains once the words
  that identify the paper (its title's words) are set aside, e.g. "learning rate" in "What
  learning rate did the WMDP paper use?"; these are the share of the focus found in the best
  single sentence, and anywhere in the abstract. A near-miss question finds its paper
  (high z, high title cover) but not its focus.

Example: "What learning rate did the WMDP paper use?" on the WMDP abstract -> title_cover
high, focus ("learning", "rate") -> focus_abstract 0.0.
"""

from __future__ import annotations

import math
import re
from typing import Sequence
from dataclasses import dataclass

from ..lexicon import REQUEST_WORDS
from ..text import Idf, content_terms, share, term_weights
from ..types import Passage
from .background import Background

FEATURES = ("z_cosine", "margin", "title_cover", "abstract_cover", "focus_sentence",
            "focus_abstract", "number_missing", "rare_missing", "title_rarest", "rarest_present")
# A question that asks for a quantity: "how many...", "what accuracy...", "how much faster".
_NUMBER_ASKED = re.compile(
    r"\bhow (?:many|much|long|fast|large|big|often|small)\b|\bwhat (?:is the |was the |are the )?"
    r"(?:\w+ ){0,3}?(?:percentage|accuracy|score|rate|speed-?up|size|number|error|perplexity|auc|"
    r"f1|bleu|cost|budget|count|ratio|value|temperature|epochs?|steps?)\b|\bnumber of\b", re.I)
_HAS_NUMBER = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twice|"
                         r"hundreds?|thousands?|millions?|billions?|half|double)\b", re.I)


# The reader model's best sentence score on the top paper, as log-odds: the feature a gate
# fitted for a scorer with probabilities reads (present when the question's sentences were
# scored; `reader_best` keeps the probability itself).
READER_FEATURE = "reader_logit"


@dataclass
class Signals:
    values: dict[str, float]

    def vector(self, features: tuple[str, ...] = FEATURES) -> list[float]:
        return [self.values[name] for name in features]


def question_terms(query: str, idf: Idf | None) -> dict[str, float]:
    """The query's content words with their IDF weight, request words left out."""
    return {t: w for t, w in term_weights(query, idf).items() if t not in REQUEST_WORDS}


def compute(query: str, passages: list[Passage], idf: Idf | None,
            background: Background, scores: Sequence[float] | None = None) -> Signals:
    """The signals of one retrieved list (best first; whole abstracts). `scores`, the top
    paper's sentence scores (`sentences.py`), when it was scored, add `reader_best`, its best
    sentence score, and its log-odds `reader_logit` (the feature the reader model's gate
    reads, `answerability.py`)."""
    if not passages:
        return Signals({**dict.fromkeys(FEATURES, 0.0), READER_FEATURE: -12.0})
    cosines = [p.scores.get("dense", 0.0) for p in passages]
    ordered = sorted(cosines, reverse=True)
    top = passages[0]
    asked = question_terms(query, idf)
    title = content_terms(top.title)
    focus = {t: w for t, w in asked.items() if t not in title}
    sentences = [t for _, _, t in top.sentence_texts()]
    top_terms = [content_terms(t) for t in sentences]
    everything = set().union(*top_terms)
    focus_cover = [share(focus, s) for s in top_terms] if focus else []
    best_focus = max(focus_cover, default=0.0)
    near_focus = [t for t, c in zip(sentences, focus_cover) if best_focus and c >= best_focus / 2]
    values = {
        "z_cosine": background.z(ordered[0]),
        "margin": ordered[0] - (ordered[1] if len(ordered) > 1 else 0.0),
        "title_cover": share(asked, title),
        "abstract_cover": share(asked, everything | title),
        "focus_sentence": best_focus if focus else 1.0,
        "focus_abstract": share(focus, everything) if focus else 1.0,
        # asked for a quantity, but no sentence that carries the focus states one
        "number_missing": float(bool(_NUMBER_ASKED.search(query))
                                and not any(_HAS_NUMBER.search(t) for t in near_focus)),
        # the rarest asked word the abstract lacks, relative to the rarest word asked
        "rare_missing": max((w for t, w in focus.items() if t not in everything), default=0.0)
        / (max(asked.values(), default=1.0) or 1.0),
        # the paper is named: the rarest asked word that its title holds, relative to the
        # rarest word asked ("DiffDA" in "What hardware trained DiffDA?" -> 1.0)
        "title_rarest": max((w for t, w in asked.items() if t in title), default=0.0)
        / (max(asked.values(), default=1.0) or 1.0),
        # one of the question's rarest words (ties: unseen words all weigh the most) is in
        # the top paper, title or abstract
        "rarest_present": float(any(t in everything | title for t, w in asked.items()
                                    if w == max(asked.values()))),
    }
    if scores is not None:
        best = max(scores, default=0.0)
        values["reader_best"] = best
        values[READER_FEATURE] = reader_logit(best)
    return Signals(values)


def reader_logit(p: float) -> float:
    """A reader probability on the gate's (linear) scale: log-odds, clipped to +-12."""
    p = min(max(p, 1e-6), 1 - 1e-6)
    return max(min(math.log(p / (1 - p)), 12.0), -12.0)
