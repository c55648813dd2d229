"""Validate eval/datasets/lists/topics.jsonl (the list benchmark).

    .venv/bin/python eval/datasets/lists/check.py

Checks: record ids unique and well formed, topics unique, every paper id in the corpus
(seeds/icml2024.jsonl), no duplicate paper ids inside a list, relevant ⊆ judged,
split == split_of("topic:" + topic), at least 40 topics. Prints counts per split and exits
non-zero if any problem is found.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE.parent / "bank"))
from split import split_of  # noqa: E402

MIN_TOPICS = 40
FIELDS = ("id", "topic", "question", "relevant", "judged", "keywords", "split")


def main() -> int:
    corpus = {json.loads(line)["id"] for line in (ROOT / "seeds" / "icml2024.jsonl").open()
              if line.strip()}
    rows = [json.loads(line) for line in (HERE / "topics.jsonl").open() if line.strip()]
    problems: list[str] = []
    ids, topics = Counter(r.get("id") for r in rows), Counter(r.get("topic") for r in rows)
    problems += [f"duplicate id {i}" for i, n in ids.items() if n > 1]
    problems += [f"duplicate topic {t!r}" for t, n in topics.items() if n > 1]
    for r in rows:
        rid = r.get("id", "?")
        missing = [f for f in FIELDS if f not in r]
        if missing:
            problems.append(f"{rid}: missing fields {missing}")
            continue
        if not str(rid).startswith("list-"):
            problems.append(f"{rid}: id should start with 'list-'")
        if not r["question"].strip():
            problems.append(f"{rid}: empty question")
        for field in ("relevant", "judged"):
            lst = r[field]
            if len(set(lst)) != len(lst):
                problems.append(f"{rid}: duplicate paper ids in {field}")
            unknown = [p for p in lst if p not in corpus]
            if unknown:
                problems.append(f"{rid}: {len(unknown)} {field} ids not in corpus, e.g. {unknown[0]}")
        extra = set(r["relevant"]) - set(r["judged"])
        if extra:
            problems.append(f"{rid}: {len(extra)} relevant ids not in judged")
        if not r["relevant"]:
            problems.append(f"{rid}: no relevant papers")
        want = split_of("topic:" + r["topic"])
        if r["split"] != want:
            problems.append(f"{rid}: split {r['split']!r}, split_of gives {want!r}")
    if len(rows) < MIN_TOPICS:
        problems.append(f"only {len(rows)} topics, need at least {MIN_TOPICS}")

    splits = Counter(r.get("split") for r in rows)
    rel = [len(r.get("relevant", [])) for r in rows]
    pool = [len(r.get("judged", [])) for r in rows]
    print(f"{len(rows)} topics: " + ", ".join(f"{s} {splits.get(s, 0)}" for s in ("train", "dev", "test")))
    if rows:
        print(f"relevant per topic: min {min(rel)}, median {statistics.median(rel)}, max {max(rel)}, "
              f"total {sum(rel)}")
        print(f"judged per topic:   min {min(pool)}, median {statistics.median(pool)}, max {max(pool)}, "
              f"total {sum(pool)}")
    for p in problems:
        print("PROBLEM:", p)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
