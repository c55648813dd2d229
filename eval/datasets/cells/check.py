"""Check the cell benchmark (eval/datasets/cells/cells.jsonl):

    .venv/bin/python eval/datasets/cells/check.py [path/to/cells.jsonl]

One row is one cell of a comparison table (rows = papers, columns = attributes). A stated cell
carries a short value copied verbatim from the paper's abstract and the abstract sentence that
states it; a not-stated cell carries neither. Every paper must be a held-out paper of exactly one
bank split (dev or test, `check_written.split_papers`), never a train paper, and the row's split
must be that one. Prints one line per problem, then the counts; exit 1 when there is a problem.
"""

from __future__ import annotations

import collections
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE.parent / "bank"))
import check_written  # noqa: E402  (eval/datasets/bank/check_written.py)

FIELDS = ("id", "table", "topic", "column", "paper_id", "stated", "value", "sentence", "split")
MIN_CELLS = 200
NOT_STATED_SHARE = (0.28, 0.40)
MAX_VALUE_WORDS = 8


def problems(cells: list[dict], papers: dict[str, dict], splits: dict[str, set[str]]) -> list[str]:
    out: list[str] = []
    seen_ids: set[str] = set()
    seen_cells: set[tuple[str, str, str]] = set()
    topics: dict[str, set[str]] = collections.defaultdict(set)
    for n, c in enumerate(cells, 1):
        where = f"line {n} ({c.get('id', '?')})"
        missing = [f for f in FIELDS if f not in c]
        if missing:
            out.append(f"{where}: missing fields {missing}")
            continue
        extra = sorted(set(c) - set(FIELDS))
        if extra:
            out.append(f"{where}: unknown fields {extra}")
        if not re.fullmatch(r"cell-\d{3,}", str(c["id"])):
            out.append(f"{where}: id should look like cell-001")
        if c["id"] in seen_ids:
            out.append(f"{where}: duplicate id")
        seen_ids.add(c["id"])
        for f in ("table", "topic", "column"):
            if not isinstance(c[f], str) or not c[f].strip():
                out.append(f"{where}: empty {f}")
        topics[c["table"]].add(c["topic"])
        key = (c["table"], c["paper_id"], c["column"])
        if key in seen_cells:
            out.append(f"{where}: second cell for table/paper/column {key}")
        seen_cells.add(key)

        pid = c["paper_id"]
        paper = papers.get(pid)
        if paper is None:
            out.append(f"{where}: paper {pid} not in the corpus")
            continue
        held = [s for s in ("dev", "test") if pid in splits[s]]
        if pid in splits["train"]:
            out.append(f"{where}: paper {pid} is a train paper")
        if not held:
            out.append(f"{where}: paper {pid} is in neither dev nor test")
        elif len(held) > 1:
            out.append(f"{where}: paper {pid} is in both dev and test")
        elif c["split"] != held[0]:
            out.append(f"{where}: split {c['split']!r}, but paper {pid} is in {held[0]}")

        if c["stated"] is True:
            value, sentence = c["value"], c["sentence"]
            if not isinstance(value, str) or not value.strip():
                out.append(f"{where}: stated cell without a value")
                continue
            if not isinstance(sentence, str) or not sentence.strip():
                out.append(f"{where}: stated cell without a sentence")
                continue
            if value != value.strip() or sentence != sentence.strip():
                out.append(f"{where}: value or sentence has surrounding whitespace")
            if len(value.split()) > MAX_VALUE_WORDS:
                out.append(f"{where}: value has {len(value.split())} words (at most {MAX_VALUE_WORDS})")
            if value not in sentence:
                out.append(f"{where}: value is not a verbatim substring of the sentence")
            if sentence not in paper["abstract"]:
                out.append(f"{where}: sentence is not a verbatim substring of the abstract")
        elif c["stated"] is False:
            if c["value"] is not None or c["sentence"] is not None:
                out.append(f"{where}: not-stated cell must have value and sentence null")
        else:
            out.append(f"{where}: stated must be true or false")

    for table, names in sorted(topics.items()):
        if len(names) > 1:
            out.append(f"table {table}: several topics {sorted(names)}")
    by_table = collections.defaultdict(set)
    for c in cells:
        by_table[c.get("table")].add(c.get("stated"))
    for table, kinds in sorted(by_table.items()):
        if kinds != {True, False}:
            out.append(f"table {table}: does not mix stated and not-stated cells")
    if len(cells) < MIN_CELLS:
        out.append(f"{len(cells)} cells, fewer than {MIN_CELLS}")
    if cells:
        share = sum(c.get("stated") is False for c in cells) / len(cells)
        lo, hi = NOT_STATED_SHARE
        if not lo <= share <= hi:
            out.append(f"not-stated share {share:.3f} outside [{lo}, {hi}]")
    return out


def counts(cells: list[dict]) -> str:
    lines = []
    n = len(cells)
    ns = sum(c.get("stated") is False for c in cells)
    tables = sorted({c.get("table") for c in cells})
    lines.append(f"cells: {n} in {len(tables)} tables, "
                 f"{len({c.get('paper_id') for c in cells})} papers")
    lines.append(f"stated: {n - ns}  not stated: {ns}  (not-stated share {ns / max(n, 1):.3f})")
    for split in ("dev", "test"):
        cs = [c for c in cells if c.get("split") == split]
        k = sum(c.get("stated") is False for c in cs)
        lines.append(f"  {split}: {len(cs)} cells ({len(cs) - k} stated, {k} not stated), "
                     f"{len({c.get('paper_id') for c in cs})} papers")
    for t in tables:
        cs = [c for c in cells if c.get("table") == t]
        k = sum(c.get("stated") is False for c in cs)
        sp = collections.Counter(c.get("split") for c in cs)
        lines.append(f"  {t} {cs[0].get('topic')!r}: {len(cs)} cells, {k} not stated, "
                     f"dev {sp['dev']} / test {sp['test']}")
    return "\n".join(lines)


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "cells.jsonl"
    cells = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    papers = check_written.corpus()
    splits = {s: check_written.split_papers(s) for s in ("train", "dev", "test")}
    found = problems(cells, papers, splits)
    for p in found:
        print(p)
    print(counts(cells))
    print(f"{len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
