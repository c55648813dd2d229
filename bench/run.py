"""`make bench`: run the benchmark sections, print one table, save the JSON.

    python -m rag.bench.run                      # ingest, reindex, latency (seeds, icml2024),
                                             # coldstart, memory, embedding
    python -m rag.bench.run --only latency --scale50k
    python -m rag.bench.run --skip embedding --rounds 3
    python -m rag.bench.run --only local [--local-model 0.5b]   # the local LLM ([local] extra)
    python -m rag.bench.run --only protocols     # MCP and /v1 latency over rag.ask()
    python -m rag.bench.run --only tables        # a 10x3 table, reader model beside rules

The first run builds the ICML 2024 index in bench/results/home (about 10 minutes of embedding
on 2 free cores) and keeps it for the next runs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from .measure import ROUNDS

SECTIONS = ("ingest", "reindex", "latency", "tables", "coldstart", "memory", "embedding",
            "local", "protocols")


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m rag.bench.run", description=__doc__.split("\n")[0])
    p.add_argument("--only", nargs="+", choices=SECTIONS, help="run only these sections")
    p.add_argument("--skip", nargs="+", choices=SECTIONS, default=[], help="skip these")
    p.add_argument("--rounds", type=int, default=ROUNDS,
                   help=f"interleaved rounds per comparison (default {ROUNDS})")
    p.add_argument("--ingest-corpus", default="seeds", help="corpus of the throughput test")
    p.add_argument("--no-llama", action="store_true", help="skip the llama-index baseline")
    p.add_argument("--scale50k", action="store_true",
                   help="also the 50,000-passage synthetic scale (builds it once: minutes)")
    p.add_argument("--synthetic-vectors", choices=("mix", "model"), default="mix",
                   help="how the synthetic passages get vectors (see bench/latency.py)")
    p.add_argument("--scifact-full", action="store_true",
                   help="nDCG@10 on all 5,183 SciFact abstracts, not the judged + 1,000")
    p.add_argument("--local-model", choices=("1.5b", "0.5b"), default="1.5b",
                   help="the local LLM the `local` section measures")
    p.add_argument("--local-questions", type=int, default=30,
                   help="questions that must reach the local model (p50 over them)")
    p.add_argument("--protocols-corpus", default="icml2024",
                   help="corpus of the protocols section (default icml2024)")
    p.add_argument("--home", help="data directory of the local section's icml2024 index "
                                  "(default: bench/results/home)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        os.environ.pop(key, None)  # extractive figures; no LLM endpoint is involved
    args = parse(argv)
    from . import embedding, ingest, latency, local_llm, protocols, startup, tables
    from .measure import Report, table

    sections = [s for s in (args.only or SECTIONS) if s not in args.skip]
    report = Report()
    report.details["args"] = vars(args)
    t0 = time.perf_counter()
    for name in sections:
        print(f"== {name}", flush=True)
        t = time.perf_counter()
        if name == "ingest":
            ingest.run_throughput(report, args.ingest_corpus, args.rounds, not args.no_llama)
        elif name == "reindex":
            ingest.run_reindex(report)
        elif name == "latency":
            scales = ("seeds", "icml2024") + (("50k",) if args.scale50k else ())
            latency.run(report, scales, args.synthetic_vectors)
        elif name == "tables":
            tables.run(report)
        elif name == "coldstart":
            startup.run_cold_start(report)
        elif name == "memory":
            startup.run_memory(report)
        elif name == "embedding":
            embedding.run(report, args.scifact_full, args.rounds)
        elif name == "local":
            local_llm.run(report, args.local_model, args.local_questions,
                          Path(args.home) if args.home else None)
        elif name == "protocols":
            protocols.run(report, args.protocols_corpus)
        report.details.setdefault("section_seconds", {})[name] = time.perf_counter() - t
    path = report.save()
    print()
    print(table(report.rows))
    misses = [r for r in report.rows if r.ok is False]
    print(f"\n{len(report.rows)} figures in {time.perf_counter() - t0:.0f} s; "
          f"{len(misses)} goal(s) missed; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores; saved {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
