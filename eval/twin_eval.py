"""`rag eval`'s twins and question-only baseline, beside the run's own abstention figures.

Twins (eval/twins.py): each answerable question with key facts and one gold paper, asked again
of a copy of the dataset's corpus in which that paper's abstract lost the sentences stating the
answer. One twin corpus per dataset, written as JSONL under `$RAG_HOME/eval-twins/` and indexed
like any corpus (incrementally, so it is built once and then reused; the unchanged papers come
from the shipped embedding cache). Every answering configuration of the run asks every twin,
with its own row cache; a twin is caught when the answer abstains (which includes "the abstract
of [1] does not state ...") or says the paper does not state it. Per configuration the summary
gains `twin_abstention` (the share caught) and `near_miss_abstention`, and the run's meta the
question-only baseline (eval/baseline.py) for each abstention figure.

Example: bank-a-005 "What does SuDA align between the simulated and real domains?" becomes
bank-a-005~twin, the same words asked of SuDA's abstract without the sentence "... which aligns
the supports of the predictive functions ...": right answers abstain or say it is not stated.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Any, Sequence

from rag.settings import Settings

from .configs import Config
from .datasets import Dataset, Question
from .metrics import mean
from .metrics.intervals import fmt, interval
from .twins import corpus_lines, twin_id, twins_of

# An answer that says the paper lacks the fact (an LLM may word it so without abstaining).
NOT_STATED = re.compile(r"\b(?:does|do|did)(?: not|n't) (?:explicitly )?(?:state|say|mention|"
                        r"specify|report|give|provide|disclose|include)\b|\bnot (?:stated|"
                        r"mentioned|specified|reported|given)\b", re.I)


def caught(row: dict[str, Any]) -> bool:
    """Whether a twin's answer abstained or said the paper does not state the answer."""
    return bool(row.get("abstained")) or bool(NOT_STATED.search(row.get("answer") or ""))


def twin_questions(dataset: Dataset) -> tuple[list[Question], dict[str, str]]:
    """The twins of a dataset's questions as unanswerable questions (type "twin", the twin's
    paper as `near_paper`), and the edited abstracts by paper id."""
    from rag.ingest.corpus import load_corpus

    papers = {p.id: p for p in load_corpus(dataset.corpus).papers}
    questions, edited = [], {}
    for q, paper, twin in twins_of(dataset.questions, papers):
        if paper.id in edited:  # one abstract per paper in the one corpus copy
            continue
        edited[paper.id] = twin.abstract
        questions.append(Question(id=twin_id(q.id), question=q.question, type="twin", gold=(),
                                  answerable=False, key_facts=q.key_facts,
                                  near_paper=paper.id))
    return questions, edited


def write_twin_corpus(dataset: Dataset, edited: dict[str, str], home: Path) -> str:
    """The twin corpus of a dataset as a JSONL file under `home`/eval-twins (rewritten only
    when its content changes); its path, which is the corpus setting to index and ask."""
    from rag.ingest.corpus import corpus_key, load_corpus

    path = home / "eval-twins" / f"{dataset.name}-{corpus_key(dataset.corpus)}-twins.jsonl"
    text = "\n".join(corpus_lines(load_corpus(dataset.corpus).papers, edited)) + "\n"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)  # another run reading it sees the old file or the new one
    return str(path)


def run_twins(result, base: Settings, run, ensure_index, use_cache: bool = True,
              progress: bool = True, index_progress: bool = True) -> list[Question]:
    """Ask every twin of `result.dataset` under each answering configuration of `result` and
    add `twin_abstention` to their summaries; the twin rows go to `result.twins`. Returns the
    twins asked ([] when the dataset has none or nothing answers). `run` and `ensure_index`
    are eval/run.py's (passed in, so that run.py -> twin_eval.py is the only direction)."""

    configs = [c for c in result.configs if c.with_answer and not c.baseline]
    if not configs or not result.dataset.answers:
        return []
    questions, edited = twin_questions(result.dataset)
    if not questions:
        return []
    corpus = write_twin_corpus(result.dataset, edited, base.home_path)
    ensure_index(base.replace(corpus=corpus), progress=index_progress)
    twins = Dataset(f"{result.dataset.name}-twins", corpus, questions)
    moved = [dataclasses.replace(c, settings=c.settings.replace(corpus=corpus))
             for c in configs]
    asked = run(twins, moved, use_cache=use_cache, progress=progress)
    for config in configs:
        rows = asked.rows[config.name]
        for r in rows:
            r["metrics"]["twin_caught"] = float(caught(r))
            r["paper"] = next(q.near_paper for q in questions if q.id == r["id"])
        summary = result.summaries[config.name]
        summary["metrics"]["twin_abstention"] = mean(r["metrics"]["twin_caught"] for r in rows)
        summary["counts"]["twin_abstention"] = len(rows)
        summary.setdefault("intervals", {})["twin_abstention"] = interval(
            [r["metrics"]["twin_caught"] for r in rows])
        summary["twins"] = {
            "questions": len(rows), "caught": sum(caught(r) for r in rows),
            "caught_citing_paper": sum(caught(r) and r["paper"] in
                                       {c["paper_id"] for c in r.get("citations", [])}
                                       for r in rows),
            "corpus": corpus, "index_generation": asked.summaries[config.name]
            ["index_generation"], "cache_key": asked.summaries[config.name]["cache_key"]}
        result.twins[config.name] = rows
    return questions


def add_baseline(result, twins: Sequence[Question] = ()) -> None:
    """The question-only baseline's AUROC beside each abstention figure, in `result.meta`."""
    from . import baseline

    questions = result.dataset.questions
    if not result.dataset.answers or (all(q.answerable for q in questions) and not twins):
        return
    fitted = baseline.fit_on_train()
    pairs = [(t.question, t.question) for t in twins]
    figures = baseline.figures(fitted, questions, pairs)
    note = ("in-sample: fitted on these questions" if result.dataset.name == fitted.fitted_on
            else f"fitted on {fitted.fitted_on}")
    result.meta["question_only"] = {"figures": figures, "note": note}


def abstention_table(result) -> tuple[list[str], list[list[str]]]:
    """Each abstention figure of each configuration beside the question-only baseline's AUROC
    (the share a gate on the question's wording alone could earn; 0.5: none)."""
    base = result.meta.get("question_only", {}).get("figures", {})
    rows = []
    for name, s in result.summaries.items():
        m, c, ci = s["metrics"], s["counts"], s.get("intervals", {})
        if "false_abstention_rate" not in m and "twin_abstention" not in m:
            continue
        a = s.get("abstention", {})
        for label, metric, key, n in (
                ("unanswerable (AbstR)", "abstention_recall", "unanswerable",
                 a.get("unanswerable")),
                ("near misses", "near_miss_abstention", "near_miss",
                 c.get("near_miss_abstention")),
                ("twins", "twin_abstention", "twins", c.get("twin_abstention")),
                ("answerable (FalseAbst)", "false_abstention_rate", "unanswerable",
                 a.get("answerable"))):
            if metric in m:
                auroc = base.get(key, {}).get("auroc")
                rows.append([name, label, str(n or ""), fmt(m[metric], ci.get(metric)),
                             "–" if auroc is None else f"{auroc:.3f}"])
        para = s.get("by_type", {}).get("paraphrase", {})
        for label, metric, value, n in (
                ("key facts (all)", "key_fact_recall", m.get("key_fact_recall"),
                 c.get("key_fact_recall")),
                ("key facts (paraphrases)", "paraphrase_key_fact_recall",
                 para.get("key_fact_recall"), para.get("n"))):
            if value is not None:
                rows.append([name, label, str(n or ""), fmt(value, ci.get(metric)), "–"])
    return ["configuration", "figure", "n", "rate [95% CI]", "question-only AUROC"], rows
