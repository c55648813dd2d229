"""Fit how the local model's P(YES) revises the gate (rag/answer/verdict.json).

    python -m rag.eval.fit_verdict            # train -> coefficients, dev -> threshold

1. Every question of `icml2024-train` and `icml2024-dev` runs through the pipeline's own search
   and gate on the icml2024 corpus; for those the gate would answer, the local model is asked
   exactly what `ask()` asks it (`Engine._consult`: the answer's prompt ending in "Reply YES or
   NO", one token, P(YES) from its log-probabilities). Rows are kept in `--rows` (a JSON-lines
   file under RAG_HOME), so a rerun asks the model only about new questions.
2. Two L2-regularised logistic regressions are fitted on the train rows, labelled by the
   question's `answerable`: on [logit P(answerable), logit P(YES)], and on logit P(YES) alone.
3. On dev, each gets the threshold with the highest abstention recall over all gated dev
   questions (those the gate already turns away count as abstained) whose false abstention
   stays at most `MAX_FALSE_ABSTENTION`; the one abstaining more is kept (a tie: P(YES) alone).
   First fit (2026-12-04): on dev, among the 50 questions the gate let through, P(YES) alone
   separated answerable from not with AUROC 0.83, the gate's own probability 0.67; but at 5%
   false abstention the veto adds at most one dev abstention (0.552 -> 0.586).
The test split is never read here: `RAG_GENERATOR=local rag eval --dataset icml2024-test`
reports it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from rag.answer.verdict import FEATURES

from .fit_answerability import MAX_FALSE_ABSTENTION, fit_on, run, write
from .metrics.abstention import auroc

VARIANTS = (FEATURES, FEATURES[1:])  # the gate's P(answerable) and P(YES), or P(YES) alone


def collect(dataset: str, settings, rows_file: Path, done: dict) -> list[dict]:
    """One row per gated question of `dataset`: the gate's verdict, and the model's P(YES)
    when the gate would answer (read from `done`, else asked and appended to `rows_file`)."""
    from rag import factory
    from rag.retrieve.answerability import ANSWER
    from rag.types import Turn

    from .datasets import load_dataset

    data = load_dataset(dataset)
    engine = factory.engine(settings.replace(corpus=data.corpus, generator="local"))
    rows = []
    for i, q in enumerate(data.questions):
        turn = engine.prepare(Turn(q.question, [], [], time.perf_counter()))
        if turn.verdict is None or not turn.passages:  # answered without the gate, as in ask()
            continue
        verdict = turn.verdict
        row = {"id": q.id, "split": dataset, "answerable": q.answerable,
               "gate": verdict.decision, "p_gate": verdict.answerable, "p_yes": None}
        if verdict.decision == ANSWER:
            key = f"{q.id}\t{q.question}"
            if key not in done:
                t0 = time.perf_counter()
                yes = engine.backend().verdict(q.question, engine.shown(turn.whole), (),
                                               idf=turn.idf)
                done[key] = {"p_yes": yes, "seconds": round(time.perf_counter() - t0, 2)}
                with rows_file.open("a", encoding="utf-8") as f:
                    f.write(json.dumps({"key": key, **done[key]}) + "\n")
                print(f"  {dataset} {i + 1}/{len(data.questions)} {q.id}: P(YES) "
                      f"{yes if yes is None else round(yes, 3)} "
                      f"({done[key]['seconds']} s)", file=sys.stderr, flush=True)
            row["p_yes"] = done[key]["p_yes"]
        rows.append(row)
    return rows


def choose(combined: list[float | None], answerable: list[bool]) -> tuple[float, float, float]:
    """(threshold, abstention recall, false abstention): a question abstains when the gate
    turned it away (None) or its combined probability is below the threshold."""
    best = (0.0, -1.0, 0.0)
    n_ok = max(sum(answerable), 1)
    n_no = max(len(answerable) - sum(answerable), 1)
    for t in sorted({0.0} | {p for p in combined if p is not None}):
        out = [p is None or p < t for p in combined]
        fa = sum(o and a for o, a in zip(out, answerable)) / n_ok
        recall = sum(o and not a for o, a in zip(out, answerable)) / n_no
        if fa <= MAX_FALSE_ABSTENTION and recall > best[1]:
            best = (t, recall, fa)
    return best


def main(argv: list[str] | None = None) -> int:
    from rag.answer.local import ALIAS
    from rag.answer.verdict import MODEL_FILE, features
    from rag.retrieve.answerability import Logistic
    from rag.settings import Settings

    parser = argparse.ArgumentParser(prog="python -m rag.eval.fit_verdict")
    parser.add_argument("--train", default="icml2024-train")
    parser.add_argument("--dev", default="icml2024-dev")
    parser.add_argument("--rows", default="", help="JSON-lines cache of the model's replies")
    parser.add_argument("--out", default=str(MODEL_FILE))
    args = parser.parse_args(argv)
    settings = Settings.load()
    rows_file = Path(args.rows or settings.home_path / "fit-verdict-rows.jsonl")
    rows_file.parent.mkdir(parents=True, exist_ok=True)
    done = {}
    if rows_file.is_file():
        for line in rows_file.read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            done[d.pop("key")] = d
    t0 = time.perf_counter()
    train = collect(args.train, settings, rows_file, done)
    dev = collect(args.dev, settings, rows_file, done)

    asked = [r for r in train if r["p_yes"] is not None]
    X = np.array([features(r["p_gate"], r["p_yes"]) for r in asked])
    y = np.array([r["answerable"] for r in asked], float)
    ok = [bool(r["answerable"]) for r in dev]

    def combined(model: Logistic, r: dict) -> float | None:
        if r["gate"] != "answer":
            return None
        return r["p_gate"] if r["p_yes"] is None else model.probability(
            features(r["p_gate"], r["p_yes"]))

    # Two candidate combinations fitted on train, the one abstaining more on dev (at the same
    # false-abstention bound) kept; a tie keeps the one reading P(YES) alone (the simpler).
    fitted = {use: fit_on(X, y, FEATURES, use) for use in VARIANTS}
    chosen = {use: choose([combined(Logistic.from_dict(m), r) for r in dev], ok)
              for use, m in fitted.items()}
    use = max(VARIANTS, key=lambda u: (chosen[u][1], -len(u)))
    combination, (threshold, recall, fa) = fitted[use], chosen[use]
    model = Logistic.from_dict(combination)
    gate_only = [r["gate"] != "answer" for r in dev]
    passed = [r for r in dev if r["p_yes"] is not None]
    report = {
        "train_asked": len(asked), "dev_gated": len(dev), "dev_asked": len(passed),
        "dev_auroc_p_yes": auroc([r["p_yes"] for r in passed], [r["answerable"] for r in passed]),
        "dev_auroc_gate": auroc([r["p_gate"] for r in passed], [r["answerable"] for r in passed]),
        "dev_auroc_combined": auroc([combined(model, r) for r in passed],
                                    [r["answerable"] for r in passed]),
        "variants": {"+".join(u): {"dev_abstention_recall": c[1], "dev_false_abstention": c[2]}
                     for u, c in chosen.items()}, "kept": "+".join(use),
        "dev_gate_abstention_recall": sum(g and not a for g, a in zip(gate_only, ok))
        / max(len(ok) - sum(ok), 1),
        "dev_gate_false_abstention": sum(g and a for g, a in zip(gate_only, ok)) / max(sum(ok), 1),
        "dev_abstention_recall": recall, "dev_false_abstention": fa,
        "seconds": round(time.perf_counter() - t0, 1)}
    out = {"about": "Fitted by `python -m rag.eval.fit_verdict` (eval/fit_verdict.py): the "
                    "combination on icml2024-train, the threshold on icml2024-dev; see "
                    "rag/answer/verdict.py.",
           "model": ALIAS, "features": list(FEATURES),
           "combination": combination, "threshold": threshold, "fit": report}
    return write(args.out, out, report)


if __name__ == "__main__":
    raise SystemExit(run(main, "fit_verdict"))
