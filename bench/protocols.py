"""What the protocol endpoints add to an answer's latency: `rag.ask()` beside the MCP `ask` tool
(the SDK's in-memory client, in this process) and `POST /v1/chat/completions` (non-streaming,
over HTTP to a real `rag serve` on 127.0.0.1), side by side in one run.

    python -m rag.bench.run --only protocols          # icml2024 (the index is built if missing)
    python -m rag.bench.run --only protocols --protocols-corpus seeds

The same 50 questions (the first 50 of `latency.questions()`: seed questions) go through all
three, interleaved question by question, the order rotated each question (ask, MCP, HTTP, then
MCP, HTTP, ask, ...) so no path always goes first; 5 untimed warm-up questions first. The
extractive generator, so no LLM time hides the overhead. The added latency is the p50 of each
question's difference to its own `rag.ask()` time, and the difference of the p50s is shown too.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import numpy as np

from .measure import BENCH_HOME, ROOT, Report, Row, summarize

QUESTIONS = 50
WARMUP = 5
GOAL_MS = 20.0  # issue 23: each protocol within 20 ms of rag.ask()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(corpus: str = "icml2024", n: int = QUESTIONS) -> dict:
    """Per-question times in ms of each path: {"ask": [...], "thread": [...], "mcp": [...],
    "http": [...], "served": [...]} ("thread": rag.ask() in a worker thread; "served": the
    server's own ask() time of each HTTP request, from its Server-Timing header)."""
    import anyio
    import httpx

    import rag
    from rag.settings import Settings
    from rag.ui.launch import ensure_index, warm_up
    from rag.ui.mcp_server import build_server, in_process_client

    from .latency import questions
    from .startup import rag_env, start_serve, stop, wait_port

    settings = Settings.load(home=str(BENCH_HOME), corpus=corpus, generator="extractive",
                             env={})
    ensure_index(settings)
    warm_up(settings)
    qs = questions()[: WARMUP + n]
    port, api_port = _free_port(), _free_port()
    servers = [start_serve(corpus, port, wait=False), subprocess.Popen(
        [sys.executable, "-m", "rag.ui.cli", "api", "--corpus", corpus, "--port",
         str(api_port)], cwd=ROOT, env=rag_env(), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)]
    urls = {name: f"http://127.0.0.1:{p}/v1/chat/completions"
            for name, p in (("http", port), ("api", api_port))}
    times: dict[str, list[float]] = {k: [] for k in ("ask", "thread", "mcp", "http", "api")}
    served: dict[str, list[float]] = {"http": [], "api": []}
    try:
        http = httpx.Client(timeout=300)
        for p, proc in zip((port, api_port), servers):
            wait_port(p, proc)
            deadline = time.monotonic() + 300  # the port opens before /v1 answers
            while http.get(f"http://127.0.0.1:{p}/v1/models").status_code != 200:
                assert time.monotonic() < deadline, "/v1 did not come up"
                time.sleep(0.5)

        async def run() -> None:
            async with in_process_client(build_server(settings)) as mcp:
                async def ask(q):
                    rag.ask(q, settings=settings)

                async def thread(q):  # as both servers call it
                    await anyio.to_thread.run_sync(lambda: rag.ask(q, settings=settings))

                async def tool(q):
                    result = await mcp.call_tool("ask", {"question": q})
                    assert not result.is_error, result.content[0].text

                def post(name):
                    async def send(q):
                        r = http.post(urls[name], json={"model": "icml-rag", "messages": [
                            {"role": "user", "content": q}]})
                        assert r.status_code == 200, r.text
                        return float(r.headers["server-timing"].partition("dur=")[2])
                    return send

                paths = [("ask", ask), ("thread", thread), ("mcp", tool),
                         ("http", post("http")), ("api", post("api"))]
                for i, q in enumerate(qs):
                    turn = paths[i % len(paths):] + paths[: i % len(paths)]
                    for name, fn in turn:
                        t = time.perf_counter()
                        took = await fn(q)
                        if i >= WARMUP:
                            times[name].append((time.perf_counter() - t) * 1000)
                            if took is not None:
                                served[name].append(took)

        anyio.run(run)
        http.close()
    finally:
        for proc in servers:
            stop(proc)
    return times, served


def run(report: Report, corpus: str = "icml2024") -> None:
    times, served = measure(corpus)
    ask, thread = np.asarray(times["ask"]), np.asarray(times["thread"])
    base, in_thread = summarize(times["ask"]), summarize(times["thread"])
    report.add(Row("protocols", f"{corpus}: rag.ask() p50", base["p50"], "ms",
                   note=f"{base['n']} questions, extractive, p95 {base['p95']:.0f} ms; in a "
                        f"worker thread (as the servers call it) p50 {in_thread['p50']:.1f} ms"))
    details: dict = {"ask": base, "thread": in_thread}
    for name, label in (("mcp", "MCP ask tool (in-memory client)"),
                        ("http", "POST /v1/chat/completions (HTTP, rag serve)"),
                        ("api", "POST /v1/chat/completions (HTTP, rag api)")):
        took = np.asarray(times[name])
        stats = summarize(times[name])
        added = float(np.percentile(took - ask, 50))
        over_thread = float(np.percentile(took - thread, 50))
        details[name] = {**stats, "added_p50": added, "added_p50_over_thread": over_thread}
        note = (f"its p50 {stats['p50']:.1f} ms; difference of p50s "
                f"{stats['p50'] - base['p50']:+.1f} ms; over the worker-thread ask "
                f"{over_thread:+.1f} ms")
        if name in served:  # how much of it is the server process's own ask()
            own = np.asarray(served[name])
            wire = float(np.percentile(took - own, 50))
            details[name] |= {"served_p50": float(np.percentile(own, 50)), "wire_p50": wire}
            note += (f"; the server's ask() p50 {np.percentile(own, 50):.1f} ms "
                     f"(Server-Timing), HTTP and the API around it p50 {wire:.1f} ms")
        report.add(Row("protocols", f"{corpus}: {label}: added p50", added, "ms",
                       goal=f"< {GOAL_MS:.0f}", note=note))
    report.details["protocols"] = {"corpus": corpus, "times_ms": times, "served_ms": served,
                                   **details}
