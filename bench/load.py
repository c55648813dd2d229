"""`make load`: 50 concurrent clients, 1,000 questions, against `rag serve` on 127.0.0.1.

Each client is a `gradio_client.Client` calling the app's `ask` API endpoint (which returns
`Answer.to_dict()`); every question carries a request number, so each answer can be matched to
the question it was sent with (no cross-talk). Reports throughput, p50/p95/p99 latency, errors
and the server's memory before and after. The run is bounded: `--timeout` seconds in all, and
every request gives up after `--request-timeout`. Only 127.0.0.1 is ever contacted.

    python -m rag.bench.load                        # seeds corpus, extractive answers
    python -m rag.bench.load --corpus icml2024 --clients 50 --questions 1000
    python -m rag.bench.load --inprocess            # a thread pool calling rag.ask, no server
    python -m rag.bench.load --shared               # 2 rag serve on one chroma run, a writer
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from .clients import run_clients, server_ask
from .measure import BENCH_HOME, RESULTS, rss_mb, summarize

MEMORY_GROWTH_BOUND_MB = 200  # after 1,000 questions, beyond the warmed-up server's RSS


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m rag.bench.load", description=__doc__.split("\n")[0])
    p.add_argument("--corpus", default="seeds")
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--questions", type=int, default=1000)
    p.add_argument("--timeout", type=float, default=1800, help="seconds for the whole run")
    p.add_argument("--request-timeout", type=float, default=600)
    p.add_argument("--concurrency", type=int, default=0,
                   help="RAG_UI_CONCURRENCY for the server (default: its setting)")
    p.add_argument("--inprocess", action="store_true",
                   help="call rag.ask from a thread pool instead of a server")
    p.add_argument("--shared", action="store_true",
                   help="two rag serve processes on one chroma run server while a third "
                        "process writes (load_shared.py)")
    p.add_argument("--keep", action="store_true",
                   help="--shared: keep its data directories (printed)")
    return p.parse_args(argv)


def workload(n: int) -> list[str]:
    from .latency import questions

    base = questions()
    return [f"{base[i % len(base)]} (request {i})" for i in range(n)]


def inprocess_ask(corpus: str):
    import rag
    from rag.settings import Settings

    settings = Settings.load(home=str(BENCH_HOME), corpus=corpus, generator="extractive",
                             env={})
    rag.ask("warm up", settings=settings)
    return lambda _w: (lambda q, _t: rag.ask(q, settings=settings).to_dict())


def main(argv=None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    args = parse(argv)
    from .ingest import ensure_bench_index
    from .startup import free_port, start_serve

    sent = workload(args.questions)
    if args.shared:
        return shared(args, sent)
    ensure_bench_index(args.corpus)
    proc, pid = None, os.getpid()
    if args.inprocess:
        make = inprocess_ask(args.corpus)
    else:
        port = free_port()
        env = {"RAG_UI_CONCURRENCY": str(args.concurrency)} if args.concurrency else {}
        proc = start_serve(args.corpus, port, RAG_GENERATOR="extractive", **env)
        pid = proc.pid
        make = server_ask(port)
        make(0)(sent[0], args.request_timeout)  # warm up: model, index, first answer
    before, _ = rss_mb(pid)
    try:
        deadline = time.monotonic() + args.timeout
        records, wall = run_clients(make, sent, args.clients, deadline, args.request_timeout)
        after, peak = rss_mb(pid)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(60)
    done = [r for r in records if r]
    errors = [r for r in done if r["error"]]
    mismatched = [r for r in done if not r["error"] and not r["match"]]
    lat = summarize([r["ms"] for r in done if not r["error"]] or [0.0])
    result = {
        "mode": "in-process" if args.inprocess else "rag serve (gradio ask API)",
        "corpus": args.corpus, "clients": args.clients, "questions": len(sent),
        "answered": len(done) - len(errors), "not_sent_before_deadline": len(sent) - len(done),
        "errors": len(errors), "cross_talk": len(mismatched), "wall_s": wall,
        "throughput_qps": (len(done) - len(errors)) / wall, "latency_ms": lat,
        "rss_before_mb": before, "rss_after_mb": after, "rss_peak_mb": peak,
        "memory_bound_mb": MEMORY_GROWTH_BOUND_MB,
        "memory_ok": after - before <= MEMORY_GROWTH_BOUND_MB,
        "abstained": sum(1 for r in done if r.get("abstained")),
        "error_samples": [r["error"] for r in errors[:5]],
        "mismatch_samples": [r["got"] for r in mismatched[:5]], "load_avg": os.getloadavg()}
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"load-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(result, indent=1))
    print(f"{result['mode']}, corpus {args.corpus}: {args.clients} clients, {len(sent)} "
          f"questions in {wall:.0f} s = {result['throughput_qps']:.2f} answers/s")
    print(f"latency ms: p50 {lat['p50']:.0f}  p95 {lat['p95']:.0f}  p99 {lat['p99']:.0f}  "
          f"max {lat['max']:.0f}")
    print(f"errors {len(errors)} (goal 0), cross-talk {len(mismatched)} (goal 0), not sent "
          f"before the deadline {result['not_sent_before_deadline']}")
    print(f"server RSS: {before:.0f} MB before, {after:.0f} MB after (growth "
          f"{after - before:+.0f} MB, bound {MEMORY_GROWTH_BOUND_MB} MB: "
          f"{'ok' if result['memory_ok'] else 'MISS'}), peak {peak:.0f} MB")
    print(f"saved {path}")
    ok = not errors and not mismatched and result["memory_ok"] and \
        result["not_sent_before_deadline"] == 0
    return 0 if ok else 1


def shared(args, sent: list[str]) -> int:
    from . import load_shared

    result = load_shared.run(args, sent)
    out = load_shared.report(result, args)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"load-shared-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(out, indent=1))
    print(f"saved {path}" + (f"; data kept in {result['work']}" if args.keep else ""))
    return 0 if load_shared.ok(out) else 1


if __name__ == "__main__":
    sys.exit(main())
