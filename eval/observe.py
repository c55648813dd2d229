"""One question under one configuration: what the system did (`observe`) and how well (`score`).

`observe` runs the real pipeline and records plain data: the ranked papers to depth
max(10, k), the gate's relevance score and, unless retrieval only, the `rag.ask` answer (text,
abstained, citations with their quotes, sentences with their support flags, timings). That
record is what the cache keeps. `score` turns a record and its question into metrics with the
pure functions of `rag.eval.metrics`, so changing a metric never needs a rerun.

Answers are graded only by what does not depend on the pipeline: key facts written by a
person, gold papers cited, abstentions right or wrong. The pipeline's own support check is
recorded (`support_rate`, per-sentence `supported`) for diagnosis, never scored.
"""

from __future__ import annotations

import time
from typing import Any

from rag import factory
from rag.retrieve.gate import relevance
from rag.pipeline import ask, prepare_question
from rag.settings import Settings

from .datasets import Question
from .metrics import answers as am
from .metrics import retrieval as rm

RECALL_AT = (1, 3, 5, 10)


def depth(settings: Settings) -> int:
    """How deep the ranking is recorded: enough for @10 metrics and for Recall@k."""
    return max(10, settings.k)


def observe(question: Question, settings: Settings, with_answer: bool = True) -> dict[str, Any]:
    """Run `question` through retrieval (and the whole pipeline) and record what happened."""
    text, _ = prepare_question(question.question, settings)
    t0 = time.perf_counter()
    passages = factory.retriever(settings).retrieve(text, depth(settings), settings.max_per_paper)
    rank_ms = (time.perf_counter() - t0) * 1000
    record: dict[str, Any] = {
        "ranked": [p.paper_id for p in passages],
        "relevance": relevance(passages[: settings.k]),
        "timings_ms": {"retrieve": rank_ms},
    }
    if not with_answer:
        return record
    answer = ask(question.question, settings=settings)
    # What the pipeline searched (a named title pinned first, a list's topic alone) leads the
    # ranking; the plain retriever's order fills it to depth.
    searched = [p.paper_id for p in answer.passages]
    record["ranked"] = list(dict.fromkeys(searched + record["ranked"]))[: depth(settings)]
    record.update({
        "answer": answer.text,
        "abstained": answer.abstained,
        "generator": answer.generator,
        "relevance": answer.relevance,
        "passages": [p.paper_id for p in answer.passages],
        "citations": [{"n": c.n, "paper_id": c.paper_id, "title": c.passage.title,
                       "quote": c.quote} for c in answer.citations],
        "sentences": [{"text": s.text, "citations": list(s.citations), "supported": s.supported}
                      for s in answer.sentences],
        "support_rate": answer.support_rate if answer.sentences else None,
        "notices": list(answer.notices),
        "timings_ms": dict(answer.timings_ms),
    })
    return record


def citation_judgements(record: dict[str, Any], gold: set[str]
                        ) -> list[list[am.CitationJudgement]]:
    """One CitationJudgement per citation of each answer sentence: is the cited paper gold."""
    by_n = {c["n"]: c for c in record.get("citations", [])}
    return [[am.CitationJudgement(gold=by_n[n]["paper_id"] in gold)
             for n in sent["citations"] if n in by_n] for sent in record.get("sentences", [])]


def score(record: dict[str, Any], question: Question, k: int) -> dict[str, float | None]:
    """The metrics of one question's record (None where a metric is undefined)."""
    gold = question.judgements()
    # A person's papers come from the author index, not from ranking: no retrieval metrics.
    ranked, gold = (record["ranked"], gold) if question.type != "author" else ([], {})
    m: dict[str, float | None] = {f"recall@{n}": rm.recall_at_k(ranked, gold, n)
                                  for n in RECALL_AT}
    m["recall@k"] = rm.recall_at_k(ranked, gold, k)
    m["hit@5"] = rm.hit_at_k(ranked, gold, 5)
    m["hit@10"] = rm.hit_at_k(ranked, gold, 10)
    m["mrr@10"] = rm.mrr_at_k(ranked, gold, 10)
    m["ndcg@10"] = rm.ndcg_at_k(ranked, gold, 10)
    if "answer" not in record:
        return m
    abstained = record["abstained"]
    judged = [] if abstained else citation_judgements(record, set(question.gold))
    answerable = question.answerable
    # An abstention on an answerable question states no key fact: it scores 0, not "undefined";
    # and it cites a gold paper only if it names it ("the abstract of [1] does not state ...").
    m["key_fact_recall"] = (am.key_fact_recall("" if abstained else record["answer"],
                                               question.key_facts) if answerable else None)
    m["gold_citation_precision"] = am.gold_citation_precision(judged) if answerable else None
    cited = {c["paper_id"] for c in record.get("citations", [])}
    m["cites_gold"] = float(bool(cited & set(question.gold))) if answerable else None
    if question.type == "author" and answerable:  # every paper of the person, nothing else
        m["author_recall"] = len(cited & set(question.gold)) / len(question.gold)
        m["author_precision"] = len(cited & set(question.gold)) / len(cited) if cited else 0.0
    if question.stress:  # the abstract lacks the number or name asked: any answer states one
        m["stress_answered"] = float(not abstained)  # it does not have (read them: eval/README)
    if question.type == "title" and answerable:
        m["title_first"] = float(bool(ranked) and ranked[0] in gold)
    if record.get("judge") is not None:
        m["judge_correct"] = record["judge"].get("correct")
    return m
