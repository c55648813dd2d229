"""The eval datasets load, are what their READMEs say, and malformed files fail with messages
that name the file, the line and the field."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from rag.eval.datasets import (SCIFACT, DatasetError, load_dataset, load_qrels, load_questions,
                           load_scifact)
from rag.ingest.corpus import load_corpus, normalise

GOOD = {"id": "q1", "question": "Which kernels avoid mean reversion?", "type": "fact",
        "gold": ["icml2024-poster-34936"], "answerable": True, "reference_answer": "…",
        "key_facts": ["non-positive kernels"], "near_paper": None}


def write_jsonl(path, records):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return path


# -- the seed question set ---------------------------------------------------------------


def test_the_seed_set_has_the_documented_questions():
    questions = load_questions()
    assert len(questions) >= 104
    counts = Counter(q.type for q in questions)
    assert counts["fact"] >= 48 and counts["paraphrase"] >= 21 and counts["list"] >= 12
    assert counts["near_miss"] >= 13 and counts["offtopic"] >= 10
    assert sum(q.answerable for q in questions) >= 81


def test_every_seed_gold_id_is_a_seed_paper_and_every_seed_paper_is_asked_about():
    papers = {p.id: p for p in load_corpus("seeds").papers}
    questions = load_questions()
    gold = {g for q in questions for g in q.gold}
    assert gold <= set(papers)
    assert gold == set(papers), "every one of the 90 seed papers appears in some gold list"
    near = {q.near_paper for q in questions if q.near_paper}
    assert near <= set(papers)


def test_every_key_fact_occurs_in_a_gold_abstract():
    papers = {p.id: p for p in load_corpus("seeds").papers}
    for q in load_questions():
        texts = [normalise(papers[g].text) for g in q.gold]
        for fact in q.key_facts:
            assert any(normalise(fact) in t for t in texts), (q.id, fact)


def test_unanswerable_seed_questions_have_no_gold_and_no_key_facts():
    for q in load_questions():
        if not q.answerable:
            assert q.gold == () and q.key_facts == () and q.type in ("near_miss", "offtopic")


# -- the ICML 2024 question bank ---------------------------------------------------------


def _bank() -> dict[str, list]:
    return {split: load_dataset(f"icml2024-{split}").questions
            for split in ("train", "dev", "test")}


def test_the_bank_has_what_the_answer_quality_issue_asks_for():
    questions = [q for split in _bank().values() for q in split]
    counts = Counter(q.type for q in questions)
    assert len(questions) >= 300
    assert sum(not q.answerable for q in questions) >= 100
    assert counts["near_miss"] >= 70 and counts["offtopic"] >= 20
    assert sum(q.stress for q in questions) >= 50  # numbers/names the abstract lacks
    assert counts["paraphrase"] and counts["title"] and counts["multi"] and counts["list"]
    assert counts["author"] + counts["title"] + sum(1 for q in questions if q.variant_of) >= 60


def test_the_bank_is_split_once_by_paper():
    from importlib import util
    from pathlib import Path

    spec = util.spec_from_file_location("split", Path(SCIFACT).parent / "bank" / "split.py")
    split = util.module_from_spec(spec)
    spec.loader.exec_module(split)
    seen: dict[str, str] = {}
    for name, questions in _bank().items():
        for q in questions:
            if q.type == "list":
                continue  # lists anchor on their topic, kept with their noisy variants
            key = split.anchor({"id": q.id, "type": q.type, "gold": list(q.gold),
                                "near_paper": q.near_paper, "person": q.person})
            assert split.split_of(key) == name, q.id
            assert seen.setdefault(key, name) == name, f"{key} is in {seen[key]} and {name}"
    assert {q.id for q in _bank()["test"]}.isdisjoint({q.id for q in _bank()["train"]})


def test_every_bank_gold_and_near_paper_is_in_the_corpus_and_key_facts_are_verbatim():
    papers = {p.id: p for p in load_corpus("icml2024").papers}
    for q in (q for split in _bank().values() for q in split):
        assert set(q.gold) <= set(papers), q.id
        assert q.near_paper is None or q.near_paper in papers, q.id
        texts = [normalise(papers[g].text) for g in q.gold]
        for fact in q.key_facts:
            assert any(normalise(fact) in t for t in texts), (q.id, fact)


def test_the_icml2024_dataset_asks_the_same_questions_of_the_full_corpus():
    seeds, full = load_dataset("seeds"), load_dataset("icml2024")
    assert [q.id for q in full.questions] == [q.id for q in seeds.questions]
    assert (seeds.corpus, full.corpus) == ("seeds", "icml2024")
    assert full.notes, "the icml2024 report must say that gold was judged on the seeds only"
    ids = {p.id for p in load_corpus("icml2024").papers}
    assert {g for q in full.questions for g in q.gold} <= ids


# -- validation messages -----------------------------------------------------------------


@pytest.mark.parametrize("field", ["id", "question", "type", "gold", "answerable"])
def test_a_missing_required_field_is_named_with_its_line(tmp_path, field):
    bad = {k: v for k, v in GOOD.items() if k != field}
    path = write_jsonl(tmp_path / "qs.jsonl", [GOOD | {"id": "q0"}, bad])
    with pytest.raises(DatasetError, match=rf"qs\.jsonl:2: '{field}' is missing\. Please add "
                                           rf"'{field}'"):
        load_questions(path)


def test_optional_fields_may_be_left_out(tmp_path):
    minimal = {k: GOOD[k] for k in ("id", "question", "type", "gold", "answerable")}
    (q,) = load_questions(write_jsonl(tmp_path / "qs.jsonl", [minimal]))
    assert q.key_facts == () and q.reference_answer == "" and q.near_paper is None


@pytest.mark.parametrize("change, message", [
    ({"gold": "icml2024-poster-1"}, r"qs\.jsonl:1: 'gold' must be a list"),
    ({"answerable": "yes"}, r"qs\.jsonl:1: 'answerable' must be a bool"),
    ({"type": "riddle"}, r"qs\.jsonl:1: unknown type 'riddle'"),
    ({"answerable": False}, r"qs\.jsonl:1: 'answerable' is False but 'gold' has 1 paper"),
    ({"key_facts": ["ok", ""]}, r"qs\.jsonl:1: every entry of 'key_facts'"),
    ({"question": "  "}, r"qs\.jsonl:1: 'id' and 'question' must not be empty"),
])
def test_wrong_values_are_explained(tmp_path, change, message):
    with pytest.raises(DatasetError, match=message):
        load_questions(write_jsonl(tmp_path / "qs.jsonl", [GOOD | change]))


def test_duplicate_ids_and_broken_lines_are_reported_by_line(tmp_path):
    with pytest.raises(DatasetError, match=r"qs\.jsonl:2: duplicate id 'q1' \(first on line 1\)"):
        load_questions(write_jsonl(tmp_path / "qs.jsonl", [GOOD, GOOD]))
    with pytest.raises(DatasetError, match=r"qs\.jsonl:2: not valid JSON"):
        load_questions(write_jsonl(tmp_path / "qs.jsonl", [GOOD, "{oops"]))
    with pytest.raises(DatasetError, match=r"qs\.jsonl:1: expected a JSON object"):
        load_questions(write_jsonl(tmp_path / "qs.jsonl", ["[1, 2]"]))


def test_a_dataset_error_is_a_rag_error_so_the_cli_prints_it():
    from rag.errors import RagError

    assert issubclass(DatasetError, RagError)


def test_unknown_datasets_say_what_exists(tmp_path):
    with pytest.raises(DatasetError, match="use seeds, icml2024, icml2024-train, icml2024-dev, icml2024-test, scifact"):
        load_dataset("squad")
    path = write_jsonl(tmp_path / "mine.jsonl", [GOOD])
    with pytest.raises(DatasetError, match="--corpus"):
        load_dataset(str(path))
    assert load_dataset(str(path), corpus="seeds").questions[0].id == "q1"


# -- SciFact -----------------------------------------------------------------------------


def test_scifact_is_the_beir_test_split():
    claims = load_scifact()
    assert len(claims) == 300
    assert sum(len(q.grades) for q in claims) == 339
    assert all(q.answerable and q.gold and q.type == "claim" for q in claims)
    assert len(load_corpus(str(SCIFACT / "corpus.jsonl")).papers) == 5183
    assert (SCIFACT / "README.md").read_text().count("CC BY-NC 2.0") >= 1


def test_the_scifact_dataset_is_retrieval_only_and_says_its_licence():
    ds = load_dataset("scifact")
    assert ds.answers is False
    assert any("CC BY-NC" in n for n in ds.notes)
    assert ds.corpus.endswith("scifact/corpus.jsonl")


def test_broken_qrels_name_the_line_and_field(tmp_path):
    path = tmp_path / "test.tsv"
    path.write_text("query-id\tcorpus-id\tscore\n1\t42\t1\n2\t43\n")
    with pytest.raises(DatasetError, match=r"test\.tsv:3: expected 3 tab-separated fields"):
        load_qrels(path)
    path.write_text("query-id\tcorpus-id\tscore\n1\t42\tone\n")
    with pytest.raises(DatasetError, match=r"test\.tsv:2: 'score' must be a number"):
        load_qrels(path)
    path.write_text("qid\tdoc\n")
    with pytest.raises(DatasetError, match=r"test\.tsv:1: expected the header"):
        load_qrels(path)


def test_a_scifact_claim_without_text_is_named(tmp_path):
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\t42\t1\n")
    write_jsonl(tmp_path / "queries_test.jsonl", [{"_id": "1"}])
    with pytest.raises(DatasetError, match=r"queries_test\.jsonl:1: 'text' is missing"):
        load_scifact(tmp_path, check_corpus=False)
