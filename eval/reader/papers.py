"""Which papers the reader model may learn from, and their numbered sentences.

    python -m rag.eval.reader papers --batches 40    # writes eval/reader/work/batch-NNN.jsonl

A paper is eligible when no question of the bank's dev or test split names it (as gold or as
near-miss paper) and it is not one of the 90 seed papers (held-out evals ask about those). The
eligible papers are ordered by the SHA-1 of their id, so the order, and every batch, is the same
on every machine. Sentences are numbered with the index's own splitter
(`rag.ingest.chunking.split_sentences`), so a row's sentence numbers mean the same at run time.

Example row: {"paper_id": "icml2024-poster-1", "title": "...", "sentences": ["We ...", ...]}
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

from rag.ingest.chunking import split_sentences

HERE = Path(__file__).resolve().parent
WORK = HERE / "work"  # derived files, not committed
DATASETS = HERE.parent / "datasets"
HELD_OUT_SPLITS = ("dev", "test")


def corpus() -> list[dict]:
    """The ICML 2024 abstracts as shipped (seeds/icml2024.jsonl)."""
    text = resources.files("rag.seeds").joinpath("icml2024.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@lru_cache(maxsize=1)
def held_out() -> frozenset[str]:
    """Paper ids the reader must never train on: the bank's dev and test papers, the seeds."""
    out: set[str] = set()
    for split in HELD_OUT_SPLITS:
        for line in (DATASETS / f"icml2024-{split}.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                out.update(q.get("gold") or [])
                if q.get("near_paper"):
                    out.add(q["near_paper"])
    meta = resources.files("rag.seeds").joinpath("metadata.jsonl").read_text(encoding="utf-8")
    out.update(json.loads(line)["id"] for line in meta.splitlines() if line.strip())
    return frozenset(out)


def sentences(abstract: str) -> list[str]:
    return [abstract[s:e] for s, e in split_sentences(abstract)]


def eligible() -> list[dict]:
    """The training papers, in their fixed order, each with its numbered sentences."""
    banned = held_out()
    rows = [{"paper_id": p["id"], "title": p["title"], "sentences": sentences(p["abstract"])}
            for p in corpus() if p["id"] not in banned]
    return sorted(rows, key=lambda r: hashlib.sha1(r["paper_id"].encode()).hexdigest())


def write_batches(size: int) -> list[Path]:
    WORK.mkdir(parents=True, exist_ok=True)
    rows = eligible()
    paths = []
    for i in range(0, len(rows), size):
        path = WORK / f"batch-{i // size:03d}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n"
                                for r in rows[i : i + size]), encoding="utf-8")
        paths.append(path)
    return paths
