"""The shipped embedding cache (rag/index/cache.py): the vectors of every chunk of the built-in
corpora, keyed by (embedder, sha256 of the exact embedded text), are MiniLM's own vectors; an
index of those corpora embeds nothing, and a chunk whose text changed misses and is embedded.
What is embedded and BM25-indexed is the title and the chunk; Chroma stores the chunk alone."""

from __future__ import annotations

import fnmatch
import json
import random
import tomllib

import numpy as np
import pytest

from rag.index import schema
from rag.index.build import build_index
from rag.index.cache import EmbeddingCache, shipped, text_key
from rag.index.cache_build import wanted_texts
from rag.index.opened import open_index
from rag.index.store import Store
from rag.settings import Settings

from conftest import ROOT

MINILM = "all-MiniLM-L6-v2"


class Counting:
    """The real embedder, counting the texts it embeds (and keeping them)."""

    def __init__(self, inner):
        self.inner, self.name, self.dim, self.texts = inner, inner.name, inner.dim, []

    def embed(self, texts):
        self.texts += list(texts)
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def cache() -> EmbeddingCache:
    found = shipped(MINILM)
    assert found is not None, "run `python -m rag.index.cache_build`"
    return found


@pytest.fixture(scope="module")
def wanted() -> dict[str, str]:
    return wanted_texts()


def _jsonl(tmp_path, n=6, changed=None):
    rows = [json.loads(line) for line in
            (ROOT / "seeds" / "icml2024.jsonl").read_text(encoding="utf-8").splitlines()[:n]]
    for row in rows:
        if row["id"] == changed:
            row["abstract"] += " We also add a new result."
    path = tmp_path / "papers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path), rows


def test_the_indexed_text_is_the_title_then_the_chunk():
    assert schema.indexed_text("Genie: Generative Interactive Environments", "We introduce "
                               "Genie.") == "Genie: Generative Interactive Environments. " \
                                            "We introduce Genie."
    assert schema.indexed_text("", "Only text.") == "Only text."


@pytest.mark.slow
def test_the_cache_holds_every_chunk_of_both_builtin_corpora_and_nothing_else(cache, wanted):
    assert cache.embedder == MINILM and cache.dim == 384 and cache.vectors.dtype == np.float32
    assert set(cache.keys) == set(wanted) and len(wanted) >= 4351
    assert np.allclose(np.linalg.norm(cache.vectors, axis=1), 1.0, atol=1e-4)


def test_cached_vectors_are_what_minilm_computes_for_those_texts(cache, wanted, embedder):
    sample = random.Random().sample(sorted(wanted), 20)  # a new sample on every run
    fresh = embedder.embed([wanted[k] for k in sample])
    cosines = [float(np.dot(fresh[i], cache.get(wanted[k]))) for i, k in enumerate(sample)]
    assert min(cosines) > 0.9999, list(zip(sample, cosines))


def test_a_text_that_changed_by_one_character_misses(cache, wanted):
    text = next(iter(wanted.values()))
    assert cache.get(text) is not None and text_key(text) in cache.keys
    assert cache.get(text + " ") is None and cache.get(text.replace(". ", ".  ", 1)) is None


def test_an_index_of_cached_chunks_embeds_nothing_and_stores_the_plain_chunk(tmp_path, embedder,
                                                                             cache):
    corpus, rows = _jsonl(tmp_path)
    settings = Settings.load(home=str(tmp_path / "home"), env={})
    store, counting = Store(settings.home_path / "chroma"), Counting(embedder)
    report = build_index(settings, counting, store, corpus)
    assert (report.embedded, counting.texts) == (0, [])
    assert report.cached == report.chunks > len(rows) and "embedded 0 chunks" in report.summary()
    index = open_index(settings, counting, store, corpus)
    titles = {r["id"]: r["title"] for r in rows}
    for _, doc, meta, vec in index.collection.iter_all(
            include=("documents", "metadatas", "embeddings")):
        assert not doc.startswith(titles[meta["paper_id"]])  # offsets are into the abstract
        expected = cache.get(schema.indexed_text(meta["title"], doc))
        assert float(np.dot(vec, expected)) > 0.9999


def test_a_changed_paper_misses_the_cache_and_only_its_chunks_are_embedded(tmp_path, embedder):
    corpus, rows = _jsonl(tmp_path)
    settings = Settings.load(home=str(tmp_path / "home"), env={})
    store, counting = Store(settings.home_path / "chroma"), Counting(embedder)
    build_index(settings, counting, store, corpus)
    _jsonl(tmp_path, changed=rows[3]["id"])
    report = build_index(settings, counting, store, corpus)
    assert report.updated == 1 and report.embedded == len(counting.texts) > 0
    assert all(t.startswith(rows[3]["title"] + ". ") for t in counting.texts)
    assert any(t.endswith("We also add a new result.") for t in counting.texts)


def test_an_index_built_with_the_old_text_format_is_re_embedded_once(tmp_path, embedder,
                                                                     monkeypatch):
    corpus, rows = _jsonl(tmp_path, n=3)
    settings = Settings.load(home=str(tmp_path / "home"), env={})
    store = Store(settings.home_path / "chroma")
    with monkeypatch.context() as patch:
        patch.setattr(schema, "EMBED_FORMAT", 1)
        build_index(settings, embedder, store, corpus)
    report = build_index(settings, embedder, store, corpus)
    assert (report.updated, report.added) == (len(rows), 0)
    assert build_index(settings, embedder, store, corpus).updated == 0


def test_bm25_indexes_the_title_so_naming_a_paper_finds_it(tmp_path, embedder):
    from rag.retrieve.retrievers import make_retriever

    corpus, rows = _jsonl(tmp_path)
    settings = Settings.load(home=str(tmp_path / "home"), env={})
    build_index(settings, embedder, Store(settings.home_path / "chroma"), corpus)
    index = open_index(settings, embedder, Store(settings.home_path / "chroma"), corpus)
    for row in rows:
        for kind in ("bm25", "dense"):
            hits = make_retriever(kind, index).retrieve(row["title"], 3)
            assert hits[0].paper_id == row["id"], (kind, row["title"])


def test_without_the_cache_every_chunk_is_embedded(tmp_path, embedder):
    corpus, _ = _jsonl(tmp_path, n=2)
    settings = Settings.load(home=str(tmp_path / "home"), env={})
    counting = Counting(embedder)
    report = build_index(settings, counting, Store(settings.home_path / "chroma"), corpus,
                         cache=False)
    assert report.embedded == report.chunks == len(counting.texts) and report.cached == 0


def test_the_cache_file_ships_as_package_data_and_the_default_corpus_is_icml2024(tmp_path):
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["rag.seeds"]
    assert any(fnmatch.fnmatch(f"embeddings-{MINILM.lower()}.npz", p) for p in patterns)
    assert (ROOT / "seeds" / f"embeddings-{MINILM.lower()}.npz").stat().st_size < 8_000_000
    assert Settings.load(home=str(tmp_path / "home"), env={}).corpus == "icml2024"


def test_the_builder_embeds_from_scratch_and_then_reuses(tmp_path, monkeypatch, cache, wanted,
                                                         embedder):
    from rag.index import cache_build

    some = dict(sorted(wanted.items())[:3])
    monkeypatch.setattr(cache_build, "wanted_texts", lambda: some)
    assert cache_build.build(tmp_path, embedder=embedder) == (0, 3)
    built = EmbeddingCache.load(tmp_path / f"embeddings-{MINILM.lower()}.npz")
    assert built.embedder == MINILM and sorted(built.keys) == sorted(some)
    for text in some.values():
        assert float(np.dot(built.get(text), cache.get(text))) > 0.9999
    assert cache_build.build(tmp_path, embedder=embedder) == (3, 0)  # nothing changed
