"""Sentence scores: how much each sentence of each passage looks like it states the answer.

One seam for everything that asks "which sentences answer the question?": the extractive
reader (which sentences to quote, `answer/reader.py`), the gate (the scores ride on the
verdict's signals, `answerability.py`) and the checks (the evidence they judge carries them).
The engine asks once per question, on the whole abstracts, and keeps the result on the turn.

A `SentenceScorer` has one method, `score(question, passages)`, returning one list per
passage with one score per sentence, in `Passage.sentence_texts()` order; higher is likelier
to state the answer. The setting `reader` names the scorer, registered in
`rag.registry.SCORERS` with the fitted gate it goes with:
- "rules": the reader's word-overlap rule. A sentence scores its IDF-weighted
  share of the question's *focus* (its content words not in the passage's title, request
  words left out; all of them when the title holds every one) plus `ALL_TERMS_WEIGHT` times
  its share of all the question's words.
- "model" (default): the reader model (rag/models/reader.py), P(the sentence states the
  answer), for the passages the writer may quote; the gate fitted with its best score among the features reads it.
  Another scorer registers itself with one line, `register_scorer(name, make)`.

Example: RulesScorer(idf).score("How many questions does WMDP contain?", [wmdp]) ->
[[0.0, 1.3, 0.2, ...]] (the sentence with "3,668 multiple-choice questions" first).
"""

from __future__ import annotations

from typing import Callable, Protocol

from ..models.reader import pair_text, reader_model
from ..text import Idf, content_terms, share
from ..registry import GATES, SCORERS
from ..types import Passage
from .signals import question_terms

ALL_TERMS_WEIGHT = 0.3


class SentenceScorer(Protocol):
    name: str  # the value of the setting `reader` that chooses it; `GATES` names its gate

    def score(self, question: str, passages: list[Passage]) -> list[list[float]]:
        """One score per sentence of each passage (`Passage.sentence_texts()` order); the
        engine asks about the papers a writer may quote."""
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
    the paper's title and the sentence's neighbours. The engine asks it about the papers the
    writer may quote (`Engine.quoted`: the top one for the extractive reader, which keeps a
    question to one batch of the model; those shown to a language model). The gate fitted for
    it (`answerability-model.json`) reads the top paper's best score among its features."""

    name = "model"

    def __init__(self, idf: Idf | None = None):
        self.model = reader_model()

    def score(self, question: str, passages: list[Passage]) -> list[list[float]]:
        texts, sizes = [], []  # every sentence of every passage, read in one batch
        for passage in passages:
            sents = [t for _, _, t in passage.sentence_texts()]
            texts += [pair_text(passage.title, sents, i) for i in range(len(sents))]
            sizes.append(len(sents))
        flat = [float(x) for x in self.model.score(question, texts)]
        out, at = [], 0
        for n in sizes:
            out.append(flat[at : at + n])
            at += n
        return out


def register_scorer(name: str, make: Callable[[Idf | None], SentenceScorer],
                    gate: str = "rules", help: str = "") -> None:
    """Make `make(idf)` the scorer the setting `reader=name` chooses (`rag.registry.SCORERS`),
    judged by the fitted gate `gate` (the rules' gate reads no scores, so it serves any scorer
    fitted no gate of its own; `python -m rag.eval.fit_answerability --reader NAME` fits one)."""
    GATES.check(gate)
    SCORERS.register(name, make, help, gate=gate)


def scorer_for(name: str, idf: Idf | None) -> SentenceScorer:
    """The scorer the setting `reader` names, for the question's IDF table."""
    return SCORERS[name].maker()(idf)


def gate_of(name: str) -> str:
    """The fitted gate (`rag.registry.GATES`) the setting `reader` goes with."""
    return SCORERS[name].extra.get("gate", "rules")
