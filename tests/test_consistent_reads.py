"""Readers never see half an update. While one process re-indexes a corpus whose papers changed
(a JSONL corpus switched between two versions of 20 seed abstracts), other processes ask
questions and list the papers without pause; every passage they get, and every paper listed,
is the whole old or the whole new version of its paper (never chunks of both), every paper is
listed exactly once, and no request fails. On a real `chroma run` server with separate data
directories (a warm reader, and a cold one opening a new data directory on each round as a
machine starting mid-update would), and on one embedded store whose data directory the
processes share. Also for the shared embedded store: two writers at once (exactly one writes,
the other is told who), and a writer killed with SIGKILL (the store stays whole, a rerun
completes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chroma_server import chroma_server_fixture

pytestmark = pytest.mark.slow  # processes, servers, crashes: `make test-fast` leaves these out

PAPERS = 20
server = chroma_server_fixture("consistent-chroma")

READER = r"""
import json, os, sys, tempfile
import rag
from rag import factory
from rag.settings import Settings

corpus, versions, stop, mode = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
cold = mode == "cold"  # a new data directory each round (a machine starting mid-update)
questions = [v["title"] for v in versions.values()]
stats = {"requests": 0, "dirty": 0, "versions": [0, 0], "bad": []}


def version(pid, text, start, end):
    return {i for i, v in enumerate(versions[pid]["texts"]) if v[start:end] == text}


def check(settings, q):
    gen = factory.index(settings, corpus).generation
    stats["dirty"] += gen.startswith("dirty")
    a = rag.ask(q, settings=settings, generator="extractive", k=6, max_per_paper=3)
    found = {}
    for p in a.passages:
        v = version(p.paper_id, p.text, p.start, p.end)
        if not v:
            stats["bad"].append(f"{q[:40]}: passage {p.chunk_id} is from neither version")
        found.setdefault(p.paper_id, []).append(v)
    for pid, vs in found.items():
        if not set.intersection(*vs):
            stats["bad"].append(f"{q[:40]}: {pid}'s passages mix versions {vs}")
    papers = rag.papers(corpus, settings)
    ids = [p.id for p in papers]
    if sorted(ids) != sorted(versions):
        stats["bad"].append(f"papers listed: {len(ids)} ({len(set(ids))} distinct), "
                            f"missing {sorted(set(versions) - set(ids))[:3]}")
    for p in papers:
        v = version(p.id, p.text, 0, len(p.text)) if p.id in versions else set()
        if not v:
            stats["bad"].append(f"paper {p.id} listed with neither version's text")
        for i in v:
            stats["versions"][i] += 1
    stats["requests"] += 1


n = 0
while not os.path.exists(stop):
    n += 1
    home = tempfile.mkdtemp(prefix="cold-", dir=os.environ["RAG_HOME"]) if cold else None
    settings = Settings.load(home=home) if cold else Settings.load()
    try:
        check(settings, questions[n % len(questions)])
    except Exception as exc:
        stats["bad"].append(f"request failed: {type(exc).__name__}: {exc}")
    if mode != "warm":  # cold, or fresh: the index opened again from the same directory
        factory.forget_index(settings, corpus)
print(json.dumps(stats), flush=True)
"""


@pytest.fixture
def corpus(tmp_path) -> tuple[Path, Path, list[str]]:
    """(the corpus file, holding version 0, the versions file, the two JSONL texts)."""
    from rag.ingest.corpus import load_corpus

    versions, lines = {}, [[], []]
    for p in load_corpus("seeds").papers[:PAPERS]:
        new = p.text.replace(". ", ". Revised: ") + (" Revised: this version adds a closing "
                                                     "sentence on lattice calibration drift.")
        versions[p.id] = {"title": p.title, "texts": [p.text, new]}
        for i, text in enumerate((p.text, new)):
            lines[i].append(json.dumps({"id": p.id, "title": p.title, "authors": p.authors,
                                        "url": p.url, "abstract": text}))
    path, vpath = tmp_path / "papers.jsonl", tmp_path / "versions.json"
    path.write_text("\n".join(lines[0]) + "\n", encoding="utf-8")
    vpath.write_text(json.dumps(versions), encoding="utf-8")
    return path, vpath, ["\n".join(v) + "\n" for v in lines]


def env_for(home: Path, url: str = "", **more: str) -> dict[str, str]:
    env = {**os.environ, "RAG_HOME": str(home), "HF_HUB_OFFLINE": "1", **more}
    env.pop("RAG_CHROMA_URL", None)
    return {**env, "RAG_CHROMA_URL": url} if url else env


def rag_index(env: dict, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import sys; from rag.ui.cli import main; "
                             "sys.exit(main(sys.argv[1:]))", "index", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def updates_while_reading(corpus, writer_env: dict, reader_envs: list[tuple[dict, str]],
                          tmp_path: Path) -> list[dict]:
    """Switch the corpus to version 1, then back to 0, each re-indexed by a separate writer
    process (embedding version 1's chunks two at a time, so its write takes a while) while
    the readers ask; the readers' stats."""
    path, vpath, texts = corpus
    stop = tmp_path / "stop"
    readers = [subprocess.Popen([sys.executable, "-c", READER, str(path), str(vpath), str(stop),
                                 mode], env=env, stdout=subprocess.PIPE, text=True)
               for env, mode in reader_envs]
    try:
        time.sleep(8)  # the readers load the model and answer from version 0 first
        for v in (1, 0):
            path.write_text(texts[v], encoding="utf-8")
            proc = rag_index(writer_env, "--corpus", str(path))
            out, err = proc.communicate(timeout=600)
            assert proc.returncode == 0, err
            time.sleep(2)
    finally:
        stop.touch()
        results = [json.loads(r.communicate(timeout=300)[0].strip().splitlines()[-1])
                   for r in readers]
    return results


def assert_consistent(results: list[dict]) -> None:
    for stats in results:
        assert stats["bad"] == [], stats["bad"][:5]
        assert stats["requests"] >= 5 and all(stats["versions"]), stats  # saw both versions
    assert sum(s["dirty"] for s in results) >= 1, results  # and asked during an update


def build(corpus, settings) -> None:
    import rag

    report = rag.index_corpus(str(corpus[0]), settings)
    assert report.papers == PAPERS and report.embedded == 0


@pytest.mark.server
def test_readers_on_other_machines_never_see_half_an_update(server, corpus, tmp_path):
    from rag.settings import Settings

    writer, warm, cold = (tmp_path / n for n in ("writer", "warm", "cold"))
    for home in (writer, warm, cold):
        home.mkdir()
    build(corpus, Settings.load(home=str(writer), chroma_url=server.url, env={}))
    on = {"RAG_CORPUS": str(corpus[0])}
    results = updates_while_reading(
        corpus, env_for(writer, server.url, RAG_EMBED_BATCH_SIZE="2", **on),
        [(env_for(warm, server.url, **on), "warm"), (env_for(cold, server.url, **on), "cold")],
        tmp_path)
    assert_consistent(results)
    assert_whole(Settings.load(home=str(warm), chroma_url=server.url, env={}), corpus[0], 0)


def assert_whole(settings, corpus: Path, version: int) -> None:
    """Every paper exactly once, complete and in `version`, no orphan chunk, BM25 agreeing."""
    from rag import factory

    factory.forget_index(settings, str(corpus))
    index = factory.index(settings, str(corpus))
    rows = list(index.collection.iter_all(include=("documents", "metadatas")))
    versions = json.loads((corpus.parent / "versions.json").read_text(encoding="utf-8"))
    assert sorted({m["paper_id"] for _, _, m, _ in rows}) == sorted(versions)
    for cid, doc, meta, _ in rows:
        assert cid == f"{meta['paper_id']}#{meta['chunk']}"
        assert sum(m["paper_id"] == meta["paper_id"] for _, _, m, _ in rows) == meta["n_chunks"]
        assert versions[meta["paper_id"]]["texts"][version][meta["start"]:meta["end"]] == doc
    snap = index.snapshot()
    assert sorted(zip(snap.ids, snap.texts)) == sorted((cid, doc) for cid, doc, _, _ in rows)
    assert not index.generation.startswith("dirty")


def test_readers_sharing_an_embedded_store_never_see_half_an_update(corpus, tmp_path):
    from rag.settings import Settings

    home = tmp_path / "home"
    home.mkdir()
    build(corpus, Settings.load(home=str(home), env={}))
    on = {"RAG_CORPUS": str(corpus[0])}
    results = updates_while_reading(corpus, env_for(home, RAG_EMBED_BATCH_SIZE="2", **on),
                                    [(env_for(home, **on), "warm"),
                                     (env_for(home, **on), "fresh")], tmp_path)
    assert_consistent(results)
    assert_whole(Settings.load(home=str(home), env={}), corpus[0], 0)


RACER = """
import sys
from rag import factory
from rag.settings import Settings
from rag.ui.cli import main
factory.embedder(Settings.load())  # load the model first: the race is for the lock alone
print("ready", flush=True)
sys.stdin.readline()
sys.exit(main(["index", *sys.argv[1:]]))
"""


def racer(env: dict, *args: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", RACER, *args], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


def go(proc: subprocess.Popen) -> None:
    proc.stdin.write("go\n")
    proc.stdin.flush()


def test_writers_sharing_an_embedded_store_write_one_at_a_time_and_a_killed_one_loses_nothing(
        corpus, tmp_path):
    """Readers ask throughout. The update to version 1 is killed with SIGKILL at random points
    three times; then two writers start it at once: exactly one writes (and finishes it), the
    other is told who holds the lock and since when."""
    import random
    import socket

    from rag.settings import Settings

    path, vpath, texts = corpus
    home, stop = tmp_path / "home", tmp_path / "stop"
    home.mkdir()
    build(corpus, Settings.load(home=str(home), env={}))
    on = {"RAG_CORPUS": str(path)}
    readers = [subprocess.Popen([sys.executable, "-c", READER, str(path), str(vpath), str(stop),
                                 mode], env=env_for(home, **on), stdout=subprocess.PIPE,
                                text=True) for mode in ("warm", "fresh")]
    writer_env = env_for(home, RAG_EMBED_BATCH_SIZE="2", **on)
    path.write_text(texts[1], encoding="utf-8")
    try:
        rng = random.Random(15)
        for delay in [rng.uniform(0.5, 6.0) for _ in range(3)]:
            proc = racer(writer_env, "--corpus", str(path))
            go(proc)
            time.sleep(delay)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(30)
        procs = [racer(writer_env, "--corpus", str(path)) for _ in range(2)]
        for proc in procs:
            go(proc)
        results = [(p.wait(600), *p.communicate()) for p in procs]
    finally:
        stop.touch()
        stats = [json.loads(r.communicate(timeout=300)[0].strip().splitlines()[-1])
                 for r in readers]
    assert sorted(rc for rc, _, _ in results) == [0, 1], results
    (_, _, err), = [r for r in results if r[0] == 1]
    winner = procs[[r[0] for r in results].index(0)].pid
    assert err.startswith(f"rag: error: another `rag index` ({socket.gethostname()}:{winner}, "
                          f"since "), err
    assert f"is writing {home}; wait for it to finish" in err and err.count("\n") == 1
    for s in stats:
        assert s["bad"] == [] and s["requests"] >= 3, s
    assert_whole(Settings.load(home=str(home), env={}), path, 1)
