"""The map of the conference (`rag.paper_map`): deterministic, cached with the index and
reused when nothing changed, uploads placed beside the papers they are like, clusters named by
their papers' words, and a layout that keeps papers' neighbourhoods (on the real MiniLM
vectors of the seed index, and of the whole conference for the quality figure)."""

from __future__ import annotations

import numpy as np
import pytest

import rag
from rag import factory
from rag.documents import add_documents
from rag.index import clusters, layout
from rag.index.vectors import paper_vectors
from rag.settings import Settings
from rag.ui.cli import main


@pytest.fixture
def settings(copy_of_seed_home) -> Settings:
    return Settings.load(home=str(copy_of_seed_home), env={})


def test_neighbour_preservation_is_one_for_a_faithful_map_and_near_k_over_n_for_noise():
    rng = np.random.default_rng(1)
    flat = rng.normal(size=(200, 2))
    vectors = np.hstack([flat, np.zeros((200, 3))])  # the map is the space itself
    # cosine neighbours of 2-D points are angles, not distances: unit circle points agree
    circle = flat / np.linalg.norm(flat, axis=1, keepdims=True)
    assert layout.neighbour_preservation(circle, circle) == 1.0
    noise = layout.neighbour_preservation(vectors, rng.normal(size=(200, 2)))
    assert noise < 0.15


def test_the_layout_is_deterministic_and_keeps_neighbourhoods(seed_settings):
    vectors = paper_vectors(factory.index(seed_settings)).vectors
    first, second = layout.fit(vectors), layout.fit(vectors)
    assert first.shape == (90, 2) and np.array_equal(first, second)
    quality = layout.neighbour_preservation(vectors, first)
    random = layout.neighbour_preservation(vectors, np.random.default_rng(0).normal(
        size=first.shape))
    assert quality >= 0.5 and quality > 3 * random


def test_the_map_is_kept_with_the_index_and_reused_by_a_reindex_that_changes_nothing(settings):
    index = factory.index(settings)
    drawn = rag.paper_map(settings=settings)
    assert len(drawn.points) == 90 and drawn.seconds > 0
    assert {p.cluster for p in drawn.points} == {c.id for c in drawn.clusters}
    saved = sorted(p.name for p in (index.dir / "map").iterdir())
    assert [n.split("-")[0] for n in saved] == ["layout", "map"]
    index._paper_map = None  # as a new process: read back, not drawn
    again = rag.paper_map(settings=settings)
    assert again.points == drawn.points and again.clusters == drawn.clusters
    rag.index_corpus("seeds", settings, rebuild=True)  # a new generation, the same vectors
    rebuilt = rag.paper_map(settings=settings)
    assert rebuilt.generation != drawn.generation
    assert rebuilt.seconds == 0.0  # the layout was read, not fitted again
    assert rebuilt.points == drawn.points


def test_an_upload_is_placed_beside_the_paper_it_copies_and_marked_as_theirs(settings,
                                                                           tmp_path):
    before = rag.paper_map(settings=settings)
    papers = {p.id: p for p in rag.papers("seeds", settings)}
    original = papers[sorted(papers)[11]]
    path = tmp_path / "mine.md"
    path.write_text(f"# My notes on {original.title}\n\n"
                    f"{original.text.replace('. ', '. Notably, ', 1)}\n", encoding="utf-8")
    new_id = add_documents([(path, "mine.md")], settings).added[0].paper_id
    after = rag.paper_map(settings=settings)
    mine = [p for p in after.points if p.upload]
    assert [p.paper_id for p in mine] == [new_id] and mine[0].cluster == -1
    assert [p for p in after.points if not p.upload] == before.points  # the corpus stays put
    where = {p.paper_id: np.array([p.x, p.y]) for p in after.points}
    gaps = [np.linalg.norm(where[new_id] - where[p.paper_id]) for p in before.points]
    assert np.linalg.norm(where[new_id] - where[original.id]) <= np.quantile(gaps, 0.1)


def test_cluster_labels_are_the_words_that_set_a_cluster_apart():
    texts = (["Graph neural networks pass messages between graph nodes."] * 4
             + ["Diffusion models denoise images with a diffusion sampler."] * 4)
    assigned = np.array([0] * 4 + [1] * 4)
    names = clusters.labels(texts, assigned, 2)
    # each cluster's most frequent own word first; nothing of the other cluster's
    assert names[0].startswith("graph, ") and not {"diffusion", "denoise"} & set(
        names[0].split(", "))
    assert names[1].startswith("diffusion, ") and "graph" not in names[1]
    assert len(names[0].split(", ")) == clusters.LABEL_WORDS
    assert clusters.cluster_count(2634) == 26 and clusters.cluster_count(90) == 5


def test_rag_map_writes_a_png_with_the_labels(seed_home, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("RAG_HOME", str(seed_home))
    out = tmp_path / "map.png"
    assert main(["map", "--png", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000
    line = capsys.readouterr().out
    assert "90 papers" in line and "clusters" in line and str(out) in line


@pytest.mark.slow
def test_the_conference_map_keeps_more_than_40_percent_of_neighbourhoods(full_settings):
    """The quality figure of docs/map.md on the 2,634 papers: 0.42 measured, against 0.004 for
    a random layout. The issue's goal was 0.5: no setting of openTSNE, UMAP or PaCMAP tried
    reached it (docs/map.md lists them)."""
    pmap = rag.paper_map(settings=full_settings)
    found = paper_vectors(factory.index(full_settings))
    where = {p.paper_id: (p.x, p.y) for p in pmap.points}
    positions = np.array([where[pid] for pid in found.ids])
    quality = layout.neighbour_preservation(found.vectors, positions)
    random = layout.neighbour_preservation(found.vectors, np.random.default_rng(0).normal(
        size=positions.shape))
    assert len(pmap.points) == 2634 and len(pmap.clusters) == 26
    assert quality >= 0.40 and random < 0.01
