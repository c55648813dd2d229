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
fitting. Each sentence scorer has its gate (`gate_file`): `answerability-model.json` for the
reader model (the default), fitted with its best sentence score among the signals and the
train twins among the questions, the old signals kept only where they add on dev (on the bank
and on the twins); `answerability.json` for the word-overlap rules. The signals are relative
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

from ..errors import ConfigError
from ..types import Turn
from .signals import FEATURES, READER_FEATURE, Signals

MODEL_FILE = Path(__file__).with_name("answerability.json")  # the gate of reader=rules


def gate_file(reader: str = "rules") -> Path:
    """The fitted gate of a sentence scorer: `answerability.json` for the rules, and
    `answerability-<name>.json` for another (fitted with its scores among the features)."""
    return MODEL_FILE if reader == "rules" else MODEL_FILE.with_name(f"answerability-{reader}.json")


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
    features: tuple[str, ...]  # what `Logistic` reads, in order (`Signals.vector`)
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
def load_model(path: str | Path | None = None) -> GateModel:
    path = Path(path or MODEL_FILE)
    if not path.is_file():
        raise ConfigError(f"no fitted gate at {path}; fit it with "
                          f"`python -m rag.eval.fit_answerability`")
    data = json.loads(path.read_text(encoding="utf-8"))
    features = tuple(data["features"])
    if not set(features) <= set(FEATURES) | {READER_FEATURE}:
        raise ConfigError(f"{path} was fitted on other features; refit it with "
                          f"`python -m rag.eval.fit_answerability`")
    return GateModel(features, Logistic.from_dict(data["answerable"]),
                     Logistic.from_dict(data["found"]), float(data["answer_threshold"]),
                     float(data["found_threshold"]))


def gate_for(reader: str = "rules") -> GateModel:
    """The fitted gate the setting `reader` goes with (`gate_file`)."""
    return load_model(str(gate_file(reader)))


def named(signals: Signals) -> bool:
    """The safety rule for "does not state": the question names the paper (shares a word with
    its title) and holds nothing rarer than what the paper contains. Without it, "How do I
    change a flat tire?" would be told what *How to Escape Sharp Minima* does not state."""
    return signals.values["title_cover"] > 0 and bool(signals.values["rarest_present"])


def decide(signals: Signals, answer_threshold: float | None = None,
           model: GateModel | None = None) -> Verdict:
    """The gate's verdict on one question's signals (`answer_threshold` overrides the fitted
    one, e.g. from a setting)."""
    model = model or load_model()
    x = signals.vector(model.features)
    p_answer = model.answerable.probability(x)
    p_found = model.found.probability(x)
    threshold = model.answer_threshold if answer_threshold is None else answer_threshold
    decision = ANSWER if p_answer >= threshold else after_no(p_found, signals, model)
    return Verdict(decision, p_answer, p_found, signals)


def after_no(p_found: float, signals: Signals, model: GateModel | None = None) -> str:
    """NOT_STATED when the paper asked about was found and is named, else ABSTAIN."""
    model = model or load_model()
    return NOT_STATED if p_found >= model.found_threshold and named(signals) else ABSTAIN


def keep_referent(turn: Turn) -> None:
    """A follow-up about one paper (`answer/rewrite.py`) is answered from that paper alone: the
    others leave the turn once the gate has judged them all (its signals compare the paper with
    the rest), and an abstention becomes "not stated" about it, since the conversation names it
    (what `answerability.named` asks of the question itself)."""
    keep = [i for i, p in enumerate(turn.passages) if p.paper_id == turn.route.referent]
    turn.passages = [turn.passages[i] for i in keep]
    turn.whole = [turn.whole[i] for i in keep] if turn.whole else turn.whole
    if turn.decision == ABSTAIN and turn.passages:
        turn.decision = NOT_STATED
