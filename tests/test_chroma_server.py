"""Client/server mode: with `chroma_url` (env RAG_CHROMA_URL) the store is a real Chroma server
started here with `chroma run`, and indexing, retrieval and `ask()` behave exactly as with the
embedded store. The BM25 side is rebuilt from the server's documents and cached locally under
the collection's generation, so several processes sharing one server stay in step.

The server index is built from the seed chunks' vectors that the session's real MiniLM already
computed for the embedded index (same model, same texts: same vectors); anything else, such as
questions and new documents, is embedded by the model itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from chroma_server import chroma_server_fixture
from conftest import ROOT, load_questions

pytestmark = pytest.mark.server
QUESTIONS = [q for q in load_questions() if q["type"] == "fact"][:8]


class CachedEmbedder:
    """The real embedder with the vectors it already computed for known texts."""

    def __init__(self, model, vectors: dict[str, np.ndarray]):
        self.model, self.vectors = model, vectors
        self.name, self.dim = model.name, model.dim
        self.computed = 0

    def embed(self, texts):
        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if missing:
            self.computed += len(missing)
            self.vectors.update(zip(missing, self.model.embed(missing)))
        return np.stack([self.vectors[t] for t in texts]) if texts else self.model.embed([])


@pytest.fixture(scope="session")
def seed_vectors(seed_home, embedder) -> dict[str, np.ndarray]:
    from rag.index.naming import collection_name
    from rag.index.store import Store

    col = Store(path=seed_home / "chroma").open(collection_name("seeds", embedder))
    return {doc: vec for _, doc, _, vec in col.iter_all(include=("documents", "embeddings"))}


chroma_server = chroma_server_fixture("chroma-server", scope="session")


@pytest.fixture(scope="session")
def server_home(chroma_server, tmp_path_factory, embedder, seed_vectors) -> Path:
    from rag import factory
    from rag.index.build import build_index
    from rag.settings import Settings

    home = tmp_path_factory.mktemp("server-home")
    (home / "config.toml").write_text('corpus = "seeds"\n', encoding="utf-8")  # as seed_home
    settings = Settings.load(home=str(home), chroma_url=chroma_server.url, env={})
    cached = CachedEmbedder(embedder, dict(seed_vectors))
    report = build_index(settings, cached, factory.store(settings), "seeds")
    assert cached.computed == 0 and report.embedded + report.cached == len(seed_vectors)
    return home


@pytest.fixture(params=["embedded", "server"])
def settings(request, seed_home):
    """The seed index in the embedded store, then the same index in the Chroma server."""
    from rag.settings import Settings

    if request.param == "embedded":
        return Settings.load(home=str(seed_home), env={})
    home = request.getfixturevalue("server_home")
    url = request.getfixturevalue("chroma_server").url
    return Settings.load(home=str(home), chroma_url=url, env={})


def test_the_index_holds_every_seed_paper_once(settings, embedder):
    from rag import factory
    from rag.ingest.chunking import chunk_paper
    from rag.ingest.corpus import load_corpus

    papers = load_corpus("seeds").papers
    expected = {c.id for p in papers for c in chunk_paper(p, settings.chunk_tokens,
                                                          settings.chunk_overlap)}
    index = factory.index(settings)
    ids = [cid for cid, _, _, _ in index.collection.iter_all()]
    assert sorted(ids) == sorted(expected)
    assert sorted(p.id for p in index.papers()) == sorted(p.id for p in papers)


def test_reindexing_an_unchanged_corpus_embeds_nothing(settings, embedder):
    from rag import factory
    from rag.index.build import build_index

    report = build_index(settings, embedder, factory.store(settings), "seeds")
    assert (report.embedded, report.added, report.updated, report.removed) == (0, 0, 0, 0)
    assert report.papers == 90


def test_the_bm25_side_agrees_with_the_store(settings):
    from rag import factory

    index = factory.index(settings)
    snap = index.snapshot()
    stored = sorted((cid, doc) for cid, doc, _, _ in
                    index.collection.iter_all(include=("documents",)))
    assert list(zip(snap.ids, snap.texts)) == stored
    assert snap.bm25.size == len(stored)
    assert snap.generation == index.generation and not snap.generation.startswith("dirty")


@pytest.mark.parametrize("retriever", ["dense", "bm25", "hybrid"])
def test_retrieval_is_the_same_in_both_stores(seed_home, retriever, request):
    from rag import factory
    from rag.settings import Settings

    embedded = Settings.load(home=str(seed_home), env={})
    server = Settings.load(home=str(request.getfixturevalue("server_home")),
                           chroma_url=request.getfixturevalue("chroma_server").url, env={})
    for q in QUESTIONS:
        a = factory.retriever(embedded, retriever).retrieve(q["question"], 5)
        b = factory.retriever(server, retriever).retrieve(q["question"], 5)
        assert [p.chunk_id for p in a] == [p.chunk_id for p in b], q["question"]
        assert np.allclose([p.scores.get("dense", 0) for p in a],
                           [p.scores.get("dense", 0) for p in b], atol=1e-4)


def test_ask_cites_the_paper_that_answers(settings):
    import rag

    hits = 0
    for q in QUESTIONS:
        answer = rag.ask(q["question"], settings=settings, generator="extractive")
        assert not answer.abstained and answer.citations, q["question"]
        hits += any(c.paper_id in q["gold"] for c in answer.citations)
    assert hits >= len(QUESTIONS) - 1


def test_the_cli_answers_through_the_server(server_home, chroma_server):
    q = QUESTIONS[0]
    env = {**os.environ, "RAG_HOME": str(server_home), "RAG_CHROMA_URL": chroma_server.url,
           "RAG_GENERATOR": "extractive"}
    out = subprocess.run([sys.executable, "-m", "rag.ui.cli", "ask", "--json", q["question"]],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert any(c["paper_id"] in q["gold"] for c in answer["citations"])
    assert not (server_home / "chroma").exists()  # nothing went to an embedded store


def test_a_reader_sees_what_another_process_indexed(server_home, chroma_server, embedder,
                                                    seed_vectors, tmp_path):
    """Two processes share one server: a reader (a `rag serve`) opened the index, a writer
    (a `rag index` elsewhere) adds a document; the reader's BM25 side follows."""
    from rag.index.build import build_index
    from rag.index.opened import open_index
    from rag.ingest.corpus import uploads_dir
    from rag.retrieve.retrievers import BM25Retriever
    from rag.settings import Settings
    from rag.index.store import Store

    url = chroma_server.url
    reader_settings = Settings.load(home=str(server_home), chroma_url=url, env={})
    reader = open_index(reader_settings, embedder, Store(url=url))
    before = reader.snapshot().generation
    # The writer has its own data directory: only the server is shared.
    writer_settings = Settings.load(home=str(tmp_path / "writer"), chroma_url=url, env={})
    upload = uploads_dir(writer_settings, "seeds") / "quokka.txt"
    upload.parent.mkdir(parents=True)
    upload.write_text("Quokka census by drones\n\nWe count quokkas on Rottnest Island with "
                      "thermal drones and a zanzibarite detector.", encoding="utf-8")
    try:
        cached = CachedEmbedder(embedder, dict(seed_vectors))
        report = build_index(writer_settings, cached, Store(url=url), "seeds")
        assert report.added == 1 and report.embedded == 1
        reader._checked = float("-inf")  # as if REFRESH_SECONDS had passed
        assert reader.snapshot().generation != before
        top = BM25Retriever(reader).retrieve("zanzibarite quokka drones", 1)
        assert top and top[0].title == "Quokka census by drones"
    finally:  # an uploaded document leaves the shared index only when removed explicitly
        from rag.index.locks import writer_lock
        from rag.index.sources import remove_upload, upload_ids

        col = Store(url=url).open(reader.name)
        with writer_lock(writer_settings):
            for pid in upload_ids(col):
                remove_upload(col, pid, "seeds", set())
    reader._checked = float("-inf")
    assert all(p.title != "Quokka census by drones"
               for p in BM25Retriever(reader).retrieve("zanzibarite quokka drones", 5))


def test_a_new_process_loads_the_cached_bm25_side_instead_of_rebuilding_it(
        server_home, chroma_server, embedder, monkeypatch):
    from rag.index.opened import open_index
    from rag.settings import Settings
    from rag.index.collection import Collection
    from rag.index.store import Store

    settings = Settings.load(home=str(server_home), chroma_url=chroma_server.url, env={})
    first = open_index(settings, embedder, Store(url=chroma_server.url))
    gen = first.snapshot().generation
    assert (first.dir / f"snapshot-{gen}" / "chunks.json").exists()

    def no_scan(self, *a, **kw):
        raise AssertionError("the snapshot was rebuilt from the server")

    monkeypatch.setattr(Collection, "iter_all", no_scan)
    second = open_index(settings, embedder, Store(url=chroma_server.url))
    assert second.snapshot().ids == first.snapshot().ids


def test_a_server_restart_fails_one_question_clearly_then_answers_again(
        server_home, chroma_server):
    import rag
    from rag.errors import StoreUnavailableError
    from rag.settings import Settings

    settings = Settings.load(home=str(server_home), chroma_url=chroma_server.url, env={})
    question = QUESTIONS[1]["question"]
    assert not rag.ask(question, settings=settings, generator="extractive").abstained
    chroma_server.stop()
    try:
        with pytest.raises(StoreUnavailableError) as err:
            rag.ask(question, settings=settings, generator="extractive")
        message = str(err.value)
        assert chroma_server.url in message and "RAG_CHROMA_URL" in message
        assert "\n" not in message
    finally:
        chroma_server.start()
    answer = rag.ask(question, settings=settings, generator="extractive")
    assert not answer.abstained and any(c.paper_id in QUESTIONS[1]["gold"]
                                        for c in answer.citations)
