"""The table benchmarks: cells (eval/datasets/cells/) and lists (eval/datasets/lists/).

    python -m rag.eval.tables fit               # choose the cell question template and gate on dev
    python -m rag.eval.tables cells --split test   # cells through rag.table(), on the index
    python -m rag.eval.tables lists --split test   # list recall/precision through rag.ask()
    python -m rag.eval.tables fit-lists         # the list membership model: train, then dev

`fit` reads the dev cells only: with the column questions (`rag.retrieve.cells`) it scores every
sentence of every cell's abstract with the scorer `--reader`, for each weight of the rules'
overlap with the column's words, and keeps the weight and threshold with the best balanced
accuracy (the mean of "right where stated" and "right where not stated"). It writes
rag/retrieve/cells.json.

A stated cell is right when the table says stated and its quote holds the labelled value (its
sentence, hence its citation, states it); a not-stated cell is right when the table says not
stated. Figures come with a 95% bootstrap interval (1,000 resamples of the cells, seed 0).

A list topic is scored on the papers the list shows: recall over the labelled relevant papers,
precision over the shown papers that were judged (an unjudged paper is left out, not counted
wrong; how many there were is reported).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from rag.eval.metrics.abstention import auroc
from rag.eval.metrics.intervals import fmt, interval
from rag.ingest.chunking import split_sentences
from rag.types import Passage

HERE = Path(__file__).resolve().parent
CELLS = HERE / "datasets" / "cells" / "cells.jsonl"
LISTS = HERE / "datasets" / "lists" / "topics.jsonl"
# Column templates compared on dev with the reader model (2026-12-05, dev AUROC of the best
# sentence, stated vs not stated): 0.828 for the first, 0.779 / 0.789 / 0.742 for the others.
TEMPLATES = ("What is the {column} of this work?",
             "What {column} does this paper report?",
             "What is the {column}?",
             "Which {column} is given?")
RULES_WEIGHTS = (0.0, 0.1, 0.3, 0.6)


def load(path: Path, split: str | None = None) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return [r for r in rows if split is None or r["split"] == split]


def corpus() -> dict[str, dict]:
    from rag.eval.reader.papers import corpus as shipped

    return {p["id"]: p for p in shipped()}


def passage(paper: dict) -> Passage:
    """A whole abstract as the index holds it (the index's own sentence splitter)."""
    text = paper["abstract"]
    return Passage(chunk_id=f"{paper['id']}#0", paper_id=paper["id"], title=paper["title"],
                   text=text, score=1.0, start=0, end=len(text),
                   sentences=tuple(split_sentences(text)), url=paper.get("url", ""))


def figure(values: list[float]) -> tuple[float, float, float]:
    """(mean, low, high): a share (or a mean of per-topic shares) with its 95% bootstrap
    interval (`metrics/intervals.py`); nan when there is nothing to measure."""
    bounds = interval(values)
    if bounds is None:
        return float("nan"), float("nan"), float("nan")
    return float(np.mean(values)), *bounds


def _contains(sentence: str, value: str) -> bool:
    return " ".join(value.lower().split()) in " ".join(sentence.lower().split())


def fit(reader: str) -> dict:
    """The template (the first of TEMPLATES beside the lexicon's column questions), the rules'
    weight and the threshold, chosen on the dev cells (module doc)."""
    from rag.retrieve.cells import CellGate, cell_scores
    from rag.retrieve.sentences import scorer_for

    cells, papers = load(CELLS, "dev"), corpus()
    scorer = scorer_for(reader, None)
    best, template = None, TEMPLATES[0]
    for weight in RULES_WEIGHTS:
        gate = CellGate(template, weight)
        scored = []  # (stated, best score, best sentence holds the value)
        for cell in cells:
            p = passage(papers[cell["paper_id"]])
            scores = cell_scores(cell["column"], [p], scorer, gate)[0]
            j = max(range(len(scores)), key=lambda i: (scores[i], -i))
            text = p.sentence_texts()[j][2]
            scored.append((cell["stated"], scores[j],
                           bool(cell["stated"]) and _contains(text, cell["value"])))
        acc, threshold = max(
            ((np.mean([h and s >= t for st, s, h in scored if st])
              + np.mean([s < t for st, s, _ in scored if not st])) / 2, t)
            for t in sorted({s for _, s, _ in scored}))
        row = {"template": template, "rules_weight": weight,
               "dev_auroc": round(auroc([s for _, s, _ in scored],
                                        [bool(st) for st, _, _ in scored]), 4),
               "dev_best_sentence_holds_value": round(
                   sum(h for _, _, h in scored) / max(sum(st for st, _, _ in scored), 1), 4),
               "dev_balanced_accuracy": round(float(acc), 4), "threshold": float(threshold)}
        print(json.dumps(row))
        if best is None or row["dev_balanced_accuracy"] > best["dev_balanced_accuracy"]:
            best = row
    assert best is not None
    return best


def list_pools(split: str, settings) -> list[tuple[dict, list[tuple[str, list[float]]]]]:
    """Each topic of the split with every candidate paper the list search judges, and its
    features (`rag.retrieve.membership.candidates`, through the index's own snapshot)."""
    from rag import factory
    from rag.retrieve.catalog import catalog
    from rag.retrieve.membership import candidates
    from rag.retrieve.route import understand

    index, retriever = factory.index(settings), factory.retriever(settings)
    snap = index.snapshot()
    cat, idf = catalog(index, snap), snap.idf()
    out = []
    for t in load(LISTS, split):
        query = understand(t["question"]).query
        found = candidates(query, retriever, snap, cat, idf, settings.max_per_paper)
        out.append((t, [(pid, x) for pid, (_, x) in found.items()]))
    return out


def fit_lists(settings) -> dict:
    """The membership model on the train topics, its threshold on dev: the best F1 of the
    dev topics' mean recall and mean precision."""
    from rag.eval.logistic import fit_logistic
    from rag.retrieve.answerability import Logistic
    from rag.retrieve.membership import FEATURES, Membership

    X, y = [], []
    for t, pool in list_pools("train", settings):
        for pid, x in pool:
            X.append(x)
            y.append(float(pid in t["relevant"]))
    model = Logistic.from_dict(fit_logistic(np.asarray(X), np.asarray(y)))
    dev = list_pools("dev", settings)
    best = None
    for threshold in np.arange(0.05, 0.96, 0.025):
        m = Membership(model, float(threshold))
        recalls, precisions = [], []
        for t, pool in dev:
            kept = {pid for pid, x in pool if m.probability(x) >= threshold}
            relevant = set(t["relevant"])
            recalls.append(len(kept & relevant) / len(relevant))
            precisions.append(len(kept & relevant) / len(kept) if kept else 0.0)
        r, p = float(np.mean(recalls)), float(np.mean(precisions))
        f1 = 2 * r * p / (r + p) if r + p else 0.0
        if best is None or f1 > best["dev_f1"]:
            best = {"threshold": round(float(threshold), 3), "dev_recall": round(r, 4),
                    "dev_precision": round(p, 4), "dev_f1": round(f1, 4)}
    assert best is not None
    return {"features": list(FEATURES), "model": model.to_dict(), **best,
            "train_pairs": len(y), "train_relevant": int(sum(y)),
            "fitted_on": "eval/datasets/lists train topics; threshold on dev"}


def cells_report(split: str, settings) -> dict:
    """Every table of the split through `rag.table()` (its papers given by id), scored."""
    import rag

    cells = load(CELLS, split)
    tables: dict[str, list[dict]] = {}
    for cell in cells:
        tables.setdefault(cell["table"], []).append(cell)
    stated_hits, absent_hits, value_hits, seconds = [], [], [], []
    for name, group in sorted(tables.items()):
        columns = sorted({c["column"] for c in group}, key=[c["column"] for c in group].index)
        ids = sorted({c["paper_id"] for c in group}, key=[c["paper_id"] for c in group].index)
        start = time.perf_counter()
        table = rag.table(group[0]["topic"], columns, paper_ids=ids, settings=settings).table
        seconds.append(time.perf_counter() - start)
        by_paper = {row.paper_id: row for row in table.rows}
        for cell in group:
            got = by_paper[cell["paper_id"]].cells[cell["column"]]
            if cell["stated"]:
                right = got.stated and bool(got.quote) and _contains(got.quote, cell["value"])
                stated_hits.append(right)
                value_hits.append(bool(got.value) and (_contains(got.value, cell["value"])
                                                       or _contains(cell["value"], got.value)))
            else:
                absent_hits.append(not got.stated)
    return {"split": split, "tables": len(tables), "cells": len(cells),
            "right_where_stated": figure(stated_hits), "stated": len(stated_hits),
            "right_where_not_stated": figure(absent_hits), "not_stated": len(absent_hits),
            "value_matches_label": figure(value_hits),
            "table_seconds_p50": float(np.median(seconds)), "table_seconds_max": max(seconds)}


def lists_report(split: str, settings) -> dict:
    import rag

    topics = load(LISTS, split)
    recalls, precisions, unjudged, shown = [], [], 0, []
    for t in topics:
        answer = rag.ask(t["question"], settings=settings)
        listed = list(dict.fromkeys(c.paper_id for c in answer.citations))
        relevant, judged = set(t["relevant"]), set(t["judged"])
        recalls.append(len(relevant & set(listed)) / len(relevant))
        judged_listed = [p for p in listed if p in judged]
        unjudged += len(listed) - len(judged_listed)
        if judged_listed:
            precisions.append(sum(p in relevant for p in judged_listed) / len(judged_listed))
        shown.append(len(listed))
    return {"split": split, "topics": len(topics),
            "recall": figure(recalls), "precision": figure(precisions),
            "unjudged_listed": unjudged, "papers_listed_median": float(np.median(shown))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag.eval.tables")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("fit", help="choose the cell template and threshold on dev")
    p.add_argument("--reader", default="model")
    p = sub.add_parser("fit-lists", help="fit the list membership model (train), threshold (dev)")
    p.add_argument("--corpus", default="icml2024")
    for name in ("cells", "lists"):
        p = sub.add_parser(name)
        p.add_argument("--split", default="dev", choices=("train", "dev", "test"))
        p.add_argument("--corpus", default="icml2024")
        p.add_argument("--list-limit", type=int, default=40)
    args = parser.parse_args(argv)
    if args.command == "fit":
        from rag.retrieve.cells import CELL_GATE_FILE

        best = fit(args.reader)
        data = json.loads(CELL_GATE_FILE.read_text()) if CELL_GATE_FILE.is_file() else {}
        data[args.reader] = {**best, "fitted_on": "eval/datasets/cells dev split"}
        CELL_GATE_FILE.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"chose {best['template']!r}, threshold {best['threshold']:.4f} -> {CELL_GATE_FILE}")
        return 0
    from rag.settings import Settings

    if args.command == "fit-lists":
        from rag.retrieve.membership import MEMBERSHIP_FILE, membership

        fitted = fit_lists(Settings.load(corpus=args.corpus))
        MEMBERSHIP_FILE.write_text(json.dumps(fitted, indent=2) + "\n", encoding="utf-8")
        membership.cache_clear()
        print(json.dumps({k: v for k, v in fitted.items() if k != "model"}))
        return 0
    settings = Settings.load(corpus=args.corpus, list_limit=args.list_limit)
    report = (cells_report if args.command == "cells" else lists_report)(args.split, settings)
    for line in report_lines(report):
        print(line)
    return 0


def report_lines(report: dict) -> list[str]:
    """A report's figures, one a line, each rate with its interval and count."""
    out = []
    for key, value in report.items():
        if isinstance(value, tuple):
            count = report.get({"right_where_stated": "stated",
                                "right_where_not_stated": "not_stated",
                                "value_matches_label": "stated"}.get(key, "topics"), 0)
            value = f"{fmt(value[0], value[1:])} (n={count})"
        out.append(f"{key}: {value}")
    return out


if __name__ == "__main__":
    sys.exit(main())
