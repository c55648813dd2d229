"""Several machines on one store. Sources cannot erase each other: re-indexing a corpus touches
only that corpus's papers, and an uploaded document leaves the index only through `rag remove
ID`, which says what it removed. One writer at a time: the lock is a lease in the Chroma server,
renewed while held, expiring when its writer is killed. Runs on a real embedded store and on a
real `chroma run` server shared by separate data directories and processes (machines)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

import rag
from rag import factory
from rag.documents import add_documents, remove_document, uploaded_ids
from rag.errors import IndexLockedError, InputError
from rag.index.lease import Lease
from rag.index.sources import removed_uploads
from rag.index.store import Store
from rag.ingest.corpus import load_corpus, uploads_dir
from rag.settings import Settings
from rag.ui.cli import main
from chroma_server import chroma_server_fixture

pytestmark = pytest.mark.slow  # processes, servers, crashes: `make test-fast` leaves these out

NOTE = ("# Lattice origami for protein folding\n\n"
        "We introduce lattice origami, a method that folds protein chains on a hexagonal "
        "lattice in $\\mathbb{R}^3$ using origami moves. Lattice origami finds native folds "
        "of small proteins forty times faster than replica-exchange Monte Carlo.\n")
TITLE = "Lattice origami for protein folding"


def upload(settings: Settings, tmp_path: Path) -> str:
    note = tmp_path / "note-upload"
    note.write_text(NOTE, encoding="utf-8")
    report = add_documents([(note, "Lattice origami.md")], settings)
    assert [a.title for a in report.added] == [TITLE]
    return report.added[0].paper_id


def assert_whole(settings: Settings) -> list[str]:
    """Every paper exactly once and complete (no orphan chunk), BM25 agreeing with Chroma; the
    paper ids."""
    factory.forget_index(settings, "seeds")
    index = factory.index(settings)
    rows = list(index.collection.iter_all(include=("documents", "metadatas")))
    by_paper = Counter(m["paper_id"] for _, _, m, _ in rows)
    for cid, _, meta, _ in rows:
        assert by_paper[meta["paper_id"]] == meta["n_chunks"], cid
        assert cid == f"{meta['paper_id']}#{meta['chunk']}"
    snap = index.snapshot()
    assert sorted(zip(snap.ids, snap.texts)) == sorted((cid, doc) for cid, doc, _, _ in rows)
    ids = [p.id for p in rag.papers("seeds", settings)]
    assert len(ids) == len(set(ids)) == len(by_paper)
    return ids


# -- embedded store ----------------------------------------------------------------------------


@pytest.fixture
def settings(copy_of_seed_home) -> Settings:
    return Settings.load(home=str(copy_of_seed_home), env={})


def test_reindexing_keeps_an_upload_and_only_remove_deletes_it(settings, tmp_path):
    pid = upload(settings, tmp_path)
    for rebuild in (False, True):
        report = rag.index_corpus("seeds", settings, rebuild=rebuild)
        assert (report.removed, report.papers) == (0, 91)
        assert TITLE in {p.title for p in rag.papers("seeds", settings)}
    assert len(assert_whole(settings)) == 91
    removed = remove_document(pid, settings)
    assert removed.summary().startswith(f"removed \u201c{TITLE}\u201d ({pid}, 1 chunk(s)) "
                                        f"from corpus seeds")
    assert removed.files == ["Lattice origami.md"]
    assert not [p for p in uploads_dir(settings, "seeds").iterdir() if p.suffix == ".md"]
    assert len(assert_whole(settings)) == 90
    assert rag.index_corpus("seeds", settings).papers == 90  # not brought back
    folder = uploads_dir(settings, "seeds")  # nor by a copy left behind, even on --rebuild
    (folder / "copy.md").write_text(NOTE, encoding="utf-8")
    assert rag.index_corpus("seeds", settings, rebuild=True).papers == 90
    assert rag.index_corpus("seeds", settings).papers == 90


def test_removing_a_built_in_paper_an_unknown_id_or_twice_is_a_one_line_error(settings, tmp_path):
    pid = upload(settings, tmp_path)
    built_in = rag.papers("seeds", settings)[0].id
    remove_document(pid, settings)
    for bad, words in ((pid, "was already removed from corpus 'seeds'"),
                       ("no-such-id", "no document 'no-such-id' in corpus 'seeds'"),
                       (built_in, "is a paper of corpus 'seeds', not an uploaded document")):
        with pytest.raises(InputError, match=words) as err:
            remove_document(bad, settings)
        assert "\n" not in str(err.value)
    assert len(assert_whole(settings)) == 90


def test_rag_remove_says_what_it_removed_and_fails_in_one_line(settings, tmp_path, monkeypatch,
                                                               capsys):
    pid = upload(settings, tmp_path)
    monkeypatch.setenv("RAG_HOME", str(settings.home_path))
    assert main(["remove", pid]) == 0
    assert capsys.readouterr().out.startswith(f"removed \u201c{TITLE}\u201d ({pid}")
    assert main(["remove", pid]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"rag: error: '{pid}' was already removed") and err.count("\n") == 1


# -- two machines, one Chroma server -----------------------------------------------------------


server = chroma_server_fixture("shared-chroma")


def machine(tmp_path: Path, name: str, url: str) -> Settings:
    home = tmp_path / name
    home.mkdir()
    (home / "config.toml").write_text('corpus = "seeds"\n', encoding="utf-8")
    return Settings.load(home=str(home), chroma_url=url, env={})


@pytest.mark.server
def test_a_machine_reindexing_keeps_what_another_uploaded(server, tmp_path, embedder):
    factory._embedders[("minilm", "")] = embedder
    a, b = machine(tmp_path, "a", server.url), machine(tmp_path, "b", server.url)
    rag.index_corpus("seeds", a, rebuild=True)  # a fresh collection for this test
    pid = upload(a, tmp_path)
    report = rag.index_corpus("seeds", b)
    assert (report.added, report.updated, report.removed, report.uploads) == (0, 0, 0, 1)
    assert report.embedded == 0
    for m in (a, b):
        ids = assert_whole(m)
        assert len(ids) == 91 and pid in ids
    rag.index_corpus("seeds", a)  # and back: A re-indexes too, nothing lost
    assert len(assert_whole(b)) == 91
    removed = remove_document(pid, b)  # B removes what A uploaded: gone for both
    assert (removed.title, removed.chunks, removed.files) == (TITLE, 1, [])
    for m in (a, b):
        assert pid not in assert_whole(m)
    with pytest.raises(InputError, match="already removed"):
        remove_document(pid, a)
    rag.index_corpus("seeds", a)  # A still holds its copy: it does not bring it back
    assert pid not in assert_whole(b)
    assert upload(a, tmp_path) == pid  # until A adds it again
    assert pid in assert_whole(b)


# -- one writer at a time, kept in the server ----------------------------------------------------

RACER = """
import sys, time
from rag import factory
from rag.settings import Settings
from rag.ui.cli import main
factory.embedder(Settings.load())  # load the model first: the race is for the lock alone
print("ready", flush=True)
sys.stdin.readline()
sys.exit(main(["index", "--rebuild"]))
"""
HOLDER = """
import sys, time
from rag.index.lease import Lease
from rag.index.sources import removed_uploads
from rag.index.store import Store
Lease(Store(url=sys.argv[1]), ttl=2.0).__enter__()
print("held", flush=True)
time.sleep(120)
"""


def env_for(home: Path, url: str) -> dict[str, str]:
    return {**os.environ, "RAG_HOME": str(home), "RAG_CHROMA_URL": url, "RAG_CORPUS": "seeds",
            "HF_HUB_OFFLINE": "1"}


@pytest.mark.server
def test_two_writers_at_once_exactly_one_writes_and_the_other_is_told_who(server, tmp_path):
    procs = [subprocess.Popen([sys.executable, "-c", RACER],
                              env=env_for(tmp_path / name, server.url), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name in ("a", "b")]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    for p in procs:  # go, both at once
        p.stdin.write("go\n")
        p.stdin.flush()
    results = [(p.wait(180), *p.communicate()) for p in procs]
    assert sorted(rc for rc, _, _ in results) == [0, 1], results
    (_, _, err), = [r for r in results if r[0] == 1]
    winner = procs[[r[0] for r in results].index(0)].pid
    assert err.startswith(f"rag: error: another writer ({socket.gethostname()}:{winner}) has "
                          f"been writing to the Chroma server {server.url} since ")
    assert err.count("\n") == 1
    settings = machine(tmp_path, "check", server.url)
    ids = assert_whole(settings)  # the winner's complete index, no corruption (with the
    assert {p.id for p in load_corpus("seeds").papers} <= set(ids)  # uploads it recovered)
    assert not factory.index(settings).generation.startswith("dirty")


@pytest.mark.server
def test_a_held_lease_is_renewed_and_a_killed_writers_lease_expires(server, tmp_path):
    store = Store(url=server.url)
    with Lease(store, ttl=1.0) as held:
        time.sleep(2.5)  # longer than its ttl: renewed
        with pytest.raises(IndexLockedError, match=f"another writer \\({held.owner}\\)"):
            Lease(store).__enter__()
        with pytest.raises(IndexLockedError):  # a real writer is refused, nothing written
            rag.index_corpus("seeds", machine(tmp_path, "b", server.url))
    with Lease(store):  # released on exit
        pass
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, server.url], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        with pytest.raises(IndexLockedError, match=f":{proc.pid}\\)"):
            Lease(store).__enter__()
        time.sleep(2.2)  # its lease ran out: taken over
        with Lease(store) as lease:
            assert Lease(store).holder()["token"] == lease.token
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def test_a_snapshot_another_process_may_still_be_loading_is_not_deleted_under_it(tmp_path):
    from rag.index.bm25 import BM25
    from rag.index.snapshot import KEEP_SECONDS, Snapshot, load_snapshot, save_snapshot

    def save(gen: str) -> None:
        texts = [f"{gen} lattice origami", f"{gen} protein folding"]
        save_snapshot(Snapshot(gen, ["a#0", "b#0"], texts, [{}, {}], BM25.build(texts)),
                      tmp_path)

    save("g1")
    save("g2")  # a re-index elsewhere: g1's readers still find it whole
    assert load_snapshot(tmp_path, "g1").texts == ["g1 lattice origami", "g1 protein folding"]
    old = time.time() - KEEP_SECONDS - 1
    os.utime(tmp_path / "snapshot-g1", (old, old))
    save("g3")  # long after: g1 is removed, the recent g2 kept
    assert sorted(p.name for p in tmp_path.glob("snapshot-*")) == ["snapshot-g2",
                                                                   "snapshot-g3"]


def test_a_rebuild_killed_half_way_loses_no_upload(settings, tmp_path, monkeypatch):
    from rag.index import build

    pid = upload(settings, tmp_path)
    (tmp_path / "other.md").write_text("# Bee waggle dances\n\nHoney bees encode the distance "
                                       "and direction of flowers in a waggle dance.\n")
    gone = add_documents([(tmp_path / "other.md", "other.md")], settings).added[0].paper_id
    remove_document(gone, settings)
    for f in uploads_dir(settings, "seeds").iterdir():  # as if uploaded through another machine
        f.unlink()

    def killed(*args, **kw):
        raise SystemExit("killed")  # after the collection was dropped, before anything was written

    original = build._embed_and_add
    monkeypatch.setattr(build, "_embed_and_add", killed)
    with pytest.raises(SystemExit):
        rag.index_corpus("seeds", settings, rebuild=True)
    monkeypatch.setattr(build, "_embed_and_add", original)
    with pytest.raises(rag.RagError, match="is empty"):  # everything was dropped
        factory.index(settings)
    factory.forget_index(settings, "seeds")
    report = rag.index_corpus("seeds", settings)  # the next run finishes it
    assert report.papers == 91
    ids = assert_whole(settings)
    assert pid in ids and gone not in ids
    assert removed_uploads(factory.index(settings).collection) == {gone}
    assert not list(settings.home_path.glob("indexes/*/*/rebuild-pending.json"))


@pytest.mark.server
def test_a_machine_killed_at_random_points_while_rebuilding_loses_nothing(server, tmp_path,
                                                                          embedder):
    """A uploads; B runs `rag index --rebuild` and is killed with SIGKILL at a random point,
    several times, then runs again: the upload is there, every paper once, no orphan chunk."""
    import random

    factory._embedders[("minilm", "")] = embedder
    a, b = machine(tmp_path, "a", server.url), machine(tmp_path, "b", server.url)
    rag.index_corpus("seeds", a)
    for old in uploaded_ids(a):  # left by the tests before: start from the corpus alone
        remove_document(old, a)
    pid = upload(a, tmp_path)
    env = {**env_for(b.home_path, server.url), "RAG_LEASE_SECONDS": "1"}
    rng, cut = random.Random(15), 0
    pending = lambda: list(b.home_path.glob("indexes/*/*/rebuild-pending.json"))  # noqa: E731
    # Twice at a random point inside the rebuild (once it has saved what it is about to drop:
    # it takes a second or two, so a fixed delay often missed it), once at any point.
    for inside, delay in ((True, rng.uniform(0.0, 0.5)), (False, rng.uniform(0.0, 2.0)),
                          (True, rng.uniform(0.0, 0.5))):
        proc = subprocess.Popen([sys.executable, "-c", RACER], env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert proc.stdout.readline().strip() == "ready"
        proc.stdin.write("go\n")
        proc.stdin.flush()
        started = time.monotonic()
        while inside and not pending() and proc.poll() is None and \
                time.monotonic() - started < 60:
            time.sleep(0.01)
        time.sleep(delay)
        proc.kill()
        proc.wait(30)
        time.sleep(1.2)  # its lease runs out
        cut += bool(pending())
    assert cut  # killed in the middle of a rebuild at least once
    report = rag.index_corpus("seeds", b)
    assert report.papers == 91, report.summary()
    for m in (a, b):
        ids = assert_whole(m)
        assert len(ids) == 91 and pid in ids


@pytest.mark.server
def test_a_writer_whose_lease_was_taken_over_stops_writing(server):
    store = Store(url=server.url)
    with Lease(store, ttl=1.0) as lease:
        lease.check()  # held: goes on
        store.open("rag-locks").delete(["writer"])  # as if it stalled and another took over
        Lease(store).__enter__().__exit__()
        time.sleep(0.6)  # the renewal finds it gone
        with pytest.raises(IndexLockedError, match="ran out while it was stalled"):
            lease.check()
