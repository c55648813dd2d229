"""Fit the answerability gate (rag/retrieve/answerability.json) on the question bank.

    python -m rag.eval.fit_answerability                 # the rules' gate (answerability.json)
    python -m rag.eval.fit_answerability --reader model  # the reader model's (-model.json)

1. Every question of `icml2024-train` runs through the pipeline's own search and signals on
   the icml2024 corpus (`Engine.prepare`, exactly what `ask()` computes); those `ask()`
   answers without the gate (a person's papers, lists, comparisons, "what is <title>
   about?") are left out, as the gate never sees them.
2. Two L2-regularised logistic regressions are fitted on the standardised signals (Newton's
   method, numpy only): P(answerable), labelled by the question's `answerable`, and P(found),
   labelled 1 when the top paper is the question's gold paper (answerable) or the paper a
   near-miss question is about, 0 otherwise (off-topic questions, a wrong top paper).
3. On `icml2024-dev`, the answer threshold is the one with the highest abstention recall whose
   false abstention (answerable questions abstained on) is at most `MAX_FALSE_ABSTENTION`;
   the found threshold is the one that best separates, among the dev questions that gate
   turns away, a found paper (near misses) from none (`choose_found_threshold`).
With `--reader model` the reader model's best sentence score (`reader_logit`) joins the
signals, each split's twins (eval/twins.py: the same answerable question asked of its abstract
without the answering sentences) join its questions as unanswerable ones, and P(answerable)
keeps an old signal only where it adds on dev: backward elimination drops, one at a time, the
signal whose removal lowers neither the dev AUROC on the bank nor on the twins
(`select_features`). P(found) reads `FOUND_FEATURES` either way.
The test split and the seed questions are never read here: `rag eval` reports them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from rag.retrieve.answerability import Logistic

from .logistic import fit_logistic
from .metrics.abstention import at_threshold, auroc, choose_threshold

MAX_FALSE_ABSTENTION = 0.05
# P(found) reads only what says which paper is meant; the answer-side signals (numbers asked,
# details missing) made it learn the question bank's habits (near misses ask for numbers).
FOUND_FEATURES = ("z_cosine", "margin", "title_cover", "title_rarest", "abstract_cover")


def _stand_in():
    from rag.retrieve.answerability import GateModel, Logistic
    from rag.retrieve.signals import FEATURES

    flat = Logistic((0.0,) * len(FEATURES), (1.0,) * len(FEATURES), (0.0,) * len(FEATURES), 0.0)
    return GateModel(FEATURES, flat, flat, 0.5, 0.5)


STAND_IN = _stand_in()  # answers everything; the signals it is handed are what fitting reads


def fit_on(X: np.ndarray, y: np.ndarray, features: tuple[str, ...], use: tuple[str, ...]
           ) -> dict:
    """`fit_logistic` on the columns `use` only; the others get coefficient 0."""
    cols = [features.index(f) for f in use]
    part = fit_logistic(X[:, cols], y)
    full = {"mean": [0.0] * len(features), "scale": [1.0] * len(features),
            "coef": [0.0] * len(features), "bias": part["bias"]}
    for k, c in enumerate(cols):
        for key in ("mean", "scale", "coef"):
            full[key][c] = part[key][k]
    return full


def predict(model: dict, X: np.ndarray) -> np.ndarray:
    """P(1) for each row of X, computed by the gate's own `Logistic` (what `ask()` runs)."""
    logistic = Logistic.from_dict(model)
    return np.array([logistic.probability(list(row)) for row in X])


def choose_found_threshold(p_found: np.ndarray, found: np.ndarray, abstained: np.ndarray
                           ) -> float:
    """Among the dev questions the answer gate turns away, the lowest P(found) threshold that
    calls none of the not-found ones found. Saying "the abstract of X does not state..." of an
    unrelated paper is worse than a plain abstention, so the rule asks for no such case on dev
    rather than the best accuracy."""
    p, y = p_found[abstained], found[abstained].astype(bool)
    wrong = p[~y]
    return float(np.nextafter(wrong.max(), 1.0)) if len(wrong) else float(p.min(initial=1.0))


def signal_rows(dataset, settings) -> list[dict]:
    """Signals and labels of every gated question of a bank split (a name or a `Dataset`)."""
    from rag import factory
    from rag.types import Turn

    from .datasets import load_dataset

    data = load_dataset(dataset) if isinstance(dataset, str) else dataset
    engine = factory.engine(settings.replace(corpus=data.corpus))
    rows = []
    for q in data.questions:
        # a stand-in gate decides meanwhile (no fitted one is needed: the signals are read)
        turn = engine.prepare(Turn(q.question, [], [], time.perf_counter()), STAND_IN)
        if turn.verdict is None or not turn.passages:  # answered without the gate, as in ask()
            continue
        top = turn.passages[0].paper_id
        right = top in q.gold if q.answerable else bool(q.near_paper) and top == q.near_paper
        rows.append({"id": q.id, "type": q.type, "answerable": q.answerable, "found": right,
                     **turn.verdict.signals.values})
    return rows


def twin_signal_rows(dataset: str, settings) -> list[dict]:
    """`signal_rows` of a split's twins (eval/twins.py): each answerable question asked again
    of a copy of the corpus whose gold abstract lost the answering sentences; unanswerable,
    and found when the twin's paper comes first. The twin corpus is the one `rag eval` asks."""
    from .datasets import Dataset, load_dataset
    from .run import ensure_index
    from .twin_eval import twin_questions, write_twin_corpus

    data = load_dataset(dataset)
    questions, edited = twin_questions(data)
    corpus = write_twin_corpus(data, edited, settings.home_path)
    ensure_index(settings.replace(corpus=corpus), progress=False)
    return signal_rows(Dataset(f"{data.name}-twins", corpus, questions), settings)


def arrays(rows: list[dict], features: tuple[str, ...]):
    """(X, answerable, found) of signal rows."""
    X = np.array([[r[f] for f in features] for r in rows], dtype=np.float64).reshape(
        len(rows), len(features))
    return X, np.array([r["answerable"] for r in rows], float), np.array(
        [r["found"] for r in rows], float)


def dev_aurocs(model: dict, features: tuple[str, ...], dev: list[dict],
               dev_twins: list[dict]) -> tuple[float, float]:
    """P(answerable)'s dev AUROC on the bank (answerable against unanswerable questions) and
    on the twins (each twin against the same question asked of the whole abstract)."""
    Xd, yd, _ = arrays(dev, features)
    bank = auroc(predict(model, Xd).tolist(), [bool(v) for v in yd]) or 0.5
    twinned = {r["id"].removesuffix("~twin") for r in dev_twins}
    originals = [r for r in dev if r["id"] in twinned]
    if not originals or not dev_twins:
        return bank, 0.5
    Xo, _, _ = arrays(originals + dev_twins, features)
    p = predict(model, Xo).tolist()
    return bank, auroc(p, [True] * len(originals) + [False] * len(dev_twins)) or 0.5


def select_features(train: list[dict], dev: list[dict], dev_twins: list[dict],
                    features: tuple[str, ...], keep: tuple[str, ...]) -> tuple[tuple, list]:
    """Backward elimination: drop, one at a time, the old signal whose removal helps the dev
    AUROCs most, as long as neither the bank's nor the twins' gets worse (a signal stays only
    where it adds on both). `keep` (the reader's score) is never dropped. Returns the kept
    features and the steps taken."""
    def score(use):
        Xt, yt, _ = arrays(train, use)
        return dev_aurocs(fit_logistic(Xt, yt), use, dev, dev_twins)

    use, steps = tuple(features), []
    now = score(use)
    steps.append({"features": list(use), "dev_auroc": round(now[0], 4),
                  "dev_twin_auroc": round(now[1], 4)})
    while True:
        tries = [(score(tuple(f for f in use if f != drop)), drop)
                 for drop in use if drop not in keep]
        ok = [(sum(s), s, d) for s, d in tries if s[0] >= now[0] and s[1] >= now[1]]
        if not ok:
            return use, steps
        _, now, drop = max(ok)
        use = tuple(f for f in use if f != drop)
        steps.append({"dropped": drop, "dev_auroc": round(now[0], 4),
                      "dev_twin_auroc": round(now[1], 4)})


def main(argv: list[str] | None = None) -> int:
    from rag.retrieve.answerability import gate_file
    from rag.retrieve.signals import FEATURES, READER_FEATURE
    from rag.settings import Settings

    parser = argparse.ArgumentParser(prog="python -m rag.eval.fit_answerability")
    parser.add_argument("--train", default="icml2024-train")
    parser.add_argument("--dev", default="icml2024-dev")
    parser.add_argument("--reader", default="rules",
                        help="the sentence scorer the gate goes with (rules, model): with a "
                             "model, its best score is a feature, the twins join the data, "
                             "and the old signals are kept only where they add on dev")
    parser.add_argument("--out", default=None, help="default: the scorer's gate file")
    args = parser.parse_args(argv)
    settings = Settings.load().replace(reader=args.reader)
    t0 = time.perf_counter()
    train, dev = signal_rows(args.train, settings), signal_rows(args.dev, settings)
    features, selection, train_twins, dev_twins = FEATURES, [], [], []
    if args.reader != "rules":
        train_twins = twin_signal_rows(args.train, settings)
        dev_twins = twin_signal_rows(args.dev, settings)
        features, selection = select_features(train + train_twins, dev, dev_twins,
                                              FEATURES + (READER_FEATURE,), (READER_FEATURE,))
    fit_rows, choose_rows = train + train_twins, dev + dev_twins
    read = features  # what P(answerable) reads; P(found) reads FOUND_FEATURES
    features = tuple(f for f in FEATURES + (READER_FEATURE,) if f in read or f in FOUND_FEATURES)
    Xt, yt, _ = arrays(fit_rows, features)
    Xd, yd, _ = arrays(choose_rows, features)
    answerable = fit_on(Xt, yt, features, read)
    pd = predict(answerable, Xd).tolist()
    dev_ok = [bool(v) for v in yd]
    t_answer = choose_threshold(pd, dev_ok, sorted(set(pd) | {0.0, 1.0}), MAX_FALSE_ABSTENTION)
    # P(found), "is the top paper the one meant?", on the bank's questions alone: a twin's
    # paper is found by construction, and counting twins taught it to call papers found that
    # merely share a rare word with the question ("flat" tyres, "flat" minima)
    Xb, _, fb = arrays(train, features)
    Xe, _, fe = arrays(dev, features)
    found = fit_on(Xb, fb, features, FOUND_FEATURES)
    pf, pe = predict(found, Xe), predict(answerable, Xe)
    named = np.array([r["rarest_present"] > 0 and r["title_cover"] > 0  # the verdict's rule
                      for r in dev], dtype=bool)
    t_found = choose_found_threshold(pf, fe, (pe < t_answer) & named)
    chosen = at_threshold(pd, dev_ok, t_answer)
    bank, twins = dev_aurocs(answerable, features, dev, dev_twins)
    report = {"train_questions": len(train), "train_twins": len(train_twins),
              "dev_questions": len(dev), "dev_twins": len(dev_twins),
              "train_auroc": auroc(predict(answerable, Xt).tolist(), [bool(v) for v in yt]),
              "dev_auroc": bank, **({"dev_twin_auroc": twins} if dev_twins else {}),
              "dev_found_auroc": auroc(pf.tolist(), [bool(v) for v in fe]),
              "dev_abstention_recall": chosen.recall,
              "dev_false_abstention": chosen.false_abstention_rate,
              "answerable_reads": list(read), **({"selection": selection} if selection else {}),
              "seconds": round(time.perf_counter() - t0, 1)}
    model = {"about": "Fitted by `python -m rag.eval.fit_answerability --reader "
                      f"{args.reader}` (eval/fit_answerability.py): coefficients on "
                      "icml2024-train, thresholds on icml2024-dev; see "
                      "rag/retrieve/answerability.py.",
             "reader": args.reader, "features": list(features), "answerable": answerable,
             "found": found, "answer_threshold": t_answer, "found_threshold": t_found,
             "fit": report}
    return write(args.out or str(gate_file(args.reader)), model, report)


def write(out: str, model: dict, report: dict) -> int:
    """Save a fitted `model` to `out` and print its `report`."""
    Path(out).write_text(json.dumps(model, indent=1) + "\n", encoding="utf-8")
    json.dump(report, sys.stdout, indent=1)
    print(f"\nwrote {out}")
    return 0


def run(main=None, prog: str = "fit_answerability", argv: list[str] | None = None) -> int:
    """`main(argv)` with the library's errors (no index, no model) as one-line messages."""
    from rag.errors import RagError

    try:
        return (main or globals()["main"])(argv)
    except RagError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(run())
