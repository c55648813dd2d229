"""Sources that cannot erase each other: re-indexing a corpus touches only that corpus's papers,
and an uploaded document leaves the index only through `rag remove ID`, which says what it
removed. Runs on a real embedded store and on a real `chroma run` server shared by two data
directories (two machines)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import rag
from rag import factory
from rag.documents import add_documents, remove_document
from rag.errors import InputError
from rag.ingest.corpus import uploads_dir
from rag.settings import Settings
from rag.ui.cli import main
from test_chroma_server import CHROMA, ChromaServer

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
    for bad, words in ((pid, "already removed"), ("no-such-id", "never added"),
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
    assert err.startswith("rag: error: no document") and err.count("\n") == 1


# -- two machines, one Chroma server -----------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not CHROMA.exists():
        pytest.skip(f"{CHROMA} is missing: run `make install`")
    server = ChromaServer(tmp_path_factory.mktemp("shared-chroma") / "data").start()
    yield server
    server.stop()


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
