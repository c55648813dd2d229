"""Twins (eval/twins.py): an answerable question against its abstract without the answer; the
question-only baseline (eval/baseline.py); and both reported by `rag eval`."""

from __future__ import annotations

import pytest

from rag.eval.twins import contains_fact, make_twin, normalise, twin_rows

ABSTRACT = ("We present Spider, a unified model.  It handles eight different tasks,\n"
            "including 4 natural scenes. New tasks need fine-tuning of less than 1% of the "
            "parameters. It runs in 2018 hardware budgets at 0.8 seconds.")
TITLE = "Spider: A Unified Context-Dependent Concept Segmentation Model"


# -- making a twin ---------------------------------------------------------------------------


def test_a_twin_loses_exactly_the_sentences_that_state_a_key_fact_and_keeps_the_rest():
    twin = make_twin(TITLE, ABSTRACT, ["8 different", "less than 1%"])
    assert twin is not None
    assert twin.removed == ("It handles eight different tasks,\nincluding 4 natural scenes.",
                            "New tasks need fine-tuning of less than 1% of the parameters.")
    assert twin.kept == ("We present Spider, a unified model.",
                         "It runs in 2018 hardware budgets at 0.8 seconds.")
    # the kept sentences byte for byte, each with the whitespace that stood before it
    assert twin.abstract == ("We present Spider, a unified model. It runs in 2018 hardware "
                             "budgets at 0.8 seconds.")
    for sentence in twin.kept:
        assert sentence in ABSTRACT and sentence in twin.abstract
    assert not contains_fact(twin.abstract, ["8 different", "less than 1%"])


def test_the_first_sentence_removed_leaves_no_leading_space():
    twin = make_twin(TITLE, ABSTRACT, ["a unified model"])
    assert twin is not None and twin.abstract.startswith("It handles eight different tasks,\n")


def test_a_twin_is_dropped_when_a_key_fact_survives_in_the_title_or_another_sentence():
    assert make_twin(TITLE, ABSTRACT, ["Context-Dependent"]) is None  # in the title
    text = "We use 8 GPUs. Training takes a day. Inference also needs 8 GPUs, not one."
    # every sentence holding the fact goes, so a twin keeps none of it ...
    twin = make_twin("A title", text, ["8 GPUs"])
    assert twin is not None and twin.abstract == "Training takes a day."
    # ... but a fact split across two sentences is still in the abstract: no twin
    assert make_twin("A title", "It uses eight. GPUs are fast. Done.", ["eight. GPUs"]) is None
    # nothing removed (the fact is not there) or nothing left: no twin either
    assert make_twin("A title", text, ["TPUs"]) is None
    assert make_twin("A title", "We use 8 GPUs.", ["8 GPUs"]) is None


def test_facts_match_across_case_whitespace_dashes_and_number_words():
    assert normalise("Eight  Different\u00a0Tasks") == "8 different tasks"
    assert contains_fact("errors drop by 34\u201372%", ["34-72%"])
    assert contains_fact("a 15.4\u00d7 speed-up", ["15.4x"])
    assert contains_fact("TWELVE out of 26", ["12 out of 26"])
    # a number matches only at a number's edge
    assert not contains_fact("since 2018 and at 0.8", ["8"])
    assert contains_fact("with 8 heads", ["8"]) and contains_fact("8.", ["8"])


# -- the bank's twins --------------------------------------------------------------------------


@pytest.mark.parametrize("split", ["dev", "test"])
def test_twin_rows_of_a_split_are_honest_twins(split):
    from rag.eval.datasets import load_dataset

    rows = twin_rows(split)
    questions = {q.id: q for q in load_dataset(f"icml2024-{split}").questions}
    assert len(rows) >= 30
    for r in rows:
        q = questions[r["question_id"]]
        assert r["question"] == q.question and r["paper_id"] == q.gold[0]
        assert r["removed"] and r["kept"]
        assert not contains_fact(r["abstract"] + " " + r["title"], q.key_facts)
        assert all(contains_fact(s, q.key_facts) for s in r["removed"])
        assert all(s in r["original"] for s in r["removed"] + r["kept"])
        assert len(r["abstract"]) < len(r["original"])


# -- the question-only baseline --------------------------------------------------------------

TRAIN = [("What does the Genie paper propose?", True), ("What method does SuDA introduce?", True),
         ("What does Spider segment?", True), ("What problem does Chunked-TD address?", True),
         ("What GPU was used to train Genie?", False), ("What learning rate did SuDA use?", False),
         ("Which GPU trained Spider?", False), ("What learning rate does Chunked-TD use?", False)]


def test_the_question_only_baseline_separates_by_wording_and_cannot_separate_twins():
    from types import SimpleNamespace as Q

    from rag.eval import baseline

    fitted = baseline.fit([q for q, _ in TRAIN], [a for _, a in TRAIN], "toy")
    held_out = [Q(question="What does the WMDP paper propose?", answerable=True, type="fact"),
                Q(question="What method does Genie introduce?", answerable=True, type="fact"),
                Q(question="What GPU was used to train WMDP?", answerable=False,
                  type="near_miss"),
                Q(question="Who won the 1998 World Cup?", answerable=False, type="offtopic")]
    scores = fitted.score([q.question for q in held_out])
    assert scores[0] > 0.5 > scores[2]
    figures = baseline.figures(fitted, held_out,
                               [(q.question, q.question) for q in held_out[:2]])
    assert figures["near_miss"] == {"auroc": 1.0, "answerable": 2, "unanswerable": 1}
    assert figures["unanswerable"]["unanswerable"] == 2
    # the off-topic question shares no word with the training set: it scores in between
    assert figures["unanswerable"]["auroc"] == pytest.approx(
        sum((p > n) + 0.5 * (p == n) for p in scores[:2] for n in scores[2:]) / 4)
    assert figures["twins"] == {"auroc": 0.5, "answerable": 2, "unanswerable": 2}
    with pytest.raises(ValueError):
        baseline.fit(["a?", "b?"], [True, True])


def test_the_baseline_fitted_on_train_reads_the_bank_near_misses_by_wording():
    from rag.eval import baseline
    from rag.eval.datasets import load_dataset

    model, dev = baseline.fit_on_train(), load_dataset("icml2024-dev").questions
    first = [q for q in dev if not q.id.startswith("bank-w-")]  # the bank as first written
    assert baseline.figures(model, first)["near_miss"]["auroc"] > 0.85  # the trap twins avoid
    # the near misses written for issue 28 were worded like answerable questions: the whole
    # split's are harder to tell by wording alone
    assert baseline.figures(model, dev)["near_miss"]["auroc"] < \
        baseline.figures(model, first)["near_miss"]["auroc"]


# -- `rag eval` reports them -------------------------------------------------------------------


def test_rag_eval_reports_twin_abstention_beside_the_baseline_on_a_tiny_seed_run(
        copy_of_seed_home, tmp_path, monkeypatch, capsys):
    import argparse
    import json

    from rag.eval import run
    from rag.eval.datasets import load_questions

    picked = [q for q in load_questions() if q.type == "fact"][:4]
    picked += [q for q in load_questions() if q.type == "near_miss"][:2]
    lines = [json.dumps({"id": q.id, "question": q.question, "type": q.type, "gold": list(q.gold),
                         "answerable": q.answerable, "key_facts": list(q.key_facts),
                         "near_paper": q.near_paper}) for q in picked]
    questions = tmp_path / "tiny.jsonl"
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setenv("RAG_HOME", str(copy_of_seed_home))
    parser = argparse.ArgumentParser()
    run.add_arguments(parser)
    out = tmp_path / "out"
    args = parser.parse_args(["--dataset", str(questions), "--corpus", "seeds", "--no-baselines",
                              "--no-plots", "--out", str(out)])
    assert run.main(args) == 0
    printed = capsys.readouterr().out
    assert "Abstention beside the question-only baseline" in printed

    summary = json.loads((out / "summary.json").read_text())
    (config,) = summary["configurations"].values()
    twins = [json.loads(line) for line in (out / "twins.jsonl").read_text().splitlines()]
    assert len(twins) == config["counts"]["twin_abstention"] >= 3
    caught = sum(r["metrics"]["twin_caught"] for r in twins)
    assert config["metrics"]["twin_abstention"] == pytest.approx(caught / len(twins))
    assert config["counts"]["near_miss_abstention"] == 2
    figures = summary["meta"]["question_only"]["figures"]
    assert figures["twins"]["auroc"] == 0.5 and 0 <= figures["near_miss"]["auroc"] <= 1
    assert "| twins |" in (out / "summary.md").read_text()

    # each twin was asked of the twin corpus, whose index holds the edited abstract
    import rag
    from rag.settings import Settings

    corpus = config["twins"]["corpus"]
    indexed = {p.id: p.text for p in rag.papers(corpus, Settings.load(corpus=corpus))}
    for r in twins:
        assert r["id"].endswith("~twin") and r["paper"] in indexed
        original = next(q for q in picked if r["id"] == q.id + "~twin")
        assert not contains_fact(indexed[r["paper"]], original.key_facts)
