"""Sentence scores: how much each sentence of each passage looks like it states the answer.

One seam for everything that asks "which sentences answer the question?": the extractive
reader (which sentences to quote, `answer/reader.py`), the gate (the scores ride on the
verdict's signals, `answerability.py`) and the checks (the evidence they judge carries them).
The engine asks once per question, on the whole abstracts, and keeps the result on the turn.

A `SentenceScorer` has one method, `score(question, passages)`, returning one list per
passage with one score per sentence, in `Passage.sentence_texts()` order; higher is likelier
to state the answer. The setting `reader` names the scorer, looked up in `SCORERS`:
- "rules" (default): the reader's word-overlap rule. A sentence scores its IDF-weighted
  share of the question's *focus* (its content words not in the passage's title, request
  words left out; all of them when the title holds every one) plus `ALL_TERMS_WEIGHT` times
  its share of all the question's words.
- "model": the reader model (rag/models/reader.py), P(the sentence states the answer), for
  the top passage; the gate fitted with its best score among the features reads it.
  Another scorer registers itself with one line, `register_scorer(name, make)`.

Example: RulesScorer(idf).score("How many questions does WMDP contain?", [wmdp]) ->
[[0.0, 1.3, 0.2, ...]] (the sentence with "3,668 multiple-choice questions" first).
"""

from __future__ import annotations

from typing import Callable, Protocol

from ..errors import ConfigError
from ..models.reader import pair_text, reader_model
from ..text import Idf, content_terms, share
from ..types import Passage
from .signals import question_terms

ALL_TERMS_WEIGHT = 0.3


class SentenceScorer(Protocol):
    name: str  # the value of the setting `reader` that chooses it; `GATES` names its gate

    def score(self, question: str, passages: list[Passage]) -> list[list[float]]:
        """One score per sentence of each passage (`Passage.sentence_texts()` order)."""
        ...


def focus_of(question: str, passage: Passage, idf: Idf | None) -> tuple[dict, dict, bool]:
    """(asked, focus, about): the question's weighted words, those the title does not hold
    (all of them when it holds every one), and whether the title holds every one ("what is X
    about?": nothing is asked beyond naming the paper)."""
    asked = question_terms(question, idf)
    title = content_terms(passage.title)
    focus = {t: w for t, w in asked.items() if t not in title}
    return asked, focus or asked, not focus


class RulesScorer:
    """The word-overlap rule (module doc), reading the question's snapshot's IDF table."""

    name = "rules"

    def __init__(self, idf: Idf | None = None):
        self.idf = idf

    def score(self, question: str, passages: list[Passage]) -> list[list[float]]:
        out = []
        for passage in passages:
            asked, focus, _ = focus_of(question, passage, self.idf)
            out.append([share(focus, terms) + ALL_TERMS_WEIGHT * share(asked, terms)
                        for terms in (content_terms(t) for _, _, t in passage.sentence_texts())])
        return out


class ModelScorer:
    """The reader model (rag/models/reader.py): P(the sentence states the answer), read with
    the paper's title and the sentence's neighbours. It reads the top passage only, the paper
    the extractive reader quotes and the gate judges (the others get no scores: empty lists),
    which keeps a question to one batch of the model. The gate fitted for it
    (`answerability-model.json`) reads the best score among its features."""

    name = "model"

    def __init__(self, idf: Idf | None = None):
        self.model = reader_model()

    def score(self, question: str, passages: list[Passage]) -> list[list[float]]:
        out: list[list[float]] = [[] for _ in passages]
        if passages:
            top = passages[0]
            sents = [t for _, _, t in top.sentence_texts()]
            texts = [pair_text(top.title, sents, i) for i in range(len(sents))]
            out[0] = [float(x) for x in self.model.score(question, texts)]
        return out


SCORERS: dict[str, Callable[[Idf | None], SentenceScorer]] = {"rules": RulesScorer,
                                                              "model": ModelScorer}
# The fitted gate each scorer goes with (answerability.gate_file): the model's reads its
# scores; the rules' gate reads none, so it serves any scorer fitted no gate of its own.
GATES: dict[str, str] = {"rules": "rules", "model": "model"}


def register_scorer(name: str, make: Callable[[Idf | None], SentenceScorer],
                    gate: str = "rules") -> None:
    """Make `make(idf)` the scorer the setting `reader=name` chooses, judged by the fitted
    gate `gate` (`python -m rag.eval.fit_answerability --reader NAME` fits one of its own)."""
    SCORERS[name], GATES[name] = make, gate


def _known(name: str) -> None:
    if name not in SCORERS:
        raise ConfigError(f"unknown reader {name!r}; choose one of: "
                          f"{', '.join(sorted(SCORERS))}")


def scorer_for(name: str, idf: Idf | None) -> SentenceScorer:
    """The scorer the setting `reader` names, for the question's IDF table."""
    _known(name)
    return SCORERS[name](idf)


def gate_of(name: str) -> str:
    """The fitted gate the setting `reader` goes with (see `GATES`)."""
    _known(name)
    return GATES.get(name, "rules")
