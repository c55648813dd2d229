"""One question under one configuration: what the system did (`observe`) and how well (`score`).

`observe` runs the real pipeline and records plain data: the ranked papers to depth
max(10, k), the gate's relevance score and, unless retrieval only, the `rag.ask` answer (text,
abstained, citations with their quotes, sentences with their support flags, timings). That
record is what the cache keeps. `score` turns a record and its question into metrics with the
pure functions of `rag.eval.metrics`, so changing a metric never needs a rerun.

A citation "supports" its sentence when the sentence's content words are covered by the cited
quote (with the cited paper's title) at least `rag.support.MIN_COVERAGE`: the pipeline's own
offline support rule, applied to one citation at a time.
"""

from __future__ import annotations

import re
import time
from typing import Any

from rag import factory
from rag.retrieve.gate import relevance
from rag.pipeline import ask, prepare_question
from rag.settings import Settings
from rag.check.support import MIN_COVERAGE
from rag.text import coverage

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
    """One CitationJudgement per citation of each answer sentence."""
    by_n = {c["n"]: c for c in record.get("citations", [])}
    out = []
    for sent in record.get("sentences", []):
        claim = re.sub(r"\[\d+\]", "", sent["text"]).strip(" -*")
        judged = []
        for n in sent["citations"]:
            c = by_n.get(n)
            if c is None:
                continue
            evidence = f"{c['title']}. {c['quote']}"
            judged.append(am.CitationJudgement(
                gold=c["paper_id"] in gold,
                supports=coverage(claim, evidence) >= MIN_COVERAGE))
        out.append(judged)
    return out


def score(record: dict[str, Any], question: Question, k: int) -> dict[str, float | None]:
    """The metrics of one question's record (None where a metric is undefined)."""
    gold = question.judgements()
    ranked = record["ranked"]
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
    # An abstention on an answerable question states no key fact: it scores 0, not "undefined".
    m["key_fact_recall"] = (am.key_fact_recall("" if abstained else record["answer"],
                                               question.key_facts) if answerable else None)
    m["citation_precision"] = am.citation_precision(judged) if answerable else None
    m["gold_citation_precision"] = am.gold_citation_precision(judged) if answerable else None
    m["citation_recall"] = am.citation_recall(judged) if answerable else None
    m["cites_gold"] = am.cites_gold(judged) if answerable else None
    m["support_rate"] = None if abstained else record.get("support_rate")
    if record.get("judge") is not None:
        m["judge_correct"] = record["judge"].get("correct")
    return m
