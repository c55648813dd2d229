"""Measure the abstention threshold: `python -m rag.eval.calibrate [--dataset seeds]`.

For every question the default retriever returns its top k passages and the gate's relevance
score (rag.gate.relevance: the best MiniLM cosine between the query and a passage) is recorded.
The threshold is then swept from 0.00 to 1.00; the rule (`choose_threshold`) takes the highest
abstention recall whose false-abstention rate on answerable questions stays at or under 5%, the
middle of the tied range. Because the rule is fitted on the same questions it is scored on, a
5-fold cross-validated estimate is printed beside the in-sample one.

With the extractive generator the gate alone decides abstention (the generator keeps only
passages at or above the same threshold, and one always passes when the gate does), so the
sweep predicts `rag eval` exactly; an LLM generator may abstain more on its own.

Two other candidate signals are scored by AUROC for comparison (not used by the gate):
`sentence_cosine`, the best cosine between the query and one sentence of a passage, and
`term_coverage`, the best share of the query's content words found in a passage.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from .datasets import load_dataset
from .metrics.abstention import (at_threshold, auroc, choose_threshold, cross_validated)

GRID = [round(i / 100, 2) for i in range(101)]
MAX_FALSE_ABSTENTION = 0.05


def signals(dataset, settings) -> list[dict]:
    """Per question: type, answerable, and each candidate gate signal."""
    from rag import factory
    from rag.retrieve.gate import relevance
    from rag.pipeline import prepare_question
    from rag.progress import ProgressBar
    from rag.text import coverage

    embedder = factory.embedder(settings)
    retriever = factory.retriever(settings)
    vectors: dict[str, np.ndarray] = {}  # sentences recur across questions: embed each once
    out = []
    bar = ProgressBar("questions", unit="q", total=len(dataset.questions),
                      enabled=sys.stderr.isatty(), leave=False)
    for q in dataset.questions:
        text, _ = prepare_question(q.question, settings)
        passages = retriever.retrieve(text, settings.k, settings.max_per_paper)
        sents = [t for p in passages for _, _, t in p.sentence_texts() if t.strip()]
        new = list(dict.fromkeys(t for t in sents if t not in vectors))
        if new:
            vectors.update(zip(new, embedder.embed(new)))
        qvec = embedder.embed([text])[0]
        cos = [float(vectors[t] @ qvec) for t in sents]
        bar.advance()
        out.append({"id": q.id, "type": q.type, "answerable": q.answerable,
                    "max_cosine": relevance(passages),
                    "sentence_cosine": max(cos, default=0.0),
                    "term_coverage": max((coverage(text, f"{p.title}. {p.text}")
                                          for p in passages), default=0.0)})
    bar.close()
    return out


def report(rows: list[dict], current: float, budget: float = MAX_FALSE_ABSTENTION) -> dict:
    scores = [r["max_cosine"] for r in rows]
    answerable = [r["answerable"] for r in rows]
    chosen = choose_threshold(scores, answerable, GRID, budget)
    cv = cross_validated(scores, answerable, GRID, folds=5, max_false_abstention=budget)

    def row(t):
        s = at_threshold(scores, answerable, t)
        return {"threshold": t, "abstention_precision": s.precision,
                "abstention_recall": s.recall, "false_abstention_rate": s.false_abstention_rate,
                "true_abstentions": s.true_abstentions, "false_abstentions": s.false_abstentions}

    by_type = {}
    for qtype in sorted({r["type"] for r in rows}):
        xs = np.array([r["max_cosine"] for r in rows if r["type"] == qtype])
        by_type[qtype] = {"n": len(xs), "min": float(xs.min()), "median": float(np.median(xs)),
                          "max": float(xs.max()), "abstained_at_chosen": int((xs < chosen).sum())}
    return {"chosen": chosen, "current": current, "budget": budget,
            "at_chosen": row(chosen), "at_current": row(current),
            "cross_validated": {"abstention_recall": cv.recall,
                                "false_abstention_rate": cv.false_abstention_rate,
                                "abstention_precision": cv.precision},
            "sweep": [row(t) for t in GRID if 0.15 <= t <= 0.6],
            "by_type": by_type,
            "auroc": {name: auroc([r[name] for r in rows], answerable)
                      for name in ("max_cosine", "sentence_cosine", "term_coverage")}}


def _f(x) -> str:
    return "–" if x is None else f"{x:.3f}"


def markdown(rep: dict, dataset: str, n: int) -> str:
    c, cur, cv = rep["at_chosen"], rep["at_current"], rep["cross_validated"]
    out = [f"# Abstention threshold calibration ({dataset}, {n} questions)", "",
           f"Rule: highest abstention recall with false abstention <= {rep['budget']:.0%} "
           f"(middle of the tied range).", "",
           f"- chosen threshold **{rep['chosen']:.2f}**: abstention recall {_f(c['abstention_recall'])}, "
           f"precision {_f(c['abstention_precision'])}, false abstention "
           f"{_f(c['false_abstention_rate'])} (in sample)",
           f"- 5-fold cross-validated: recall {_f(cv['abstention_recall'])}, precision "
           f"{_f(cv['abstention_precision'])}, false abstention {_f(cv['false_abstention_rate'])}",
           f"- current setting {rep['current']:.2f}: recall {_f(cur['abstention_recall'])}, "
           f"false abstention {_f(cur['false_abstention_rate'])}", "",
           "| threshold | AbstP | AbstR | FalseAbst | caught | lost |", "|---|---|---|---|---|---|"]
    for r in rep["sweep"]:
        if round(r["threshold"] * 100) % 5 == 0 or r["threshold"] in (rep["chosen"],
                                                                       rep["current"]):
            out.append(f"| {r['threshold']:.2f} | {_f(r['abstention_precision'])} | "
                       f"{_f(r['abstention_recall'])} | {_f(r['false_abstention_rate'])} | "
                       f"{r['true_abstentions']} | {r['false_abstentions']} |")
    out += ["", "Gate score (max cosine) by question type:", "",
            "| type | n | min | median | max | abstained at chosen |", "|---|---|---|---|---|---|"]
    for t, v in rep["by_type"].items():
        out.append(f"| {t} | {v['n']} | {v['min']:.3f} | {v['median']:.3f} | {v['max']:.3f} | "
                   f"{v['abstained_at_chosen']} |")
    out += ["", "Separation of answerable from unanswerable questions (AUROC, 1 = perfect):", ""]
    out += [f"- {k}: {_f(v)}" for k, v in rep["auroc"].items()]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    from rag.errors import RagError
    from rag.settings import Settings

    parser = argparse.ArgumentParser(prog="python -m rag.eval.calibrate", description=__doc__.split(
        "\n")[0])
    parser.add_argument("--dataset", default="seeds")
    parser.add_argument("--max-false-abstention", type=float, default=MAX_FALSE_ABSTENTION)
    parser.add_argument("--no-index", action="store_true")
    parser.add_argument("--out", help="folder for calibration.md/.json")
    args = parser.parse_args(argv)
    try:
        dataset = load_dataset(args.dataset)
        settings = Settings.load(corpus=dataset.corpus)
        if not args.no_index:
            from .run import ensure_index

            ensure_index(settings)
        rows = signals(dataset, settings)
    except RagError as exc:
        print(f"calibrate: error: {exc}", file=sys.stderr)
        return 1
    rep = report(rows, settings.abstain_threshold, args.max_false_abstention)
    text = markdown(rep, dataset.name, len(rows))
    print(text)
    if args.out:
        out = Path(args.out)
    else:
        out = Path(__file__).resolve().parent / "results" / \
            f"{time.strftime('%Y%m%d-%H%M%S')}-calibration-{dataset.name}"
    out.mkdir(parents=True, exist_ok=True)
    (out / "calibration.md").write_text(text + "\n", encoding="utf-8")
    (out / "calibration.json").write_text(json.dumps({"report": rep, "questions": rows},
                                                     indent=1), encoding="utf-8")
    print(f"\nwritten to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
