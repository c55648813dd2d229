"""Papers like this one (`rag.similar`, `rag similar`): nearest papers by whole-abstract
vector, on the real seed index and the real MiniLM vectors stored in it."""

from __future__ import annotations

import json

import numpy as np
import pytest

import rag
from rag import factory
from rag.documents import add_documents
from rag.errors import PaperNotFoundError, RagError
from rag.index.vectors import paper_vectors, vectors_file
from rag.settings import Settings
from rag.ui.cli import main


def _papers(settings):
    return {p.id: p for p in rag.papers("seeds", settings)}


def test_similar_returns_k_other_papers_best_first(seed_settings):
    papers = _papers(seed_settings)
    pid = sorted(papers)[0]
    found = rag.similar(pid, 5, seed_settings)
    assert len(found) == 5 and all(isinstance(s, rag.Similar) for s in found)
    assert pid not in {s.paper.id for s in found}
    scores = [s.score for s in found]
    assert scores == sorted(scores, reverse=True) and all(-1.0 <= s <= 1.0 for s in scores)
    assert found[0].paper == papers[found[0].paper.id]  # the whole paper, text included
    assert [s.paper.id for s in rag.similar(pid, 5, seed_settings)] == \
        [s.paper.id for s in found]


def test_scores_are_cosines_of_the_mean_chunk_vectors(seed_settings):
    index = factory.index(seed_settings)
    snap = index.snapshot()
    pid = sorted(_papers(seed_settings))[3]
    # the oracle: every chunk vector read straight from Chroma, averaged per paper
    chunks = {}
    for cid, _, meta, vec in index.collection.iter_all(include=("metadatas", "embeddings")):
        chunks.setdefault(meta["paper_id"], []).append(vec)
    assert len(chunks) == len({m["paper_id"] for m in snap.metas})
    mean = {p: np.mean(v, axis=0) / np.linalg.norm(np.mean(v, axis=0)) for p, v in chunks.items()}
    expected = sorted((float(mean[pid] @ mean[q]), q) for q in mean if q != pid)[::-1][:3]
    got = rag.similar(pid, 3, seed_settings)
    assert [s.paper.id for s in got] == [q for _, q in expected]
    assert np.allclose([s.score for s in got], [c for c, _ in expected], atol=1e-5)


def test_an_unknown_id_is_a_one_line_rag_error(seed_settings):
    with pytest.raises(PaperNotFoundError) as err:
        rag.similar("no-such-paper", settings=seed_settings)
    assert isinstance(err.value, RagError) and "\n" not in str(err.value)
    assert "rag papers" in str(err.value)


def test_the_cli_prints_lines_or_json(seed_home, monkeypatch, capsys):
    monkeypatch.setenv("RAG_HOME", str(seed_home))
    pid = sorted(_papers(Settings.load(home=str(seed_home), env={}, corpus="seeds")))[1]
    assert main(["similar", pid, "-k", "3"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3 and all(len(line.split("\t")) == 3 for line in lines)
    assert main(["similar", pid, "-k", "2", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["paper_id"] for r in rows] == [line.split("\t")[1] for line in lines[:2]]
    assert set(rows[0]) == {"paper_id", "title", "authors", "url", "score"}
    assert main(["similar", "no-such-paper"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("rag: error: no paper with id 'no-such-paper'")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_an_uploaded_near_copy_is_the_papers_nearest_and_marked_as_an_upload(copy_of_seed_home,
                                                                             tmp_path):
    settings = Settings.load(home=str(copy_of_seed_home), env={})
    papers = _papers(settings)
    original = papers[sorted(papers)[7]]
    text = original.text.replace(". ", ". Indeed, ", 1)
    path = tmp_path / "copy.md"
    path.write_text(f"# {original.title} (notes)\n\n{text}\n", encoding="utf-8")
    report = add_documents([(path, "copy.md")], settings)
    new_id = report.added[0].paper_id
    found = rag.similar(new_id, 3, settings)
    assert found[0].paper.id == original.id and found[0].score > 0.95
    vectors = paper_vectors(factory.index(settings))
    assert vectors.origins[vectors.row(new_id)] == "upload"
    assert vectors.origins[vectors.row(original.id)] == "corpus"


def test_paper_vectors_are_kept_per_generation_and_reloaded(copy_of_seed_home):
    settings = Settings.load(home=str(copy_of_seed_home), env={})
    index = factory.index(settings)
    first = paper_vectors(index)
    path = vectors_file(index.dir, first.generation)
    assert path.exists()
    index._paper_vectors = None  # as a new process would: from the file, not the store
    again = paper_vectors(index)
    assert again.ids == first.ids and np.array_equal(again.vectors, first.vectors)
    assert np.allclose(np.linalg.norm(first.vectors, axis=1), 1.0, atol=1e-5)
