"""The answerability gate: answer, say "found the paper, not the fact", or abstain.

Two small logistic models read the same signals (`signals.py`):
- P(answerable): do the retrieved abstracts state what was asked?
- P(found): is the top paper the one the question is about (asked fact stated or not)?
Then: P(answerable) >= `answer_threshold` -> answer; else P(found) >= `found_threshold` and
the question names the paper (`named`, a safety rule: an unrelated paper must never be cited
for what it "does not state") -> "The abstract of *T* [1] does not state X." (an abstention
that cites the paper it found); else a plain abstention.

Both models and both thresholds are fitted by `python -m rag.eval.fit_answerability` (eval/
fit_answerability.py): the coefficients on the train split of the ICML 2024 question bank,
the thresholds on its dev split (the highest abstention recall with at most 5% of answerable
dev questions abstained on). The test split and the seed questions are never used for
fitting. The fitted file is `answerability.json` beside this module; the signals are relative
to each corpus's own background, so the same file serves any corpus, a user's upload folder
included.

Example: "What learning rate did the WMDP paper use?" -> P(answerable) 0.2, P(found) 0.9 ->
"The abstract of *The WMDP Benchmark* [1] does not state the learning rate."
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

from .signals import FEATURES, Signals

MODEL_FILE = Path(__file__).with_name("answerability.json")
ANSWER, NOT_STATED, ABSTAIN = "answer", "not_stated", "abstain"


@dataclass(frozen=True)
class Logistic:
    """p = sigmoid(bias + sum(coef * (x - mean) / scale)) over `FEATURES`."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    bias: float

    def probability(self, x: list[float]) -> float:
        z = self.bias + sum(c * (v - m) / s for c, v, m, s in
                            zip(self.coef, x, self.mean, self.scale))
        return 1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0)))

    @classmethod
    def from_dict(cls, d: dict) -> "Logistic":
        return cls(tuple(d["mean"]), tuple(d["scale"]), tuple(d["coef"]), float(d["bias"]))

    def to_dict(self) -> dict:
        return {"mean": list(self.mean), "scale": list(self.scale), "coef": list(self.coef),
                "bias": self.bias}


@dataclass(frozen=True)
class GateModel:
    answerable: Logistic
    found: Logistic
    answer_threshold: float
    found_threshold: float


@dataclass(frozen=True)
class Verdict:
    decision: str  # ANSWER, NOT_STATED or ABSTAIN
    answerable: float  # P(the abstracts state what was asked)
    found: float  # P(the top paper is the one asked about)
    signals: Signals
    llm_yes: float | None = None  # the language model's P(YES), when it was asked (verdict.py)


@functools.lru_cache(maxsize=4)
def load_model(path: str | None = None) -> GateModel:
    data = json.loads(Path(path or MODEL_FILE).read_text(encoding="utf-8"))
    if tuple(data["features"]) != FEATURES:
        raise ValueError(f"{path or MODEL_FILE} was fitted on other features; refit it with "
                         f"`python -m rag.eval.fit_answerability`")
    return GateModel(Logistic.from_dict(data["answerable"]), Logistic.from_dict(data["found"]),
                     float(data["answer_threshold"]), float(data["found_threshold"]))


def named(signals: Signals) -> bool:
    """The safety rule for "does not state": the question names the paper (shares a word with
    its title) and holds nothing rarer than what the paper contains. Without it, "How do I
    change a flat tire?" would be told what *How to Escape Sharp Minima* does not state."""
    return signals.values["title_cover"] > 0 and bool(signals.values["rarest_present"])


def decide(signals: Signals, answer_threshold: float | None = None,
           model: GateModel | None = None, reader_threshold: float | None = None) -> Verdict:
    """The gate's verdict on one question's signals (`answer_threshold` overrides the fitted
    one, e.g. from a setting). With a `reader_threshold` (the reader model's, chosen on dev),
    a top paper none of whose sentences reaches it does not state the answer: "not stated"
    when the paper is found and named, else an abstention."""
    model = model or load_model()
    x = signals.vector()
    p_answer = model.answerable.probability(x)
    p_found = model.found.probability(x)
    threshold = model.answer_threshold if answer_threshold is None else answer_threshold
    read = signals.values.get("reader_best")
    unread = reader_threshold is not None and read is not None and read < reader_threshold
    decision = ANSWER if p_answer >= threshold and not unread else after_no(p_found, signals,
                                                                            model)
    return Verdict(decision, p_answer, p_found, signals)


def after_no(p_found: float, signals: Signals, model: GateModel | None = None) -> str:
    """NOT_STATED when the paper asked about was found and is named, else ABSTAIN."""
    model = model or load_model()
    return NOT_STATED if p_found >= model.found_threshold and named(signals) else ABSTAIN
