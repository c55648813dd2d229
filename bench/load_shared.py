"""`make load LOAD_ARGS=--shared`: two `rag serve` processes sharing one Chroma server, under
load, while a third process writes to it.

A `chroma run` server on 127.0.0.1 and a free port gets the corpus (`rag index`, from the
shipped embedding cache); two `rag serve` processes, each with its own data directory and
RAG_CHROMA_URL pointing at that server, serve the clients of `load.py` (client w talks to
server w % 2) while a writer, in its own data directory too, runs cycles of `rag add` (3 new
documents), `rag index --corpus C` (the whole corpus diffed against the store) and `rag remove`
of the previous cycle's documents, until the clients are done. Then the store is checked, as a
fresh machine would see it: every paper of the corpus exactly once and complete, no orphan
chunk, the last cycle's uploads present and the removed ones absent, the BM25 side (rebuilt
here, and the snapshot each server saved) agreeing with Chroma. Every process is stopped at the
end, and the data directories removed unless `--keep`.

Not covered: `rag index --rebuild` while serving (it drops the collection under the readers).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .chroma_server import CHROMA, ChromaServer
from .clients import run_clients, server_ask
from .measure import rss_mb
from .startup import free_port, rag_env, start_serve, stop, wait_port
from .store_check import check_store

DOCS = 3  # documents added per writer cycle (and removed the cycle after)


def rag(env: dict, *args: str, timeout: float = 900) -> dict:
    """Run one `rag` command; its exit code, output, seconds and peak RSS (MB)."""
    t0, peak, got = time.perf_counter(), 0.0, {}
    proc = subprocess.Popen([sys.executable, "-m", "rag.ui.cli", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader = threading.Thread(target=lambda: got.update(zip(("out", "err"),
                                                            proc.communicate())))
    reader.start()
    while reader.is_alive() and time.perf_counter() - t0 < timeout:
        try:
            peak = max(peak, rss_mb(proc.pid)[1])
        except (OSError, AttributeError):
            pass
        reader.join(0.2)
    if reader.is_alive():
        proc.kill()
        reader.join(30)
    return {"args": list(args), "rc": proc.returncode, "out": got.get("out", ""),
            "err": got.get("err", "").strip()[-300:], "seconds": time.perf_counter() - t0,
            "peak_mb": peak}


def home_env(home: Path, url: str, corpus: str) -> dict:
    """A `rag` process's environment: its own data directory, the shared Chroma server."""
    home.mkdir(parents=True, exist_ok=True)
    return rag_env(home, RAG_CHROMA_URL=url, RAG_CORPUS=corpus)


class Writer(threading.Thread):
    """Cycles of `rag add`, `rag index`, `rag remove` (the previous cycle's documents) until
    `done` is set and at least `min_cycles` have finished (so that something was removed)."""

    def __init__(self, env: dict, corpus: str, folder: Path, min_cycles: int = 2):
        super().__init__(daemon=True)
        self.env, self.corpus, self.folder, self.min_cycles = env, corpus, folder, min_cycles
        self.done = threading.Event()
        self.runs: list[dict] = []
        self.present: list[str] = []  # uploads that should be in the store at the end
        self.removed: list[str] = []
        self.cycles = 0

    def run(self) -> None:
        while not (self.done.is_set() and self.cycles >= self.min_cycles):
            files = []
            for j in range(DOCS):
                n = self.cycles * DOCS + j
                path = self.folder / f"note-{n}.md"
                path.write_text(f"# Load note {n}: tidal lattice {n}\n\nWe measure tidal "
                                f"lattice number {n} under shared load, cycle {self.cycles}; "
                                f"the note exists to be added and removed again.\n")
                files.append(str(path))
            add = self._run("add", *files, "--corpus", self.corpus)
            added = re.findall(r"^added .*\(([^()\s]+)\)$", add["out"], re.M)
            self._run("index", "--corpus", self.corpus)
            if self.present:
                self._run("remove", *self.present, "--corpus", self.corpus)
                self.removed += self.present
            self.present = added
            self.cycles += 1

    def _run(self, *args: str) -> dict:
        result = rag(self.env, *args)
        self.runs.append(result)
        return result


def run(args, sent: list[str], work: Path | None = None) -> dict:
    """The two-server scenario; the result (see `report`). Every process it started is stopped,
    and `work` removed unless `args.keep`."""
    if not CHROMA.exists():
        raise SystemExit(f"{CHROMA} is missing: run `make install`")
    work = Path(work or tempfile.mkdtemp(prefix="rag-load-shared-"))
    work.mkdir(parents=True, exist_ok=True)
    chroma = ChromaServer(work / "chroma").start()
    try:
        return _run(args, sent, work, chroma.url, chroma.proc)
    finally:
        chroma.stop()
        if not getattr(args, "keep", False):
            shutil.rmtree(work, ignore_errors=True)


def _run(args, sent: list[str], work: Path, url: str, chroma: subprocess.Popen) -> dict:
    serves: list[subprocess.Popen] = []
    homes = [work / "serve-a", work / "serve-b"]
    try:
        build = rag(home_env(work / "writer", url, args.corpus), "index", "--corpus",
                    args.corpus)
        if build["rc"] != 0:
            raise RuntimeError(f"rag index failed: {build['err']}")
        ports = [free_port() for _ in homes]
        for home, p in zip(homes, ports):  # both start at once
            home.mkdir(parents=True, exist_ok=True)
            serves.append(start_serve(args.corpus, p, home, wait=False, RAG_CHROMA_URL=url,
                                      RAG_CORPUS=args.corpus, RAG_GENERATOR="extractive"))
        for proc, p in zip(serves, ports):
            wait_port(p, proc)
        makers = [server_ask(p) for p in ports]
        for make in makers:
            make(0)(sent[0], args.request_timeout)  # warm up: model, index, first answer
        pids = [p.pid for p in serves] + [chroma.pid]
        before = [rss_mb(pid)[0] for pid in pids]
        writer = Writer(home_env(work / "writer", url, args.corpus), args.corpus, work)
        writer.start()
        deadline = time.monotonic() + args.timeout
        records, wall = run_clients(lambda w: makers[w % 2](w), sent, args.clients, deadline,
                                    args.request_timeout)
        after = [rss_mb(pid) for pid in pids]
        writer.done.set()
        writer.join(max(60.0, deadline - time.monotonic()))
        time.sleep(1.5)  # past REFRESH_SECONDS: each server then answers from the last write
        for make in makers:  # and saves its snapshot of it, which check_store compares
            make(0)(sent[-1], args.request_timeout)
    finally:
        for proc in serves:
            stop(proc)
    check = check_store(url, args.corpus, work, homes, writer.present, writer.removed)
    if writer.is_alive():
        check["lost"].append("the writer was still running when the store was checked")
    return {"records": records, "wall": wall, "before": before, "after": after, "pids": pids,
            "writer": writer, "check": check, "build_s": build["seconds"], "work": str(work)}


def report(result: dict, args) -> dict:
    """The figures of a run, printed and returned (saved as JSON by `load.py`)."""
    from .measure import summarize

    done = [r for r in result["records"] if r]
    errors = [r for r in done if r["error"]]
    crossed = [r for r in done if not r["error"] and not r["match"]]
    lat = summarize([r["ms"] for r in done if not r["error"]] or [0.0])
    writer, wall = result["writer"], result["wall"]
    names = ["rag serve A", "rag serve B", "chroma run"]
    failed = [f"{' '.join(r['args'][:1])}: {r['err']}" for r in writer.runs if r["rc"] != 0]
    out = {"mode": "2 rag serve + 1 chroma run + a writer", "corpus": args.corpus,
           "clients": args.clients, "questions": len(result["records"]),
           "answered": len(done) - len(errors), "errors": len(errors),
           "cross_talk": len(crossed), "not_sent_before_deadline": len(result["records"]) -
           len(done), "wall_s": wall, "throughput_qps": (len(done) - len(errors)) / wall,
           "latency_ms": lat, "rss_mb": {n: {"before": b, "after": a, "peak": p} for n, b, (a, p)
                                         in zip(names, result["before"], result["after"])},
           "writer": {"cycles": writer.cycles, "commands": len(writer.runs),
                      "failed": failed, "peak_mb": max((r["peak_mb"] for r in writer.runs),
                                                       default=0.0),
                      "seconds": {c: [round(r["seconds"], 1) for r in writer.runs
                                      if r["args"][0] == c] for c in ("add", "index", "remove")}},
           "store": result["check"], "index_s": result["build_s"],
           "error_samples": [r["error"] for r in errors[:5]],
           "mismatch_samples": [r.get("got", "") for r in crossed[:5]],
           "load_avg": os.getloadavg()}
    print(f"{out['mode']}, corpus {args.corpus}: {args.clients} clients, {out['questions']} "
          f"questions over both servers in {wall:.0f} s = {out['throughput_qps']:.2f} answers/s")
    print(f"latency ms: p50 {lat['p50']:.0f}  p95 {lat['p95']:.0f}  p99 {lat['p99']:.0f}  "
          f"max {lat['max']:.0f}")
    print(f"errors {len(errors)} (goal 0), cross-talk {len(crossed)} (goal 0), not sent before "
          f"the deadline {out['not_sent_before_deadline']}")
    for name, m in out["rss_mb"].items():
        print(f"{name} RSS: {m['before']:.0f} MB before, {m['after']:.0f} MB after, peak "
              f"{m['peak']:.0f} MB")
    w = out["writer"]
    print(f"writer: {w['cycles']} cycles of rag add ({DOCS} documents) / rag index / rag remove "
          f"during the run, {len(w['failed'])} failed command(s), peak RSS {w['peak_mb']:.0f} MB")
    st = out["store"]
    print(f"store after the run: {st['papers']} papers ({st['corpus_papers']} of the corpus, "
          f"{len(st['uploads'])} uploads), {st['chunks']} chunks; lost or wrong: "
          f"{len(st['lost'])} (goal 0){': ' + '; '.join(st['lost'][:5]) if st['lost'] else ''}")
    return out


def ok(out: dict) -> bool:
    return not (out["errors"] or out["cross_talk"] or out["not_sent_before_deadline"]
                or out["store"]["lost"] or out["writer"]["failed"] or not out["writer"]["cycles"])
