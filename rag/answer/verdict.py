"""The language model's second opinion on "do the abstracts state what was asked?".

The answerability gate (`retrieve/answerability.py`) reads word and cosine signals; a language
model reads the evidence. Asked for a bare YES or NO, the local 1.5B model leans to YES (it
caught 6 of 14 unanswerable questions in a probe), but the probability it gives YES separates
far better. So the model gets the prompt its answer would get (the same system message, turns
and evidence: llama.cpp's prompt cache then lets the answer request re-read only its last line)
ending with "Do these abstracts state the answer...? Reply YES or NO." instead of "Answer:",
generates one token, and P(YES) = p(yes) / (p(yes) + p(no)) over the spellings of the two words
among its likeliest first tokens (`ChatClient.first_token`).

That probability and the gate's P(answerable) are combined by a logistic regression on their
logits, fitted for one model (`verdict.json`: the model's name, coefficients, threshold) by
`python -m rag.eval.fit_verdict`: coefficients on the question bank's train split, the
threshold on its dev split (the most abstentions with at most 5% of answerable dev questions
abstained on). The fitted file for the local 1.5B model reads P(YES) alone (the gate's
coefficient is 0: on dev, among the questions the gate lets through, P(YES) separated better,
AUROC 0.83 against 0.67), and vetoes below P(answer) 0.495. A model without a fitted
combination (any `openai` model) keeps the gate alone, as does a question whose reply had
neither word among its likeliest tokens.

Example: the gate would answer "What perplexity does the paper report?"; the model's P(YES) is
0.57 -> P(answer) 0.40 < 0.495 (about P(YES) 0.63) -> "The abstract of *X* [1] does not
state..." (or a plain abstention when the question does not name the paper).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from ..retrieve.answerability import ANSWER, Logistic, Verdict, after_no
from ..text import Idf
from ..types import Passage
from .prompting import build_messages

MODEL_FILE = Path(__file__).with_name("verdict.json")
USER_VERDICT = ("Question: {question}\n\nAbstracts:\n{passages}\n\nQuestion: {question}\n"
                "Do these abstracts state the answer to the question? Reply YES or NO.\nReply:")
YES, NO = "yes", "no"
FEATURES = ("logit_p_answerable", "logit_p_yes")  # what `features` returns, in this order


@dataclass(frozen=True)
class Combination:
    """P(answer) = sigmoid(bias + coef . standardised [logit P(answerable), logit P(YES)])."""

    model: str  # the served model's alias it was fitted for
    logistic: Logistic
    threshold: float


def verdict_messages(question: str, passages: Sequence[Passage], history: Sequence,
                     context_tokens: int, answer_tokens: int, idf: Idf | None) -> list[dict]:
    """The answer's prompt (`prompting.build_messages`) asking for YES or NO instead."""
    return build_messages(question, passages, history, context_tokens, answer_tokens,
                          user=USER_VERDICT, idf=idf).messages


def p_yes(first_tokens: dict[str, float]) -> float | None:
    """P(YES) among the first-token probabilities; None when neither word is among them."""
    yes = sum(p for t, p in first_tokens.items() if t.strip().lower() == YES)
    no = sum(p for t, p in first_tokens.items() if t.strip().lower() == NO)
    return yes / (yes + no) if yes + no > 0 else None


def logit(p: float, eps: float = 1e-4) -> float:
    p = min(max(p, eps), 1 - eps)
    return math.log(p / (1 - p))


def features(p_answerable: float, yes: float) -> list[float]:
    return [logit(p_answerable), logit(yes)]


@functools.lru_cache(maxsize=2)
def load_combination(path: str | None = None) -> Combination | None:
    """The fitted combination, or None when none has been fitted."""
    file = Path(path or MODEL_FILE)
    if not file.is_file():
        return None
    data = json.loads(file.read_text(encoding="utf-8"))
    if tuple(data["features"]) != FEATURES:
        raise ValueError(f"{file} was fitted on other features; refit it with "
                         f"`python -m rag.eval.fit_verdict`")
    return Combination(str(data["model"]), Logistic.from_dict(data["combination"]),
                       float(data["threshold"]))


def combination_for(model: str) -> Combination | None:
    found = load_combination()
    return found if found is not None and found.model == model else None


def second_opinion(verdict: Verdict, yes: float | None, combo: Combination) -> Verdict:
    """The gate's verdict revised by the model's P(YES) (unchanged when it is None)."""
    if yes is None:
        return replace(verdict, llm_yes=None)
    p = combo.logistic.probability(features(verdict.answerable, yes))
    decision = ANSWER if p >= combo.threshold else after_no(verdict.found, verdict.signals)
    return replace(verdict, decision=decision, answerable=p, llm_yes=yes)


def consult(backend, turn, shown) -> Verdict | None:
    """The turn's verdict revised by the language model's P(YES), when the model has a fitted
    combination; None when it has none or fails (writing meets the same failure and says why).
    `backend` makes the model (the engine's, on first use)."""
    try:
        gen = backend()
        combo = combination_for(gen.model)
        if combo is None:
            return None
        yes = gen.verdict(turn.question, shown, turn.history, idf=turn.idf)
    except Exception:  # noqa: BLE001 - see the docstring
        return None
    return second_opinion(turn.verdict, yes, combo)
