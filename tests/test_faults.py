"""Faults while indexing: `rag index` killed with SIGKILL at random points, two `rag index` at
once on one data directory, and the disk filling up (a real small tmpfs where root may mount
one; an injected ENOSPC from the store otherwise, and always as a quick check).

After each, the index must be complete and consistent once `rag index` has run again: every
paper exactly once, no orphan vectors, the BM25 side equal to what Chroma holds; and while an
update is broken off, the index still answers from what it held before.
"""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow  # processes, servers, crashes: `make test-fast` leaves these out

ICML = ROOT / "seeds" / "icml2024.jsonl"


def write_corpus(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(lines), encoding="utf-8")
    return path


def icml_lines(start: int, stop: int, changed: range = range(0)) -> list[str]:
    """Papers start..stop-1 of the ICML 2024 corpus; those in `changed` get a new sentence."""
    out = []
    for i, line in enumerate(ICML.read_text(encoding="utf-8").splitlines(True)[start:stop],
                             start=start):
        if i in changed:
            rec = json.loads(line)
            rec["abstract"] += " We also release a revised version of our code."
            line = json.dumps(rec) + "\n"
        out.append(line)
    return out


def rag_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "rag.ui.cli", *args]


def rag_env(home: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "RAG_HOME": str(home), **extra}


def run_rag(home: Path, *args: str, timeout: float = 900, **extra: str):
    return subprocess.run(rag_cmd(*args), cwd=ROOT, env=rag_env(home, **extra),
                          capture_output=True, text=True, timeout=timeout)


def assert_clean_error(proc, *needles: str) -> str:
    """A non-zero exit with one `rag: error:` line naming `needles`, and no traceback."""
    assert proc.returncode not in (0, None), proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("rag: error:")]
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle.lower() in lines[0].lower(), lines[0]
    return lines[0]


class Progress:
    """Reads a `rag index` process's stderr and tracks the last `done/total` it printed."""

    def __init__(self, proc: subprocess.Popen):
        self.proc, self.done, self.total, self.text = proc, -1, -1, ""
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        import re

        buf = ""
        while True:
            ch = self.proc.stderr.read(1)
            if not ch:
                return
            self.text += ch
            buf = "" if ch in "\r\n" else buf + ch
            m = re.search(r"(\d+)/(\d+) \[", buf)
            if m:
                self.done, self.total = int(m.group(1)), int(m.group(2))

    def wait_for(self, done: int, timeout: float = 600) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            if self.done >= done:
                return True
            time.sleep(0.02)
        return self.done >= done


def start_index(home: Path, corpus: Path) -> tuple[subprocess.Popen, Progress]:
    proc = subprocess.Popen(rag_cmd("index", "--corpus", str(corpus)), cwd=ROOT,
                            env=rag_env(home, RAG_EMBED_BATCH_SIZE="2"), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc, Progress(proc)


def assert_complete_and_consistent(home: Path, corpus: Path) -> None:
    """Chroma holds exactly the corpus's chunks, current and once each; the BM25 side agrees."""
    from rag.ingest.chunking import chunk_paper
    from rag.ingest.corpus import load_corpus
    from rag.models.embedders import MiniLM
    from rag.index.opened import open_index
    from rag.index.schema import paper_hash
    from rag.settings import Settings
    from rag.index.store import Store

    settings = Settings.load(home=str(home), env={})
    papers = load_corpus(str(corpus)).papers
    expected = {c.id: (p.id, paper_hash(p, settings)) for p in papers
                for c in chunk_paper(p, settings.chunk_tokens, settings.chunk_overlap)}
    index = open_index(settings, MiniLM(), Store(path=home / "chroma"), str(corpus))
    rows = list(index.collection.iter_all(include=("documents", "metadatas")))
    ids = [cid for cid, _, _, _ in rows]
    assert len(ids) == len(set(ids)) == index.collection.count()
    assert set(ids) == set(expected), "missing or orphan chunks"
    for cid, _, meta, _ in rows:
        assert (meta["paper_id"], meta["paper_hash"]) == expected[cid], cid
    assert not index.generation.startswith("dirty")
    snap = index.snapshot()
    assert list(zip(snap.ids, snap.texts)) == sorted((cid, doc) for cid, doc, _, _ in rows)
    assert snap.bm25.size == len(ids)
    assert (index.dir / f"snapshot-{snap.generation}" / "chunks.json").exists()
    assert sorted(p.id for p in index.papers()) == sorted(p.id for p in papers)


def test_sigkill_at_random_points_then_rerun_leaves_a_complete_consistent_index(tmp_path):
    home, corpus = tmp_path / "home", tmp_path / "papers.jsonl"
    # A first version of the corpus, fully indexed; the second one removes 10 papers, changes
    # 5 and adds 20, and is what the killed runs are writing.
    write_corpus(corpus, icml_lines(0, 40))
    assert run_rag(home, "index", "--corpus", str(corpus)).returncode == 0
    write_corpus(corpus, icml_lines(10, 60, changed=range(20, 25)))
    rng = random.Random(20240721)
    schedule = []
    for run in range(5):
        proc, progress = start_index(home, corpus)
        point = rng.choice(["startup", "embedding", "embedding", "after-embedding"])
        if point == "startup":
            time.sleep(rng.uniform(0.2, 4.0))
        elif point == "embedding":
            progress.wait_for(1)
            if progress.total > 0:
                progress.wait_for(rng.randrange(progress.total))
        else:
            progress.wait_for(max(progress.total, 1))
            time.sleep(rng.uniform(0.0, 0.5))
        finished = proc.poll() is not None
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
        progress.thread.join(10)
        schedule.append((point, progress.done, progress.total, finished))
        assert "Traceback" not in progress.text, progress.text
    final = run_rag(home, "index", "--corpus", str(corpus))
    assert final.returncode == 0, (schedule, final.stderr)
    assert_complete_and_consistent(home, corpus)
    again = run_rag(home, "index", "--corpus", str(corpus))
    assert "embedded 0 chunks" in again.stdout, (schedule, again.stdout)


def test_a_second_rag_index_on_the_same_data_directory_stops_with_a_clear_message(tmp_path):
    # Changed abstracts miss the shipped embedding cache: the first run has to embed them all.
    home = tmp_path / "home"
    corpus = write_corpus(tmp_path / "papers.jsonl", icml_lines(0, 40, changed=range(40)))
    first, progress = start_index(home, corpus)
    assert progress.wait_for(0), progress.text  # the lock is held from before the first batch
    second = run_rag(home, "index", "--corpus", str(corpus), timeout=300)
    assert_clean_error(second, "another `rag index`", str(home))
    assert first.wait(900) == 0, progress.text
    assert_complete_and_consistent(home, corpus)


def test_two_rag_index_started_together_never_corrupt_the_index(tmp_path):
    home, corpus = tmp_path / "home", write_corpus(tmp_path / "papers.jsonl", icml_lines(0, 15))
    procs = [subprocess.Popen(rag_cmd("index", "--corpus", str(corpus)), cwd=ROOT,
                              env=rag_env(home), text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(2)]
    results = [(p.wait(900), *p.communicate()) for p in procs]
    for code, out, err in results:
        assert code in (0, 1) and "Traceback" not in err, err
        if code == 1:
            assert "another `rag index` (" in err and ") is writing" in err  # names the holder
    assert 0 in [code for code, _, _ in results]
    assert_complete_and_consistent(home, corpus)


def _can_mount_tmpfs(where: Path) -> bool:
    if os.geteuid() != 0:
        return False
    where.mkdir(parents=True, exist_ok=True)
    ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)],
                        capture_output=True).returncode == 0
    if ok:
        subprocess.run(["umount", str(where)], capture_output=True)
    return ok


def test_a_full_disk_stops_indexing_with_a_clear_error_and_keeps_the_old_index(tmp_path):
    """A real small tmpfs as the data directory: it fills up while `rag index` adds papers."""
    import shutil

    mnt = tmp_path / "small-disk"
    if not _can_mount_tmpfs(mnt):
        pytest.skip("mounting a tmpfs needs root; the injected-failure test below covers this")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mnt)], check=True)
    try:
        home = mnt / "home"
        corpus = write_corpus(tmp_path / "papers.jsonl", icml_lines(0, 20))
        assert run_rag(home, "index", "--corpus", str(corpus)).returncode == 0
        from rag.index.locks import SPACE_RESERVE_BYTES

        used = shutil.disk_usage(mnt).used
        # Room for the reserve `rag index` holds while writing, and for a few dozen chunks
        # more: not for 300 more papers.
        subprocess.run(["mount", "-o", f"remount,size={used + SPACE_RESERVE_BYTES + 600_000}",
                        str(mnt)], check=True)
        write_corpus(corpus, icml_lines(0, 320))
        failed = run_rag(home, "index", "--corpus", str(corpus), RAG_EMBED_BATCH_SIZE="4")
        assert_clean_error(failed, "disk is full", "rag index")
        # The old index still answers, in a new process, on the still-full disk.
        asked = run_rag(home, "ask", "--json", "--corpus", str(corpus), "--generator",
                        "extractive", "What is PhiFlow, the differentiable simulation toolkit?")
        assert asked.returncode == 0, asked.stderr
        cited = {c["paper_id"] for c in json.loads(asked.stdout)["citations"]}
        assert "icml2024-poster-35005" in cited
        listed = run_rag(home, "papers", "--corpus", str(corpus))
        assert listed.returncode == 0, listed.stderr
        old = {json.loads(line)["id"] for line in icml_lines(0, 20)}
        assert old <= {line.split("\t")[0] for line in listed.stdout.splitlines()}
        # Now not even the reserve fits: refused before anything is written.
        filler = mnt / "filler"
        with open(filler, "wb") as f:
            f.write(bytes(max(shutil.disk_usage(mnt).free - 2**20, 0)))
        refused = run_rag(home, "index", "--corpus", str(corpus))
        assert_clean_error(refused, "disk is full", "nothing was written")
        filler.unlink()
        # Once there is room again, the next run finishes the update.
        subprocess.run(["mount", "-o", "remount,size=256m", str(mnt)], check=True)
        write_corpus(corpus, icml_lines(0, 30))  # keep the final run short
        done = run_rag(home, "index", "--corpus", str(corpus))
        assert done.returncode == 0, done.stderr
        assert_complete_and_consistent(home, corpus)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_an_injected_write_failure_keeps_the_old_index_usable(tmp_path, embedder, monkeypatch):
    """The store's write fails with ENOSPC on the second batch (a deterministic fault)."""
    import chromadb.api.models.Collection as chroma_collection

    import rag
    from rag import factory
    from rag.errors import StoreUnavailableError
    from rag.index.build import build_index
    from rag.index.store import store_for
    from rag.settings import Settings

    home = tmp_path / "home"
    corpus = write_corpus(tmp_path / "papers.jsonl", icml_lines(0, 12))
    settings = Settings.load(home=str(home), env={}, corpus=str(corpus), embed_batch_size=2)
    build_index(settings, embedder, store_for(settings))
    write_corpus(corpus, icml_lines(0, 30, changed=range(0, 3)))
    real_upsert, calls = chroma_collection.Collection.upsert, []

    def upsert(self, *args, **kwargs):
        calls.append(1)
        if len(calls) >= 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_upsert(self, *args, **kwargs)

    monkeypatch.setattr(chroma_collection.Collection, "upsert", upsert)
    with pytest.raises(StoreUnavailableError) as err:
        build_index(settings, embedder, store_for(settings))
    assert "disk is full" in str(err.value) and "rag index" in str(err.value)
    monkeypatch.setattr(chroma_collection.Collection, "upsert", real_upsert)

    factory._embedders[("minilm", "")] = embedder
    answer = rag.ask("What is PhiFlow, the differentiable simulation toolkit?",
                     settings=settings, generator="extractive")
    assert "icml2024-poster-35005" in {c.paper_id for c in answer.citations}
    assert factory.index(settings).interrupted
    old = {json.loads(line)["id"] for line in icml_lines(0, 12)}
    assert old <= {p.id for p in rag.papers(settings=settings)}

    report = build_index(settings, embedder, store_for(settings))
    assert report.papers == 30
    assert_complete_and_consistent(home, corpus)


# -- what a failing store says: only real damage suggests a rebuild ----------------------------

def _api_change(real):
    """`real`, as if chromadb's API had changed under us: every call is a TypeError."""
    def changed(self, *args, **kwargs):
        return real(self, *args, include_distances=True, **kwargs)

    changed.__qualname__ = real.__qualname__
    return changed


def test_a_chromadb_api_change_is_reported_as_a_bug_not_as_a_damaged_index(
        copy_of_seed_home, embedder, monkeypatch, capsys):
    import chromadb.api.models.Collection as chroma_collection

    import rag
    from rag import factory
    from rag.errors import IndexCorruptError, RagError
    from rag.ui.cli import main

    factory._embedders[("minilm", "")] = embedder
    monkeypatch.setenv("RAG_HOME", str(copy_of_seed_home))
    monkeypatch.setattr(chroma_collection.Collection, "query",
                        _api_change(chroma_collection.Collection.query))
    before = sorted(p.name for p in copy_of_seed_home.rglob("*"))
    with pytest.raises(RagError) as err:
        rag.ask("Which kernels avoid mean reversion in Gaussian process regression?",
                home=str(copy_of_seed_home), retriever="dense", generator="extractive")
    message = str(err.value)
    assert not isinstance(err.value, IndexCorruptError)
    assert "chromadb raised TypeError: " in message and "in Collection.query" in message
    assert "not a damaged index" in message and "rebuild" not in message
    assert main(["ask", "--retriever", "dense", "Which kernels avoid mean reversion?"]) == 1
    line = capsys.readouterr().err.strip()
    assert line.startswith("rag: error: chromadb raised TypeError") and "\n" not in line
    assert "rebuild" not in line
    assert sorted(p.name for p in copy_of_seed_home.rglob("*")) == before


def test_rebuild_does_not_set_aside_or_delete_an_index_that_failed_for_another_reason(
        copy_of_seed_home, embedder, monkeypatch):
    from chromadb.api.client import Client

    import rag
    from rag import factory
    from rag.errors import IndexCorruptError, RagError
    from rag.index.build import build_index
    from rag.settings import Settings

    factory._embedders[("minilm", "")] = embedder
    settings = Settings.load(home=str(copy_of_seed_home), env={})
    monkeypatch.setattr(Client, "delete_collection", _api_change(Client.delete_collection))
    with pytest.raises(RagError) as err:
        build_index(settings, embedder, factory.store(settings), "seeds", rebuild=True)
    assert not isinstance(err.value, IndexCorruptError)
    assert "deleting collection" in str(err.value) and "not a damaged index" in str(err.value)
    monkeypatch.undo()
    assert not [p for p in copy_of_seed_home.iterdir() if ".damaged-" in p.name]
    factory.forget_index(settings)
    answer = rag.ask("Which kernels avoid mean reversion in Gaussian process regression?",
                     settings=settings, generator="extractive")
    assert answer.citations, "the index was left as it was"


@pytest.mark.parametrize("exc, kind, needles", [
    (RuntimeError("error returned from database: (code: 11) database disk image is malformed"),
     "corrupt", ["is damaged", "rag index --rebuild"]),
    (RuntimeError("error returned from database: (code: 26) file is not a database"),
     "corrupt", ["is damaged", "rag index --rebuild"]),
    (FileNotFoundError(errno.ENOENT, "No such file or directory", "STORE/seg/header.bin"),
     "corrupt", ["is damaged", "rag index --rebuild"]),
    (TypeError("get_or_create_collection() got an unexpected keyword argument 'configuration'"),
     "bug", ["chromadb raised TypeError", "in opening", "incompatible chromadb version",
             "not a damaged index", "left as it is"]),
    (AttributeError("'Collection' object has no attribute 'upsert'"),
     "bug", ["chromadb raised AttributeError", "not a damaged index"]),
    (RuntimeError("database is locked"), "other",
     ["chromadb failed in opening", "database is locked", "left as it is"]),
    (PermissionError(errno.EACCES, "Permission denied", "STORE/chroma.sqlite3"), "other",
     ["chromadb failed", "Permission denied"]),
    (BaseException("called `Result::unwrap()` on an `Err` value"), "other",
     ["chromadb failed", "unwrap"]),  # a Rust panic: not proof of damage
])
def test_only_evidence_of_damage_suggests_a_rebuild(tmp_path, exc, kind, needles):
    from rag.errors import IndexCorruptError, RagError, StoreUnavailableError
    from rag.index.store_errors import store_error

    store = tmp_path / "chroma"
    if isinstance(exc, OSError) and exc.filename:
        exc.filename = exc.filename.replace("STORE", str(store))
    err = store_error(exc, "", store, "opening collection 'seeds'")
    assert isinstance(err, RagError)
    assert isinstance(err, IndexCorruptError) == (kind == "corrupt")
    assert ("rebuild" in str(err)) == (kind == "corrupt"), str(err)
    if kind == "corrupt":
        assert err.unreadable and str(store) in str(err)
    if kind == "other":
        assert isinstance(err, StoreUnavailableError)
    for needle in needles:
        assert needle in str(err), str(err)


def test_a_file_missing_outside_the_store_is_not_damage(tmp_path):
    from rag.errors import IndexCorruptError
    from rag.index.store_errors import store_error

    exc = FileNotFoundError(errno.ENOENT, "No such file or directory", "/etc/missing.conf")
    assert not isinstance(store_error(exc, "", tmp_path / "chroma"), IndexCorruptError)


def test_a_server_error_names_the_server_and_never_suggests_a_local_rebuild():
    from rag.errors import StoreUnavailableError
    from rag.index.store_errors import store_error

    err = store_error(ValueError("Could not connect to a Chroma server. Are you sure it is "
                                 "running?"), "http://127.0.0.1:9", None, "connecting")
    assert isinstance(err, StoreUnavailableError)
    assert "Chroma server at http://127.0.0.1:9 cannot be reached" in str(err)
    assert "rebuild" not in str(err)
