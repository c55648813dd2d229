"""Small measuring tools shared by the benchmarks: timers, percentiles, memory, result rows.

Every figure is a `Row`: what was measured, its value, the reference it was measured next to in
the same run (this machine's 2 cores are shared, so only side-by-side ratios are comparable),
the ratio, and the goal it is held to.

Example: Row("index overhead", 21.4, "s", ref=20.0, ref_name="model.encode", goal="<= 1.10",
ratio=21.4 / 20.0) prints as `index overhead  21.4 s  model.encode 20.0  1.07  <= 1.10  ok`.
"""

from __future__ import annotations

import json
import os
import platform
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
ROUNDS = 3  # interleaved rounds per comparison: the median of 3 outvotes one noisy round
BENCH_HOME = RESULTS / "home"  # indexes kept between runs: icml2024 takes long to embed once


@dataclass
class Row:
    section: str
    name: str
    value: float
    unit: str
    ref: float | None = None
    ref_name: str = ""
    ratio: float | None = None
    goal: str = ""  # e.g. "<= 1.10" (on the ratio when there is one, else on the value)
    ok: bool | None = None
    note: str = ""

    def check(self) -> "Row":
        if self.goal:
            m = re.fullmatch(r"\s*(<=|<|>=|>|==)\s*([-\d.e]+)\s*", self.goal)
            if m:
                target = self.ratio if self.ratio is not None else self.value
                op, bound = m.group(1), float(m.group(2))
                self.ok = {"<=": target <= bound, "<": target < bound, ">=": target >= bound,
                           ">": target > bound, "==": target == bound}[op]
        return self


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    details: dict = field(default_factory=dict)

    def add(self, *rows: Row) -> None:
        for row in rows:
            self.rows.append(row.check())
            print(format_row(row), flush=True)

    def save(self, name: str = "") -> Path:
        RESULTS.mkdir(parents=True, exist_ok=True)
        path = RESULTS / f"bench-{time.strftime('%Y%m%d-%H%M%S')}{name}.json"
        path.write_text(json.dumps({"machine": machine(), "rows": [asdict(r) for r in self.rows],
                                    "details": self.details}, indent=1, default=float))
        return path


def format_row(r: Row) -> str:
    ref = f"{r.ref_name} {fmt(r.ref)}" if r.ref is not None else r.ref_name
    ratio = f"{r.ratio:.2f}" if r.ratio is not None else ""
    ok = {True: "ok", False: "MISS", None: ""}[r.ok]
    return (f"{r.section:<10} {r.name:<44} {fmt(r.value):>9} {r.unit:<9} {ref:<30} "
            f"{ratio:>6}  {r.goal:<9} {ok:<4} {r.note}")


def table(rows: list[Row]) -> str:
    head = (f"{'section':<10} {'measure':<44} {'value':>9} {'unit':<9} {'reference':<30} "
            f"{'ratio':>6}  {'goal':<9} {'':<4} note")
    return "\n".join([head, "-" * len(head)] + [format_row(r) for r in rows])


def fmt(x: float | None) -> str:
    if x is None:
        return ""
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def machine() -> dict:
    return {"cpus": os.cpu_count(), "python": platform.python_version(),
            "load_avg": os.getloadavg(), "time": time.strftime("%Y-%m-%d %H:%M:%S")}


def timed(fn: Callable, *args, **kw) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn(*args, **kw)
    return time.perf_counter() - t, out


def latencies_ms(fn: Callable[[str], object], questions: list[str], warmup: int = 10
                 ) -> dict[str, float]:
    """p50/p95/p99/mean in ms of `fn(q)` over `questions`, after `warmup` untimed calls."""
    for q in questions[:warmup]:
        fn(q)
    times = []
    for q in questions:
        t = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - t) * 1000)
    return summarize(times)


def summarize(times_ms: list[float]) -> dict[str, float]:
    a = np.asarray(times_ms, dtype=float)
    return {"n": int(a.size), "p50": float(np.percentile(a, 50)),
            "p95": float(np.percentile(a, 95)), "p99": float(np.percentile(a, 99)),
            "mean": float(a.mean()), "max": float(a.max())}


def rss_mb(pid: int | None = None) -> tuple[float, float]:
    """(current, peak) resident memory of a process in MB, from /proc (VmRSS, VmHWM)."""
    status = Path(f"/proc/{pid or 'self'}/status").read_text()
    get = lambda key: int(re.search(rf"{key}:\s+(\d+) kB", status).group(1)) / 1024  # noqa
    return get("VmRSS"), get("VmHWM")
