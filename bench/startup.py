"""Cold start and memory.

Cold start: a fresh Python process that answers one question from an existing index, timed
from the process's creation (as the kernel records it) to the answer, split into its parts:
interpreter start, `import rag`, `import torch`, model load,
index open (Chroma client + BM25 snapshot), first answer. Run twice; the page cache is warm
the second time, as it is on a machine that has run the project before.

Memory: peak resident memory (VmHWM) of `rag serve --corpus icml2024` after answering
questions through its `ask` API.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from .measure import BENCH_HOME, ROOT, Report, Row, rss_mb

PROBE = r"""
import json, os, sys, time
import psutil
start = psutil.Process().create_time()
t = {"interpreter": time.time() - start}
def mark(name):
    t[name] = time.time() - start - sum(v for k, v in t.items())
import rag
from rag import factory
from rag.settings import Settings
mark("import rag")
import torch, tokenizers, safetensors.torch
mark("import torch")
s = Settings.load(home=sys.argv[1], corpus=sys.argv[2], generator="extractive")
factory.embedder(s)._load()
mark("model load")
factory.index(s).snapshot()
mark("index open (Chroma + BM25)")
a = rag.ask("Which kernels avoid mean reversion in Gaussian process regression?", settings=s)
mark("first answer")
t["total"] = time.time() - start
print(json.dumps(t))
"""


def cold_start(corpus: str = "icml2024") -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, str(BENCH_HOME), corpus], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def lazy_imports() -> list[str]:
    """Heavy libraries that `import rag` loads (it should load none of them)."""
    code = ("import sys, rag, rag.pipeline; print(','.join(m for m in ('torch', 'chromadb', "
            "'sentence_transformers', 'transformers', 'gradio', 'openai', 'xllamacpp') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


def run_cold_start(report: Report, corpus: str = "icml2024") -> None:
    runs = [cold_start(corpus) for _ in range(2)]
    warm = runs[-1]
    report.add(Row("coldstart", f"process start -> first answer ({corpus})", warm["total"], "s",
                   goal="< 10", note=f"first run {runs[0]['total']:.1f} s (cold page cache)"))
    for part in ("interpreter", "import rag", "import torch",
                 "model load", "index open (Chroma + BM25)", "first answer"):
        report.add(Row("coldstart", f"  {part}", warm[part], "s",
                       ratio=warm[part] / warm["total"], note="share of the total"))
    heavy = lazy_imports()
    report.add(Row("coldstart", "heavy modules loaded by `import rag.pipeline`", len(heavy), "",
                   goal="== 0", note=", ".join(heavy) or "none: torch, chromadb load on use"))
    report.details["coldstart"] = {"runs": runs, "heavy_on_import": heavy}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"rag serve exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise TimeoutError("rag serve did not start")


def rag_env(home: Path = BENCH_HOME, **env: str) -> dict[str, str]:
    """The environment of a `rag` process the bench starts: its data directory, offline, and
    no LLM endpoint (the extractive generator: no LLM in these figures)."""
    full = {**os.environ, "RAG_HOME": str(home), "GRADIO_ANALYTICS_ENABLED": "False",
            "HF_HUB_OFFLINE": "1", **env}
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        full.pop(key, None)
    return full


def start_serve(corpus: str, port: int, home: Path = BENCH_HOME, wait: bool = True,
                **env: str) -> subprocess.Popen:
    """`rag serve` on 127.0.0.1:`port`, listening when it returns unless `wait` is False."""
    proc = subprocess.Popen([sys.executable, "-m", "rag.ui.cli", "serve", "--corpus", corpus,
                             "--port", str(port)], cwd=ROOT, env=rag_env(home, **env),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if wait:
        wait_port(port, proc)
    return proc


def stop(proc: subprocess.Popen | None, wait: float = 30) -> None:
    """Terminate a process the bench started, killing it if it has not exited in `wait` s."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(wait)


def run_memory(report: Report, corpus: str = "icml2024", questions: int = 40) -> None:
    from gradio_client import Client

    from .latency import questions as all_questions

    port = free_port()
    proc = start_serve(corpus, port)
    try:
        idle, _ = rss_mb(proc.pid)
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        for q in all_questions()[:questions]:
            client.predict(q, api_name="/ask")
        now, peak = rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(60)
    report.add(Row("memory", f"rag serve ({corpus}) peak RSS", peak, "MB",
                   note=f"after {questions} questions; {idle:.0f} MB once started, "
                   f"{now:.0f} MB at the end"))
    report.details["memory"] = {"idle_mb": idle, "end_mb": now, "peak_mb": peak}
