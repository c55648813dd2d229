"""Table latency: a 10-paper, 3-column table on the whole ICML 2024 index, as `rag.table()`
makes it (rows found for the topic, every row's sentences read for each column by the reader
model), beside the same tables read by the rules, in one run.

Topics: the 14 test topics of the list benchmark (eval/datasets/lists), each with the columns
"benchmark", "speedup" and "main result"; the first table is made once untimed (warm-up).
Goal (issue 30): at most 3 s a table on 2 cores.
"""

from __future__ import annotations

import json
import time
from importlib.resources import files

import numpy as np

from .measure import BENCH_HOME, Report, Row

COLUMNS = ("benchmark", "speedup", "main result")
ROWS = 10
GOAL_S = "<= 3"


def topics() -> list[str]:
    text = (files("rag.eval") / "datasets" / "lists" / "topics.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [r["topic"] for r in rows if r["split"] == "test"]


def run(report: Report) -> None:
    import rag
    from rag.settings import Settings

    from .ingest import ensure_bench_index

    ensure_bench_index("icml2024")
    base = Settings.load(home=str(BENCH_HOME), corpus="icml2024", generator="extractive",
                         table_rows=ROWS, env={})
    found = topics()
    details = {}
    for reader in ("model", "rules"):
        settings = base.replace(reader=reader)
        rag.table(found[0], COLUMNS, settings=settings)  # warm-up: models and index loaded
        seconds, shapes = [], []
        for topic in found:
            t = time.perf_counter()
            answer = rag.table(topic, COLUMNS, settings=settings)
            seconds.append(time.perf_counter() - t)
            shapes.append(len(answer.table.rows))
        p50, p95 = float(np.percentile(seconds, 50)), float(np.percentile(seconds, 95))
        details[reader] = {"seconds": seconds, "rows": shapes}
        report.add(Row("tables", f"icml2024: rag.table() {ROWS}x{len(COLUMNS)} reader={reader} "
                       f"p95 (p50 {p50:.2f})", p95, "s",
                       goal=GOAL_S if reader == "model" else "",
                       note=f"{len(found)} topics, {min(shapes)}-{max(shapes)} rows"))
    report.details["tables"] = details
