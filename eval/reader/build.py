"""The training data: every written row checked, filtered by retrieval, and given its twin.

    python -m rag.eval.reader build     # -> work/data.jsonl, and a count of what was dropped

A row (rows.py) is kept when it passes `rows.problems` (its span copied from its sentence)
and the current retriever (hybrid, the default settings, the whole ICML 2024 index in
work/home) finds its paper among the top 5 for its question: a question nobody could route
to its paper teaches the reader nothing about reading. Each kept answerable row gets its
twin: the same question against its abstract without the sentences that state the answer,
kept (`twin: true`) only when the span is then nowhere in the abstract or the title.

The output is deterministic for given rows and index, and its SHA-256 goes into the model's
manifest (`data_hash`).
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .papers import DATASETS, WORK, eligible
from .rows import problems

SOURCES = ("team", "local")
DATA = WORK / "data.jsonl"
TOP = 5


@dataclass
class Built:
    rows: list[dict]
    dropped: dict[str, int] = field(default_factory=dict)
    written: dict[str, int] = field(default_factory=dict)  # rows read, per writer kind

    @property
    def sha256(self) -> str:
        return hashlib.sha256(DATA.read_bytes()).hexdigest()


def written_rows(last_batch: int | None = None) -> list[dict]:
    """Every row of eval/datasets/reader/{team,local}/batch-NNN.jsonl (NNN up to `last_batch`
    when given), in path then line order."""
    out = []
    for source in SOURCES:
        for path in sorted((DATASETS / "reader" / source).glob("batch-*.jsonl")):
            if last_batch is not None and int(path.stem.split("-")[1]) > last_batch:
                continue
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    out.append(json.loads(line))
    return out


def twin_of(row: dict, paper: dict) -> list[str] | None:
    """The abstract without the answering sentences, or None when the span survives.

    Example: span "8 tasks", sentences ["A.", "It does 8 tasks.", "C."], answer [1] ->
    ["A.", "C."]; with "C." reading "Again 8 tasks." -> None.
    """
    gone = set(row["sentences"])
    rest = [s for i, s in enumerate(paper["sentences"]) if i not in gone]
    span = row["span"].lower()
    if any(span in s.lower() for s in rest) or span in paper["title"].lower():
        return None
    return rest


def _retriever(out=sys.stderr):
    """The hybrid retriever over the whole ICML 2024 index in work/home (built if missing)."""
    import rag
    from rag import factory
    from rag.settings import Settings

    settings = Settings.load(home=str(WORK / "home"), corpus="icml2024")
    if not (WORK / "home").exists() or not rag.papers(settings=settings):
        print("indexing ICML 2024 for the retrieval filter (about a minute)", file=out)
        rag.index_corpus("icml2024", settings)
    return factory.retriever(settings)


class _Found:
    """The top papers the retriever finds for a question, remembered in work/retrieved.jsonl
    (a question asked again, in this build or the next, is not retrieved again)."""

    PATH = WORK / "retrieved.jsonl"

    def __init__(self, out):
        self.out, self._retriever, self.asked = out, None, 0
        self.cache: dict[str, list[str]] = {}
        if self.PATH.exists():
            for line in self.PATH.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    r = json.loads(line)
                    self.cache[r["q"]] = r["top"]

    def __call__(self, question: str) -> list[str]:
        if question not in self.cache:
            self._retriever = self._retriever or _retriever(self.out)
            top = [p.paper_id for p in self._retriever.retrieve(question, TOP, 1)]
            self.cache[question] = top
            WORK.mkdir(parents=True, exist_ok=True)
            with self.PATH.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"q": question, "top": top}, ensure_ascii=False) + "\n")
            self.asked += 1
            if self.asked % 200 == 0:
                print(f"retrieved for {self.asked} questions", file=self.out, flush=True)
        return self.cache[question]


def build(out=sys.stderr, last_batch: int | None = None) -> Built:
    papers = {p["paper_id"]: p for p in eligible()}
    found = _Found(out)
    built = Built(rows=[])
    seen: set[tuple[str, str]] = set()
    for row in written_rows(last_batch):
        kind = row.get("writer", "?").split(":")[0]
        built.written[kind] = built.written.get(kind, 0) + 1
        reason = None
        paper = papers.get(row.get("paper_id"))
        if problems(row, paper):
            reason = "fails its checks"
        elif (row["paper_id"], row["question"].strip().lower()) in seen:
            reason = "a repeated question"
        elif row["paper_id"] not in found(row["question"]):
            reason = f"paper not in the retriever's top {TOP}"
        if reason:
            built.dropped[reason] = built.dropped.get(reason, 0) + 1
            continue
        seen.add((row["paper_id"], row["question"].strip().lower()))
        kept = dict(row)
        if row["answerable"]:
            kept["twin"] = twin_of(row, paper) is not None
        built.rows.append(kept)
    WORK.mkdir(parents=True, exist_ok=True)
    DATA.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n"
                            for r in built.rows), encoding="utf-8")
    return built


def load() -> list[dict]:
    """The rows of the last build."""
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line]
