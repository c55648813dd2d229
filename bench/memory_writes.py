"""Memory under writes: does a long-running reader grow with each re-index it sees?

One process asks questions, as `rag serve` does, while another process writes to the same
data directory: each write adds a small document to the corpus or removes the one added
before, so every write moves the index to a new generation and the reader loads a new
snapshot (chunk table, BM25 side, catalog) for its next question. The reader's RSS is taken
after every write's questions; the run passes when the RSS after the last write is within
`BOUND_MB` of the RSS after write 5 (by then every lazy part is loaded and warm), and so is
the higher of the last two writes' against the higher of writes 5 and 6.

    python -m rag.bench.memory_writes --home DIR [--corpus icml2024] [--writes 50]

`--home` must hold the corpus's index already (`rag index`); the run adds and removes its own
documents there, and leaves the index as it found it (the last document removed when the
number of writes is even). The result goes to bench/results/memory-writes-<time>.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import textwrap
import time

from .measure import RESULTS, rss_mb

BOUND_MB = 100  # RSS after the last write within this of RSS after write WARM
WARM = 5
QUESTIONS = ("Which kernels avoid mean reversion in Gaussian process regression?",
             "How many questions does WMDP contain?", "papers on mixture of experts")
# The writer: a second process that loads the embedder once, then adds or removes a document
# for each line it reads, answering "ok" when the write is done.
WRITER = textwrap.dedent("""
    import sys, tempfile, pathlib
    from rag.documents import add_documents, remove_document
    from rag.settings import Settings
    settings = Settings.load(corpus=sys.argv[1])
    added = None
    for i, line in enumerate(sys.stdin):
        if added is None:
            path = pathlib.Path(tempfile.mkdtemp()) / "note.md"
            path.write_text(f"# Memory note {i}\\n\\nA note about sparse attention kernels "
                            f"written for write {i} of the memory benchmark.\\n")
            added = add_documents([(path, path.name)], settings).added[0].paper_id
        else:
            remove_document(added, settings)
            added = None
        print("ok", flush=True)
""")


def run(home: str, corpus: str, writes: int) -> dict:
    os.environ["RAG_HOME"] = home
    import rag
    from rag.settings import Settings

    settings = Settings.load(corpus=corpus, generator="extractive")
    for q in QUESTIONS:
        rag.ask(q, settings=settings)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, corpus], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env={**os.environ})
    rss, seconds = [rss_mb()[0]], []
    try:
        for i in range(writes):
            t = time.perf_counter()
            writer.stdin.write("write\n")
            writer.stdin.flush()
            if writer.stdout.readline().strip() != "ok":
                raise RuntimeError(f"the writer stopped at write {i + 1}")
            time.sleep(1.1)  # Index.generation is fetched again at most every second
            for q in QUESTIONS:
                rag.ask(q, settings=settings)
            gc.collect()
            rss.append(rss_mb()[0])
            seconds.append(time.perf_counter() - t)
            print(f"write {i + 1}: RSS {rss[-1]:.0f} MB ({seconds[-1]:.1f} s)", flush=True)
    finally:
        writer.stdin.close()
        writer.wait(timeout=120)
    # Adds and removes alternate, and the RSS after each kind differs (by about 80 MB on ICML
    # 2024): the growth is judged on the higher of two consecutive writes, at both ends.
    warm, last = max(rss[WARM:WARM + 2]), max(rss[-2:])
    return {"corpus": corpus, "writes": writes, "rss_mb": [round(r, 1) for r in rss],
            f"rss_after_{WARM}": round(rss[WARM], 1), f"rss_after_{writes}": round(rss[-1], 1),
            "rss_warm_pair_max": round(warm, 1), "rss_last_pair_max": round(last, 1),
            "growth_mb": round(last - warm, 1), "bound_mb": BOUND_MB,
            "ok": rss[-1] - rss[WARM] <= BOUND_MB and last - warm <= BOUND_MB,
            "peak_mb": round(rss_mb()[1], 1),
            "seconds_per_write_p50": round(sorted(seconds)[len(seconds) // 2], 2)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag.bench.memory_writes")
    parser.add_argument("--home", required=True, help="a data directory holding the index")
    parser.add_argument("--corpus", default="icml2024")
    parser.add_argument("--writes", type=int, default=50)
    args = parser.parse_args(argv)
    out = run(args.home, args.corpus, args.writes)
    print(json.dumps({k: v for k, v in out.items() if k != "rss_mb"}))
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"memory-writes-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(out, indent=1))
    print(f"saved {path}")
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
