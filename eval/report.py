"""Writing a run: rows.jsonl, summary.json, summary.md with embedded PNG plots, and a text table.

`write(folder, result)` writes everything (with twins.jsonl, the twins' rows) and returns the
paths; `table(result)` is the table printed to the terminal (the same numbers as the Markdown),
`abstention_text(result)` each abstention figure beside the question-only baseline. Plots use
matplotlib's Agg backend: the quality metrics per configuration as grouped bars, and the
latency distribution per configuration and stage as box plots.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .summary import HEADLINE

QUALITY_PLOT = (("recall@5", "R@5"), ("recall@10", "R@10"), ("mrr@10", "MRR@10"),
                ("ndcg@10", "nDCG@10"), ("key_fact_recall", "KeyFact"),
                ("cites_gold", "CitesGold"), ("gold_citation_precision", "CitP-gold"),
                ("abstention_recall", "AbstR"), ("false_abstention_rate", "FalseAbst"))


def _columns(result) -> list[tuple[str, str]]:
    present = {m for s in result.summaries.values() for m in s["metrics"]}
    return [(m, h) for m, h in HEADLINE if m in present]


def _fmt(name: str, value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:.0f}" if name.startswith("latency") else f"{value:.3f}"


def _rows(result) -> tuple[list[str], list[list[str]]]:
    cols = _columns(result)
    header = ["configuration"] + [h for _, h in cols]
    body = []
    for name, s in result.summaries.items():
        body.append([name] + [_fmt(m, s["metrics"].get(m)) for m, _ in cols])
    return header, body


def table(result) -> str:
    """The headline metrics of every configuration as an aligned text table."""
    return _text_table(*_rows(result))


def abstention_text(result) -> str:
    """Each abstention figure beside the question-only baseline, as a text table ('' if none)."""
    from .twin_eval import abstention_table

    header, body = abstention_table(result)
    if not body:
        return ""
    note = result.meta.get("question_only", {}).get("note", "not measured")
    return (f"\nAbstention beside the question-only baseline ({note}):\n"
            + _text_table(header, body))


def _text_table(header: list[str], body: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(r, widths))) for r in [header] + body]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _md_table(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines)


def plot_metrics(result, path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = [(m, h) for m, h in QUALITY_PLOT
               if any(m in s["metrics"] for s in result.summaries.values())]
    if not metrics:
        return False
    names = list(result.summaries)
    width = 0.8 / max(len(names), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(metrics) + 2), 4.2))
    for i, name in enumerate(names):
        values = [result.summaries[name]["metrics"].get(m) or 0.0 for m, _ in metrics]
        xs = [j + (i - (len(names) - 1) / 2) * width for j in range(len(metrics))]
        ax.bar(xs, values, width, label=name)
    ax.set_xticks(range(len(metrics)), [h for _, h in metrics])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score (FalseAbst: lower is better)")
    ax.set_title(f"{result.dataset.name}: metrics per configuration")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_latency(result, path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series, labels = [], []
    for name, rows in result.rows.items():
        for stage in ("retrieve", "generate", "total"):
            xs = [r["timings_ms"][stage] for r in rows if stage in r["timings_ms"]]
            if xs:
                series.append(xs)
                labels.append(f"{name}\n{stage}")
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(series) + 2), 4.2))
    ax.boxplot(series, showfliers=True)
    ax.set_xticks(range(1, len(labels) + 1), labels, fontsize=7, rotation=30, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("ms per question (log scale)")
    cached = sum(s["cached"] for s in result.summaries.values())
    ax.set_title(f"{result.dataset.name}: latency per stage"
                 + (f" ({cached} rows from cache: timings of their first run)" if cached else ""))
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def markdown(result, plots: dict[str, bool]) -> str:
    meta = result.meta
    out = [f"# Eval: {meta.get('dataset')} ({meta.get('started', '')})", ""]
    for key in ("questions", "corpus", "corpus_hash", "git_revision", "index", "judge",
                "judge_skipped", "seconds"):
        if meta.get(key) not in (None, ""):
            out.append(f"- **{key}**: {meta[key]}")
    out += [f"- **note**: {n}" for n in meta.get("notes", [])] + ["", "## Headline metrics", ""]
    out += [_md_table(*_rows(result)), ""]
    out.append("Retrieval and answer metrics average over answerable questions, abstention "
               "metrics over all; baseline rows rank only. See eval/README.md for definitions.")
    out.append("")
    from .twin_eval import abstention_table

    header, body = abstention_table(result)
    if body:
        note = result.meta.get("question_only", {}).get("note", "not measured")
        out += ["## Abstention beside the question-only baseline", "",
                f"Twins: each answerable question asked again of its abstract without the "
                f"sentences that state the answer (twins.jsonl). Question-only AUROC: a TF-IDF "
                f"logistic regression on the question text alone ({note}); 0.5 means wording "
                f"gives nothing away.", "", _md_table(header, body), ""]
    if plots.get("metrics"):
        out += ["![metrics per configuration](metrics.png)", ""]
    if plots.get("latency"):
        out += ["![latency per stage](latency.png)", ""]
    for name, s in result.summaries.items():
        out += [f"## {name}", ""]
        types = s["by_type"]
        cols = sorted({k for t in types.values() for k in t} - {"n"})
        out += [_md_table(["type", "n"] + cols, [[t, str(v["n"])] + [_fmt(c, v.get(c))
                                                                    for c in cols]
                                                 for t, v in types.items()]), ""]
        if "abstention" in s:
            a = s["abstention"]
            out.append(f"Abstained on {a['abstained']} questions: {a['true']} of "
                       f"{a['unanswerable']} unanswerable, {a['false']} of {a['answerable']} "
                       f"answerable.")
        lat = s["latency_ms"]
        out.append("Latency (ms): " + "; ".join(
            f"{st} p50 {v['p50']:.0f}, p95 {v['p95']:.0f}" for st, v in lat.items()))
        misses = _misses(result.rows[name] + [r for r in result.twins.get(name, [])
                                              if not r["metrics"]["twin_caught"]])
        if misses:
            out += ["", "Misses:", ""] + [f"- {m}" for m in misses[:25]]
        out.append("")
    return "\n".join(out)


def _misses(rows: list[dict]) -> list[str]:
    """The questions a reader should look at first: gold not in the top 5, wrong abstention."""
    out = []
    for r in rows:
        m = r["metrics"]
        if r["answerable"] and m.get("recall@5") is not None and m["recall@5"] < 1:
            out.append(f"{r['id']} ({r['type']}): Recall@5 {m['recall@5']:.2f}")
        if "abstained" in r and r["abstained"] == r["answerable"]:
            what = "abstained on an answerable question" if r["answerable"] else \
                "answered an unanswerable question"
            out.append(f"{r['id']} ({r['type']}): {what} (relevance {r['relevance']:.3f})")
    return out


def write(folder: Path, result, plots: bool = True) -> dict[str, Path]:
    """rows.jsonl, summary.json, summary.md (and the PNGs) in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "rows.jsonl").open("w", encoding="utf-8") as f:
        for rows in result.rows.values():
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    if result.twins:
        with (folder / "twins.jsonl").open("w", encoding="utf-8") as f:
            for rows in result.twins.values():
                for r in rows:
                    f.write(json.dumps(r, ensure_ascii=False) + "\n")
    summary = {"meta": result.meta, "configurations": result.summaries}
    (folder / "summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False),
                                         encoding="utf-8")
    made = {"metrics": plots and plot_metrics(result, folder / "metrics.png"),
            "latency": plots and plot_latency(result, folder / "latency.png")}
    (folder / "summary.md").write_text(markdown(result, made), encoding="utf-8")
    return {"folder": folder, "rows": folder / "rows.jsonl", "summary": folder / "summary.json",
            "markdown": folder / "summary.md"}
