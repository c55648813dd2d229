"""Hybrid fusion: z-score fusion (the default) and reciprocal rank fusion, on hand-made
candidate lists, then on the real seed index."""

from __future__ import annotations

import math

import pytest

from rag.retrieve.retrievers import HybridRetriever, _zscores
from rag.types import Passage


class FakeSide:
    """A retriever side that returns fixed candidates (the logic under test is the fusion)."""

    def __init__(self, name: str, hits: list[tuple[str, float]]):
        self.name, self.hits, self.snaps = name, hits, []

    def _candidates(self, query, n, filters, snap):
        self.snaps.append(snap)
        return [Passage(chunk_id=cid, paper_id=cid, title=cid, text=cid, score=s,
                        scores={self.name: s}) for cid, s in self.hits[:n]]


SNAP = object()  # stands for the index snapshot a question reads


def hybrid(fusion: str) -> HybridRetriever:
    h = HybridRetriever.__new__(HybridRetriever)
    h.fusion, h.rrf_k = fusion, 60
    h.dense = FakeSide("dense", [("A", 0.9), ("B", 0.5), ("C", 0.1)])
    h.bm25 = FakeSide("bm25", [("B", 10.0), ("D", 2.0)])
    return h


def test_zscores_standardise_and_survive_constant_scores():
    assert _zscores([3.0, 1.0]) == [1.0, -1.0]
    assert _zscores([2.0, 2.0]) == [0.0, 0.0]
    assert _zscores([]) == []


def test_zscore_fusion_sums_standardised_scores_with_the_cutoff_for_a_missing_side():
    fused = hybrid("zscore")._candidates("q", 50, None, SNAP)
    z = math.sqrt(1.5)  # z of 0.9 among (0.9, 0.5, 0.1)
    scores = {p.chunk_id: p.score for p in fused}
    assert scores["B"] == pytest.approx(0.0 + 1.0)
    assert scores["A"] == pytest.approx(z - 1.0)  # BM25 did not return A: its lowest z, -1
    assert scores["C"] == pytest.approx(-z - 1.0)
    assert scores["D"] == pytest.approx(-z - 1.0)  # dense did not return D: its lowest z
    assert [p.chunk_id for p in fused] == ["B", "A", "C", "D"]  # a tie goes by chunk id
    assert fused[0].scores == {"dense": 0.5, "bm25": 10.0}  # both sides' evidence kept


def test_rrf_fusion_is_still_available_and_ranks_by_reciprocal_rank():
    fused = hybrid("rrf")._candidates("q", 50, None, SNAP)
    assert [p.chunk_id for p in fused] == ["B", "A", "D", "C"]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)


def test_an_unknown_fusion_is_refused(seed_settings):
    from rag import factory

    with pytest.raises(ValueError, match="unknown fusion 'max'"):
        HybridRetriever(factory.index(seed_settings), fusion="max")


def test_hybrid_on_the_seed_index_puts_the_gold_paper_first(seed_settings):
    from rag import factory

    passages = factory.retriever(seed_settings).retrieve(
        "Which kernels avoid mean reversion in Gaussian process regression?", 5)
    assert passages[0].paper_id == "icml2024-poster-34936"
    assert [p.rank for p in passages] == [1, 2, 3, 4, 5]
    assert all(a.score >= b.score for a, b in zip(passages, passages[1:]))
    assert all("dense" in p.scores for p in passages)  # the gate's evidence is there


@pytest.mark.parametrize("fusion", ["zscore", "rrf"])
def test_the_fusion_setting_chooses_how_hybrid_fuses(seed_settings, fusion):
    from rag import factory

    settings = seed_settings.replace(fusion=fusion)
    retriever = factory.retriever(settings)
    assert retriever.fusion == fusion
    passages = retriever.retrieve(
        "Which kernels avoid mean reversion in Gaussian process regression?", 3)
    assert passages[0].paper_id == "icml2024-poster-34936"


def test_an_unknown_fusion_setting_names_the_choices():
    from rag.errors import ConfigError
    from rag.settings import Settings

    with pytest.raises(ConfigError, match="zscore, rrf"):
        Settings.load(env={"RAG_FUSION": "max"})


def test_both_sides_of_a_hybrid_read_the_one_snapshot_the_question_took():
    # so a write finishing between them cannot give a question two versions of a paper
    h = hybrid("zscore")
    h._candidates("q", 50, None, SNAP)
    assert h.dense.snaps == h.bm25.snaps == [SNAP]
