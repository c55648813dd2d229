"""Per-question rows -> one summary per configuration: means with their counts, by question type.

Which questions each number averages over, so a reader can tell what it means:
- retrieval metrics: answerable questions (the unanswerable have no gold paper);
- key-fact recall, cites-gold: answerable questions (an abstention scores 0 for key facts, and
  cites a gold paper only when it names it); gold citation precision: answered answerable
  questions. None of them reads the pipeline's own support check;
- stress answered: the stress questions (a near miss asking for a number or name the abstract
  lacks) that got an answer instead of an abstention; each is a candidate fact in the wrong role;
- abstention precision/recall and false-abstention rate: all questions (see metrics.abstention);
  near-miss abstention: the near misses; twin abstention (added by eval/twin_eval.py): the twins;
- latency: every question, per stage of `Answer.timings_ms` (retrieval only: ranking time).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

from .metrics import mean
from .metrics.abstention import abstention_scores
from .metrics.intervals import interval, ratio_interval
from .metrics.latency import stage_summary

RETRIEVAL = ("recall@1", "recall@3", "recall@5", "recall@10", "recall@k", "hit@5", "hit@10",
             "mrr@10", "ndcg@10")
ANSWERS = ("key_fact_recall", "gold_citation_precision", "cites_gold", "author_recall",
           "author_precision", "title_first", "stress_answered", "judge_correct")
# The columns of the printed table and the Markdown report, with their short headers.
HEADLINE = (("recall@5", "R@5"), ("recall@10", "R@10"), ("mrr@10", "MRR@10"),
            ("ndcg@10", "nDCG@10"), ("key_fact_recall", "KeyFact"),
            ("cites_gold", "CitesGold"), ("gold_citation_precision", "CitP-gold"),
            ("author_recall", "AuthR"), ("author_precision", "AuthP"),
            ("title_first", "Title@1"), ("list_noisy_gap", "NoisyGap"),
            ("abstention_precision", "AbstP"), ("abstention_recall", "AbstR"),
            ("near_miss_abstention", "NearMiss"), ("twin_abstention", "Twins"),
            ("false_abstention_rate", "FalseAbst"), ("stress_answered", "StressAns"),
            ("judge_correct", "Judge"),
            ("latency_retrieve_p50", "ret p50 ms"), ("latency_total_p50", "p50 ms"),
            ("latency_total_p95", "p95 ms"))


def _means(rows: Sequence[dict], names: Sequence[str]) -> tuple[dict, dict]:
    values, counts = {}, {}
    for name in names:
        defined = [r["metrics"].get(name) for r in rows if r["metrics"].get(name) is not None]
        if defined:
            values[name], counts[name] = mean(defined), len(defined)
    return values, counts


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The summary of one configuration's rows."""
    answerable = [r for r in rows if r["answerable"]]
    metrics, counts = _means(answerable, RETRIEVAL)
    out: dict[str, Any] = {"questions": len(rows), "answerable": len(answerable),
                           "cached": sum(1 for r in rows if r.get("cached")),
                           "metrics": metrics, "counts": counts}
    with_answers = [r for r in rows if "abstained" in r]
    if with_answers:
        m, c = _means(with_answers, ANSWERS)
        metrics.update(m)
        counts.update(c)
        if any(not r["answerable"] for r in with_answers):
            s = abstention_scores([r["abstained"] for r in with_answers],
                                  [r["answerable"] for r in with_answers])
            for name in ("precision", "recall"):
                if getattr(s, name) is not None:
                    metrics[f"abstention_{name}"] = getattr(s, name)
            if s.false_abstention_rate is not None:
                metrics["false_abstention_rate"] = s.false_abstention_rate
            out["abstention"] = {"abstained": s.abstained, "unanswerable": s.unanswerable,
                                 "answerable": s.answerable, "true": s.true_abstentions,
                                 "false": s.false_abstentions}
        near = [float(r["abstained"]) for r in with_answers if r["type"] == "near_miss"]
        if near:
            metrics["near_miss_abstention"], counts["near_miss_abstention"] = mean(near), len(near)
        out["intervals"] = intervals(with_answers)
    latency = stage_summary([r["timings_ms"] for r in rows])
    out["latency_ms"] = latency
    for stage in ("retrieve", "total"):
        if stage in latency:
            metrics[f"latency_{stage}_p50"] = latency[stage]["p50"]
            metrics[f"latency_{stage}_p95"] = latency[stage]["p95"]
    gap = noisy_list_gap(rows)
    if gap is not None:
        metrics["list_noisy_gap"] = gap
    out["by_type"] = by_type(rows)
    return out


def intervals(rows: Sequence[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    """95% bootstrap intervals (`metrics/intervals.py`) of the abstention and key-fact figures
    of answered rows; twins get theirs where they are asked (twin_eval.py)."""
    unanswerable = [float(r["abstained"]) for r in rows if not r["answerable"]]
    answerable = [float(r["abstained"]) for r in rows if r["answerable"]]
    key = [r["metrics"]["key_fact_recall"] for r in rows
           if r["metrics"].get("key_fact_recall") is not None]
    para = [r["metrics"]["key_fact_recall"] for r in rows if r["type"] == "paraphrase"
            and r["metrics"].get("key_fact_recall") is not None]
    found = {"abstention_recall": interval(unanswerable),
             "false_abstention_rate": interval(answerable),
             "abstention_precision": ratio_interval(
                 [(float(r["abstained"] and not r["answerable"]), float(r["abstained"]))
                  for r in rows]),
             "near_miss_abstention": interval([float(r["abstained"]) for r in rows
                                               if r["type"] == "near_miss"]),
             "key_fact_recall": interval(key), "paraphrase_key_fact_recall": interval(para)}
    return {k: v for k, v in found.items() if v is not None}


def noisy_list_gap(rows: Sequence[dict[str, Any]]) -> float | None:
    """Mean recall@10 of the noisy list questions ("the best papers on X at ICML 2024?") minus
    that of their plain forms ("Which papers study X?"): 0 when request and conference words do
    not pull retrieval off course. None without such pairs."""
    plain = {r["id"]: r["metrics"].get("recall@10") for r in rows}
    pairs = [(r["metrics"].get("recall@10"), plain.get(r.get("variant_of")))
             for r in rows if r.get("variant_of")]
    pairs = [(n, p) for n, p in pairs if n is not None and p is not None]
    return mean(n - p for n, p in pairs) if pairs else None


def by_type(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per question type: count, Recall@5 and MRR@10 (answerable), abstention rate."""
    out = {}
    for qtype, n in sorted(Counter(r["type"] for r in rows).items()):
        group = [r for r in rows if r["type"] == qtype]
        entry: dict[str, Any] = {"n": n}
        for name in ("recall@5", "recall@10", "hit@10", "mrr@10", "key_fact_recall",
                     "cites_gold"):
            value = mean(r["metrics"].get(name) for r in group)
            if value is not None:
                entry[name] = value
        if any("abstained" in r for r in group):
            entry["abstained"] = mean(float(r["abstained"]) for r in group if "abstained" in r)
        out[qtype] = entry
    return out
