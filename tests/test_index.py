"""The index: incremental and idempotent, one collection per corpus and embedder, guarded."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rag.errors import CorpusError, EmbedderMismatchError, IndexNotFoundError
from rag.index.build import build_index as _build_index
from rag.index.opened import open_index
from rag.retrieve.retrievers import make_retriever
from rag.settings import Settings
from rag.index.store import Store


def build_index(*args, **kw):
    """`build_index` without the shipped embedding cache: these tests count what the model
    embeds (tests/test_embedding_cache.py covers the cache)."""
    return _build_index(*args, cache=False, **kw)


class Counting:
    """The real embedder, counting how many texts it embeds."""

    def __init__(self, inner, name=None, dim=None):
        self.inner, self.calls = inner, 0
        self.name = name or inner.name
        self.dim = dim or inner.dim

    def embed(self, texts):
        self.calls += len(texts)
        vecs = self.inner.embed(texts)
        return vecs if self.dim == vecs.shape[1] else np.resize(vecs, (len(texts), self.dim))


def _papers(n=5, changed=None):
    rows = []
    for line in open("seeds/icml2024.jsonl", encoding="utf-8").readlines()[:n]:
        rec = json.loads(line)
        if changed == rec["id"]:
            rec["abstract"] += " We also add a new result."
        rows.append(rec)
    return rows


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.fixture
def small(tmp_path, embedder):
    settings = Settings.load(home=str(tmp_path / "home"), env={})
    corpus = _write(tmp_path / "papers.jsonl", _papers())
    return settings, corpus, Counting(embedder), Store(settings.home_path / "chroma")


def test_a_second_run_on_an_unchanged_corpus_embeds_nothing(small):
    settings, corpus, emb, store = small
    first = build_index(settings, emb, store, corpus)
    assert first.added == 5 and first.embedded == emb.calls > 0
    emb.calls = 0
    second = build_index(settings, emb, store, corpus)
    assert (second.embedded, emb.calls, second.added, second.chunks) == (0, 0, 0, first.chunks)


def test_a_changed_paper_re_embeds_only_itself_and_a_removed_one_is_deleted(small, tmp_path):
    settings, corpus, emb, store = small
    build_index(settings, emb, store, corpus)
    rows = _papers(changed=_papers()[2]["id"])[1:]  # paper 0 removed, paper 2 changed
    _write(tmp_path / "papers.jsonl", rows)
    emb.calls = 0
    report = build_index(settings, emb, store, corpus)
    assert (report.added, report.updated, report.removed) == (0, 1, 1)
    index = open_index(settings, emb, store, corpus)
    assert {p.id for p in index.papers()} == {r["id"] for r in rows}
    changed = index.paper(rows[1]["id"])
    assert changed.text.endswith("We also add a new result.")
    assert emb.calls == report.embedded == sum(
        1 for m in index.snapshot().metas if m["paper_id"] == rows[1]["id"])


def test_every_paper_is_stored_once_and_bm25_agrees_with_chroma(small):
    settings, corpus, emb, store = small
    build_index(settings, emb, store, corpus)
    build_index(settings, emb, store, corpus)
    index = open_index(settings, emb, store, corpus)
    ids = [cid for cid, *_ in index.collection.iter_all()]
    assert len(ids) == len(set(ids)) == index.collection.count()
    assert sorted(ids) == index.snapshot().ids
    hits = make_retriever("bm25", index).retrieve(_papers()[1]["title"], 3)
    assert hits[0].paper_id == _papers()[1]["id"]


def test_the_index_refuses_vectors_of_another_embedder(small):
    settings, corpus, emb, store = small
    build_index(settings, emb, store, corpus)
    impostor = Counting(emb.inner, name=emb.name, dim=128)
    with pytest.raises(EmbedderMismatchError, match="384 dims.*128 dims"):
        build_index(settings, impostor, store, corpus)
    with pytest.raises(EmbedderMismatchError):
        open_index(settings, impostor, store, corpus)


def test_the_manifest_records_the_embedder_and_its_dimension(small):
    settings, corpus, emb, store = small
    build_index(settings, emb, store, corpus)
    index = open_index(settings, emb, store, corpus)
    manifest = json.loads((index.dir / "manifest.json").read_text())
    assert (manifest["embedder"], manifest["dim"], manifest["papers"]) == (emb.name, 384, 5)


def test_a_missing_index_says_how_to_build_it(small):
    settings, corpus, emb, store = small
    with pytest.raises(IndexNotFoundError, match="rag index --corpus"):
        open_index(settings, emb, store, corpus)


def test_bad_input_never_leaves_a_half_written_index(small, tmp_path):
    settings, corpus, emb, store = small
    build_index(settings, emb, store, corpus)
    before = open_index(settings, emb, store, corpus).collection.count()
    with open(corpus, "a", encoding="utf-8") as fh:
        fh.write('{"id": "broken", "abstract": \n')
    with pytest.raises(CorpusError, match="papers.jsonl:6"):
        build_index(settings, emb, store, corpus)
    index = open_index(settings, emb, store, corpus)
    assert index.collection.count() == before and len(index.papers()) == 5


def test_the_seed_index_holds_each_of_the_90_papers_once(seed_settings, embedder):
    index = open_index(seed_settings, embedder)
    papers = index.papers()
    assert len(papers) == len({p.id for p in papers}) == 90


def test_a_passage_widened_to_its_paper_holds_the_whole_abstract_at_the_same_offsets(
        seed_settings):
    from rag import factory

    index = factory.index(seed_settings)
    snap = index.snapshot()
    papers = {p.id: p for p in index.papers()}
    split = [pid for pid in papers if len(snap.chunks_of(pid)) >= 2]
    assert split, "some seed abstracts span two chunks"
    for pid in split:
        last = snap.passage(snap.chunks_of(pid)[-1], 0.5)
        whole = snap.whole_paper(last)
        assert (whole.start, whole.text) == (0, papers[pid].text)
        assert (whole.chunk_id, whole.score) == (last.chunk_id, last.score)
        assert set(last.sentences) < set(whole.sentences)
        assert all(papers[pid].text[s:e] == text for s, e, text in whole.sentence_texts())
    single = next(pid for pid in papers if len(snap.chunks_of(pid)) == 1)
    one = snap.passage(snap.chunks_of(single)[0], 0.5)
    assert snap.whole_paper(one) is one


def test_a_long_document_keeps_the_retrieved_chunk_when_widened(tmp_path, embedder):
    from rag.index.snapshot import WHOLE_PAPER_MAX_CHUNKS

    sentences = [f"Sentence {i} describes experiment number {i} on graph data." for i in range(400)]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "long.txt").write_text("A long report\n\n" + " ".join(sentences))
    settings = Settings.load(home=str(tmp_path / "home"), env={})
    build_index(settings, embedder, Store(path=tmp_path / "home" / "chroma"),
                str(tmp_path / "docs"))
    snap = open_index(settings, embedder, Store(path=tmp_path / "home" / "chroma"),
                      str(tmp_path / "docs")).snapshot()
    (pid,) = {m["paper_id"] for m in snap.metas}
    assert len(snap.chunks_of(pid)) > WHOLE_PAPER_MAX_CHUNKS
    chunk = snap.passage(snap.chunks_of(pid)[3], 0.4)
    assert snap.whole_paper(chunk) is chunk
