"""Issue 13's targets on the metadata questions (authors, titles, noisy lists), per split.

    RAG_HOME=... python -m rag.eval.metadata_probe [--split test] [--rows rows.jsonl]

Runs `rag.ask` (extractive, corpus icml2024) on every question of type author, title or list in
eval/datasets/icml2024-{train,dev,test}.jsonl and prints, per split:
- author: recall and precision of the papers the answer cites against every paper of that
  author (a topic-restricted question: those on the topic); for a name in no author list, the
  share answered "No paper by X" with no paper cited;
- title: the share of questions whose first passage is the named paper;
- list: recall@10 of the answer's passages (a list answer's passages are the relevant papers,
  best first) for the plain questions, for the noisy variants (`variant_of`) and their plain
  forms, and the mean difference noisy - plain over those pairs.
Targets: author recall and precision >= 0.95, title first >= 0.95, |noisy - plain| <= 0.05.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from statistics import mean

import rag

DATASETS = Path(__file__).resolve().parent / "datasets"
TYPES = ("author", "title", "list")


def questions(split: str) -> list[dict]:
    out = []
    for name in (("train", "dev", "test") if split == "all" else (split,)):
        for line in (DATASETS / f"icml2024-{name}.jsonl").read_text(encoding="utf-8").splitlines():
            q = json.loads(line) if line.strip() else None
            if q and q.get("type") in TYPES:
                out.append({**q, "split": name})
    return out


def row(q: dict, answer) -> dict:
    """Per-question figures (pure: the answer's cited and retrieved paper ids against gold)."""
    gold = set(q["gold"])
    cited = {c.paper_id for c in answer.citations}
    ranked = [p.paper_id for p in answer.passages]
    out = {"id": q["id"], "split": q["split"], "type": q["type"], "question": q["question"],
           "query": answer.query, "abstained": answer.abstained}
    if q["type"] == "author":
        if gold:
            out["recall"] = len(cited & gold) / len(gold)
            out["precision"] = len(cited & gold) / len(cited) if cited else 0.0
        else:
            out["no_paper"] = answer.abstained and not cited and not ranked \
                and answer.text.startswith("No paper by")
    elif q["type"] == "title":
        out["first"] = bool(ranked) and ranked[0] in gold
    else:
        out["recall@10"] = len(set(ranked[:10]) & gold) / len(gold)
        out["variant_of"] = q.get("variant_of")
    return out


def summary(rows: list[dict]) -> dict:
    def avg(key, kind, **match):
        vals = [r[key] for r in rows if r["type"] == kind and key in r
                and all(r.get(k) == v for k, v in match.items())]
        return (round(mean(vals), 3), len(vals)) if vals else (None, 0)

    lists = {r["id"]: r for r in rows if r["type"] == "list"}
    pairs = [(r["recall@10"], lists[r["variant_of"]]["recall@10"]) for r in lists.values()
             if r.get("variant_of") in lists]
    diffs = [noisy - plain for noisy, plain in pairs]
    return {"author recall": avg("recall", "author"), "author precision":
            avg("precision", "author"), "unknown author -> no paper": avg("no_paper", "author"),
            "title first": avg("first", "title"),
            "list recall@10 plain": avg("recall@10", "list", variant_of=None),
            "list recall@10 noisy": (round(mean(n for n, _ in pairs), 3) if pairs else None,
                                     len(pairs)),
            "  ... their plain forms": (round(mean(p for _, p in pairs), 3) if pairs else None,
                                        len(pairs)),
            "list noisy - plain": (round(mean(diffs), 3) if diffs else None, len(diffs))}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="all", choices=("train", "dev", "test", "all"))
    ap.add_argument("--rows", help="write per-question rows to this JSONL file")
    args = ap.parse_args(argv)
    settings = rag.Settings.load(corpus="icml2024", generator="extractive")
    rows = [row(q, rag.ask(q["question"], settings=settings)) for q in questions(args.split)]
    if args.rows:
        Path(args.rows).write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    for split in sorted({r["split"] for r in rows}) + (["all"] if args.split == "all" else []):
        part = [r for r in rows if split == "all" or r["split"] == split]
        print(f"{split} ({len(part)} questions)")
        for name, (value, n) in summary(part).items():
            print(f"  {name:28s} {value!s:>6}  (n={n})")


if __name__ == "__main__":
    main()
