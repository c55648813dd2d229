"""The eval harness as CI uses it: the seed set under the default settings must meet the
committed thresholds; plus the gate's rules, the grid, scoring, reports and the row cache."""

from __future__ import annotations

import dataclasses
import json

import pytest

from rag.eval import gate
from rag.eval.configs import make_configs, parse_grid
from rag.eval.datasets import Question, load_dataset
from rag.eval.observe import score
from rag.errors import ConfigError
from rag.settings import Settings


# -- the gate ------------------------------------------------------------------------------


def test_the_seed_set_meets_the_committed_thresholds(seed_settings):
    """The CI gate: default settings, extractive generator, the session's seed index."""
    from rag.eval.run import run

    dataset = load_dataset("seeds")
    (config,) = make_configs(seed_settings, [{}], baselines=False)
    result = run(dataset, [config], use_cache=False, progress=False)
    summary = result.summaries[config.name]
    assert summary["generator"] == "extractive"
    assert summary["questions"] == len(dataset.questions)
    failures = gate.check(summary["metrics"], gate.load_thresholds("seeds"))
    assert not failures, "\n".join(failures)


@pytest.mark.slow
def test_the_held_out_test_split_meets_its_thresholds_on_the_full_corpus(full_settings):
    """The question bank's test split (never used for fitting) on the whole ICML 2024 corpus,
    indexed from the shipped embedding cache."""
    from rag.eval.run import run

    dataset = load_dataset("icml2024-test")
    # the questions its thresholds were set on; the ones added on the same papers (bank-w-*,
    # issue 28) are reported by `rag eval --dataset icml2024-test`, with intervals
    dataset = dataclasses.replace(dataset, questions=tuple(
        q for q in dataset.questions if not q.id.startswith("bank-w-")))
    assert len(dataset.questions) == 154
    (config,) = make_configs(full_settings, [{}], baselines=False)
    summary = run(dataset, [config], use_cache=False, progress=False).summaries[config.name]
    failures = gate.check(summary["metrics"], gate.load_thresholds("icml2024-test"))
    assert not failures, "\n".join(failures)


def test_the_gate_reports_each_metric_out_of_bounds_and_each_one_missing():
    thresholds = {"recall@5": {"min": 0.95}, "false_abstention_rate": {"max": 0.05},
                  "cites_gold": {"min": 0.9}}
    failures = gate.check({"recall@5": 0.9, "false_abstention_rate": 0.1}, thresholds)
    assert failures == ["recall@5 = 0.900 is below its threshold 0.950",
                        "false_abstention_rate = 0.100 is above its threshold 0.050",
                        "cites_gold was not measured (the gate needs it)"]
    assert gate.check({"recall@5": 0.95, "false_abstention_rate": 0.05,
                       "cites_gold": 1.0}, thresholds) == []


def test_committed_thresholds_sit_at_or_under_what_was_measured():
    data = json.loads(gate.THRESHOLDS.read_text())
    seeds = data["datasets"]["seeds"]
    assert {"recall@5", "key_fact_recall", "cites_gold", "abstention_recall",
            "false_abstention_rate"} <= set(seeds["thresholds"])
    # the pipeline's own support rule never gates it (it is 1.0 by construction)
    assert not {"support_rate", "citation_precision", "citation_recall"} & set(
        seeds["thresholds"])
    for name, bound in seeds["thresholds"].items():
        measured = seeds["measured"][name]
        if "min" in bound:
            assert bound["min"] <= measured, name
        if "max" in bound:
            assert bound["max"] >= measured, name


def test_a_dataset_without_thresholds_is_a_config_error():
    with pytest.raises(ConfigError, match="no thresholds for dataset 'nope'"):
        gate.load_thresholds("nope")


# -- configurations --------------------------------------------------------------------------


def test_the_grid_is_the_cartesian_product_in_the_order_given():
    assert parse_grid(["retriever=bm25,hybrid", "k=3,5"]) == [
        {"retriever": "bm25", "k": "3"}, {"retriever": "bm25", "k": "5"},
        {"retriever": "hybrid", "k": "3"}, {"retriever": "hybrid", "k": "5"}]
    assert parse_grid([]) == [{}]


@pytest.mark.parametrize("tokens, message", [
    (["retriever"], "write name=value1,value2"),
    (["k=3", "k=5"], "names k twice"),
    (["chunk_tokens=100,200"], "cannot vary chunk_tokens"),
])
def test_bad_grids_are_explained(tokens, message):
    with pytest.raises(ConfigError, match=message):
        parse_grid(tokens)


def test_every_run_carries_bm25_and_dense_baselines_measured_alongside():
    base = Settings.load(env={})
    names = [c.name for c in make_configs(base, parse_grid(["k=3,5"]))]
    assert names == ["hybrid k=3", "hybrid k=5", "bm25 (baseline)", "dense (baseline)"]
    baselines = [c for c in make_configs(base, [{}]) if c.baseline]
    assert [(c.settings.retriever, c.with_answer) for c in baselines] == [
        ("bm25", False), ("dense", False)]
    # A grid over the retrievers is its own baseline.
    grid = make_configs(base, parse_grid(["retriever=bm25,dense,hybrid", "k=5,10"]))
    assert not any(c.baseline for c in grid) and len(grid) == 6


def test_invalid_grid_values_fail_before_any_work():
    with pytest.raises(ConfigError, match="unknown retriever 'splade'"):
        make_configs(Settings.load(env={}), parse_grid(["retriever=splade"]))
    with pytest.raises(ConfigError, match="k must be between"):
        make_configs(Settings.load(env={}), parse_grid(["k=0"]))


# -- scoring a record ------------------------------------------------------------------------

Q = Question(id="q", question="Which kernels avoid mean reversion?", type="fact",
             gold=("p1",), answerable=True, key_facts=("non-positive kernels", "infinite variance"))


def record(**changes):
    base = {"ranked": ["p2", "p1", "p3"], "relevance": 0.6, "timings_ms": {"total": 5.0},
            "answer": "Non-positive kernels give stationary processes [1]. Cats purr [2].",
            "abstained": False, "support_rate": 0.5,
            "citations": [
                {"n": 1, "paper_id": "p1", "title": "Improper GPs",
                 "quote": "We show that non-positive kernels give stationary processes."},
                {"n": 2, "paper_id": "p2", "title": "Diffusion models",
                 "quote": "We train diffusion models on images."}],
            "sentences": [{"text": "Non-positive kernels give stationary processes [1].",
                           "citations": [1], "supported": True},
                          {"text": "Cats purr [2].", "citations": [2], "supported": False}]}
    return base | changes


def test_a_record_is_scored_with_the_pure_metrics():
    m = score(record(), Q, k=5)
    assert m["recall@1"] == 0.0 and m["recall@3"] == 1.0 and m["mrr@10"] == 0.5
    assert m["key_fact_recall"] == 0.5
    assert m["gold_citation_precision"] == 0.5  # [1] is gold, [2] is not
    assert m["cites_gold"] == 1.0
    assert "support_rate" not in m and "citation_recall" not in m  # the pipeline's own rule


def test_a_citation_of_a_non_gold_paper_is_not_gold_whatever_it_quotes():
    rec = record(ranked=["p9"], citations=[{"n": 1, "paper_id": "p9", "title": "Improper GPs",
                                            "quote": "Non-positive kernels give stationary "
                                                     "processes."}],
                 sentences=[{"text": "Non-positive kernels give stationary processes [1].",
                             "citations": [1], "supported": True}])
    m = score(rec, Q, k=5)
    assert m["gold_citation_precision"] == 0.0
    assert m["cites_gold"] == 0.0 and m["recall@5"] == 0.0


def test_an_abstention_on_an_answerable_question_scores_no_key_facts_and_no_citations():
    m = score(record(abstained=True, answer="The indexed abstracts don't answer this.",
                     citations=[], sentences=[], support_rate=None), Q, k=5)
    assert m["key_fact_recall"] == 0.0
    assert m["gold_citation_precision"] is None and m["cites_gold"] == 0.0


def test_a_not_stated_answer_that_names_the_gold_paper_still_cites_it():
    m = score(record(abstained=True, answer="The abstract of *Improper GPs* [1] does not state "
                     "the learning rate.", citations=[{"n": 1, "paper_id": "p1", "title": "Improper "
                     "GPs", "quote": ""}], sentences=[]), Q, k=5)
    assert m["key_fact_recall"] == 0.0 and m["cites_gold"] == 1.0


def test_unanswerable_questions_get_no_retrieval_or_citation_scores():
    q = Question(id="u", question="Who won the 1998 World Cup?", type="offtopic", gold=(),
                 answerable=False)
    m = score(record(), q, k=5)
    assert all(m[name] is None for name in ("recall@5", "ndcg@10", "key_fact_recall",
                                            "gold_citation_precision", "cites_gold"))


# -- a whole run through the CLI: files, report, cache ----------------------------------------


def test_rag_eval_writes_rows_summary_markdown_and_plots_then_reuses_the_cache(
        copy_of_seed_home, tmp_path, monkeypatch, capsys):
    from rag.ui.cli import main

    monkeypatch.setenv("RAG_HOME", str(copy_of_seed_home))
    out = tmp_path / "results"
    argv = ["eval", "--dataset", "seeds", "--types", "fact,offtopic", "--limit", "6",
            "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "hybrid k=5" in printed and "bm25 (baseline)" in printed
    rows = [json.loads(line) for line in (out / "rows.jsonl").read_text().splitlines()]
    assert len(rows) == 6 * 3  # three configurations: hybrid, and the two baselines
    summary = json.loads((out / "summary.json").read_text())
    meta = summary["meta"]
    assert len(meta["git_revision"]) in (0, 40) and len(meta["corpus_hash"]) == 16
    assert summary["configurations"]["hybrid k=5"]["settings"]["retriever"] == "hybrid"
    md = (out / "summary.md").read_text()
    assert "![metrics per configuration](metrics.png)" in md
    assert (out / "metrics.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "latency.png").read_bytes()[:4] == b"\x89PNG"

    assert main(argv) == 0  # same questions, settings and index: every record from cache
    again = json.loads((out / "summary.json").read_text())["configurations"]
    assert all(c["cached"] == 6 for c in again.values())
    assert again["hybrid k=5"]["metrics"] == summary["configurations"]["hybrid k=5"]["metrics"]


def test_rag_eval_gate_exits_nonzero_below_a_threshold(copy_of_seed_home, tmp_path,
                                                         monkeypatch, capsys):
    from rag.ui.cli import main

    thresholds = tmp_path / "thresholds.json"
    thresholds.write_text(json.dumps({"datasets": {"seeds": {"thresholds": {
        "recall@5": {"min": 1.01}}}}}))
    monkeypatch.setattr(gate, "THRESHOLDS", thresholds)
    monkeypatch.setenv("RAG_HOME", str(copy_of_seed_home))
    argv = ["eval", "--dataset", "seeds", "--limit", "3", "--no-baselines", "--no-plots",
            "--retrieval-only", "--gate", "--out", str(tmp_path / "r")]
    assert main(argv) == 1
    assert "recall@5 = 1.000 is below its threshold 1.010" in capsys.readouterr().err


# -- the optional LLM judge -------------------------------------------------------------------


def test_the_judge_is_skipped_with_a_reason_when_no_llm_is_configured():
    from rag.eval.judge import Judge

    judge = Judge(Settings.load(env={}))
    assert not judge.available
    assert "OPENAI_BASE_URL" in judge.reason
    assert judge("q", "reference", "answer") is None


def test_judge_verdicts_are_parsed_from_the_first_word_that_decides():
    from rag.eval.judge import parse_verdict

    assert parse_verdict("CORRECT. It names both kernels.") is True
    assert parse_verdict("Incorrect: it misses the benchmark size.") is False
    assert parse_verdict("I cannot tell.") is None
