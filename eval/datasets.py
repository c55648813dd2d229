"""The evaluation datasets: loading and validation, with errors that name the file, line and field.

Three named datasets, each a question set plus the corpus it is asked against:
    seeds     eval/datasets/seeds.jsonl on the built-in "seeds" corpus (90 papers)
    icml2024  the same questions on the built-in "icml2024" corpus (2,634 papers)
    scifact   BEIR SciFact test claims and qrels on eval/datasets/scifact/corpus.jsonl
A path to a JSONL file in the seeds format is a dataset too (its corpus is given separately).

Question fields (seeds format), see eval/datasets/README.md:
    id, question, type, gold (list of paper ids), answerable   required
    reference_answer, key_facts, near_paper                     optional
Example error: "seeds.jsonl:12: 'gold' is missing. Please add 'gold' (list of the paper ids that
answer the question, [] if none) to this record."
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.ingest.readers import json_records
from rag.errors import InputError

HERE = Path(__file__).resolve().parent / "datasets"
SEEDS = HERE / "seeds.jsonl"
SCIFACT = HERE / "scifact"
TYPES = ("fact", "paraphrase", "title", "multi", "list", "author", "near_miss", "offtopic",
         "claim")
BANK_SPLITS = ("train", "dev", "test")  # icml2024-<split>.jsonl: the question bank, by paper
REQUIRED = {
    "id": (str, "a unique question id"),
    "question": (str, "the user question"),
    "type": (str, f"one of {', '.join(TYPES)}"),
    "gold": (list, "list of the paper ids that answer the question, [] if none"),
    "answerable": (bool, "true when gold is not empty"),
}
OPTIONAL = {
    "reference_answer": (str, ""),
    "key_facts": (list, []),
    "near_paper": ((str, type(None)), None),
    "stress": (bool, False),  # a near miss asking for a number or name the abstract lacks
    "person": (str, ""),  # the author an author question is about
    "topic": (str, ""),
    "variant_of": (str, ""),  # the plain question a noisy list question rephrases
}


class DatasetError(InputError):
    """A dataset file is missing or malformed; the message names the file, line and field."""


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    type: str
    gold: tuple[str, ...]
    answerable: bool
    reference_answer: str = ""
    key_facts: tuple[str, ...] = ()
    near_paper: str | None = None
    grades: dict[str, float] = field(default_factory=dict)  # graded gold; empty: all 1
    stress: bool = False
    person: str = ""
    variant_of: str = ""

    def judgements(self) -> dict[str, float]:
        return dict(self.grades) if self.grades else {g: 1.0 for g in self.gold}


@dataclass(frozen=True)
class Dataset:
    name: str
    corpus: str  # what Settings.corpus is set to: a built-in name or a path
    questions: list[Question]
    answers: bool = True  # whether generation is evaluated (SciFact claims are not questions)
    notes: tuple[str, ...] = ()  # caveats printed with every report


def _read_jsonl(path: Path) -> list[tuple[int, dict]]:
    if not path.is_file():
        raise DatasetError(f"{path}: no such dataset file")
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    out = list(json_records(text, path.name, DatasetError))
    if not out:
        raise DatasetError(f"{path}: the dataset is empty")
    return out


def question_from(rec: dict[str, Any], where: str) -> Question:
    """One validated question; `where` ("file:line") prefixes every error message."""
    for name, (kind, what) in REQUIRED.items():
        if name not in rec:
            raise DatasetError(f"{where}: {name!r} is missing. Please add {name!r} ({what}) to "
                               f"this record.")
        if not isinstance(rec[name], kind):
            raise DatasetError(f"{where}: {name!r} must be a {kind.__name__} ({what}), got "
                               f"{rec[name]!r}")
    for name, (kind, _) in OPTIONAL.items():
        if name in rec and not isinstance(rec[name], kind):
            raise DatasetError(f"{where}: {name!r} has the wrong type: {rec[name]!r}")
    if not rec["id"].strip() or not rec["question"].strip():
        raise DatasetError(f"{where}: 'id' and 'question' must not be empty")
    if rec["type"] not in TYPES:
        raise DatasetError(f"{where}: unknown type {rec['type']!r}; use one of {', '.join(TYPES)}")
    for name in ("gold", "key_facts"):
        if not all(isinstance(x, str) and x.strip() for x in rec.get(name, [])):
            raise DatasetError(f"{where}: every entry of {name!r} must be a non-empty string")
    if rec["answerable"] != bool(rec["gold"]):
        raise DatasetError(f"{where}: 'answerable' is {rec['answerable']} but 'gold' has "
                           f"{len(rec['gold'])} paper(s); answerable means gold is not empty")
    return Question(id=rec["id"], question=rec["question"], type=rec["type"],
                    gold=tuple(rec["gold"]), answerable=rec["answerable"],
                    reference_answer=rec.get("reference_answer", ""),
                    key_facts=tuple(rec.get("key_facts", [])), near_paper=rec.get("near_paper"),
                    stress=rec.get("stress", False), person=rec.get("person", ""),
                    variant_of=rec.get("variant_of", ""))


def load_questions(path: Path | str = SEEDS) -> list[Question]:
    """The questions of a seeds-format JSONL file, validated; ids must be unique."""
    path = Path(path)
    questions, seen = [], {}
    for lineno, rec in _read_jsonl(path):
        q = question_from(rec, f"{path.name}:{lineno}")
        if q.id in seen:
            raise DatasetError(f"{path.name}:{lineno}: duplicate id {q.id!r} (first on line "
                               f"{seen[q.id]})")
        seen[q.id] = lineno
        questions.append(q)
    return questions


def load_qrels(path: Path) -> dict[str, dict[str, float]]:
    """BEIR qrels (query-id, corpus-id, score; tab-separated, with a header row)."""
    if not path.is_file():
        raise DatasetError(f"{path}: no such qrels file")
    qrels: dict[str, dict[str, float]] = {}
    with path.open(encoding="utf-8", newline="") as f:
        rows = csv.reader(f, delimiter="\t")
        header = next(rows, None)
        if header != ["query-id", "corpus-id", "score"]:
            raise DatasetError(f"{path.name}:1: expected the header query-id, corpus-id, score; "
                               f"got {header}")
        for lineno, row in enumerate(rows, start=2):
            if len(row) != 3:
                raise DatasetError(f"{path.name}:{lineno}: expected 3 tab-separated fields "
                                   f"(query-id, corpus-id, score), got {len(row)}")
            try:
                score = float(row[2])
            except ValueError:
                raise DatasetError(f"{path.name}:{lineno}: 'score' must be a number, got "
                                   f"{row[2]!r}") from None
            qrels.setdefault(row[0], {})[row[1]] = score
    return qrels


def load_scifact(folder: Path | str = SCIFACT, check_corpus: bool = True) -> list[Question]:
    """SciFact test claims as questions whose gold papers are their qrels."""
    folder = Path(folder)
    qrels = load_qrels(folder / "qrels" / "test.tsv")
    claims = {}
    for lineno, rec in _read_jsonl(folder / "queries_test.jsonl"):
        for name in ("_id", "text"):
            if not isinstance(rec.get(name), str) or not rec[name].strip():
                raise DatasetError(f"queries_test.jsonl:{lineno}: {name!r} is missing. Please "
                                   f"add {name!r} to this record.")
        claims[rec["_id"]] = rec["text"]
    missing = sorted(set(qrels) - set(claims))
    if missing:
        raise DatasetError(f"qrels/test.tsv: judgements for unknown query ids {missing[:5]}")
    if check_corpus:
        ids = {rec.get("_id") for _, rec in _read_jsonl(folder / "corpus.jsonl")}
        unknown = sorted({d for rel in qrels.values() for d in rel} - ids)
        if unknown:
            raise DatasetError(f"qrels/test.tsv: corpus ids not in corpus.jsonl: {unknown[:5]}")
    return [Question(id=qid, question=claims[qid], type="claim",
                     gold=tuple(d for d, g in rel.items() if g > 0), answerable=True,
                     grades=dict(rel))
            for qid, rel in sorted(qrels.items(), key=lambda kv: int(kv[0]))]


def load_dataset(name: str, corpus: str | None = None) -> Dataset:
    """A named dataset (seeds, icml2024, scifact) or a seeds-format JSONL file on `corpus`."""
    if name == "seeds":
        return Dataset("seeds", corpus or "seeds", load_questions(SEEDS))
    if name == "icml2024":
        return Dataset("icml2024", corpus or "icml2024", load_questions(SEEDS), notes=(
            "Gold papers and unanswerable labels were judged against the 90 seed papers only: "
            "other ICML 2024 papers may also answer a question, so citation gold precision and "
            "the abstention numbers are lower bounds here; Recall@k is exact.",))
    split = name.removeprefix("icml2024-")
    if name.startswith("icml2024-") and split in BANK_SPLITS:
        return Dataset(name, corpus or "icml2024", load_questions(HERE / f"{name}.jsonl"), notes=(
            "The ICML 2024 question bank (eval/datasets/bank), split once by paper: fit on "
            "train, choose on dev, report test.",))
    if name == "scifact":
        return Dataset("scifact", corpus or str(SCIFACT / "corpus.jsonl"), load_scifact(),
                       answers=False, notes=(
                           "BEIR SciFact test split (CC BY-NC 2.0, non-commercial use only). "
                           "Claims are not questions, so only retrieval is evaluated.",))
    path = Path(name)
    if path.suffix == ".jsonl" and path.exists():
        if not corpus:
            raise DatasetError(f"{name}: give the corpus its questions are about with --corpus")
        return Dataset(path.stem, corpus, load_questions(path))
    raise DatasetError(f"unknown dataset {name!r}: use seeds, icml2024, icml2024-train, "
                       f"icml2024-dev, icml2024-test, scifact, cells-dev, cells-test, "
                       f"lists-train, lists-dev, lists-test, or the path of a questions .jsonl "
                       f"file (with --corpus)")
