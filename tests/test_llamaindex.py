"""The llama-index adapters, used only through llama-index's own interfaces, on the seed index.

`retriever.retrieve(str | QueryBundle)` gives NodeWithScore/TextNode with the paper and the
character span of each passage; `query_engine.query(str)` gives a Response whose source nodes
are exactly the passages the answer cites.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.response.schema import Response
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

import rag
from rag import factory
from rag.answer.prompts import CANNOT_ANSWER
from rag.llamaindex import RagQueryEngine, RagRetriever

QUESTION = "Which kernels avoid mean reversion in Gaussian process regression?"


@pytest.fixture
def papers(seed_settings) -> dict:
    return {p.id: p for p in rag.papers(settings=seed_settings)}


@pytest.mark.parametrize("query", [QUESTION, QueryBundle(QUESTION)], ids=["str", "bundle"])
def test_the_retriever_returns_scored_text_nodes_with_paper_and_span(seed_settings, papers,
                                                                     query):
    retriever = RagRetriever(seed_settings, k=4)
    assert isinstance(retriever, BaseRetriever)
    nodes = retriever.retrieve(query)
    ours = factory.retriever(seed_settings).retrieve(QUESTION, 4, seed_settings.max_per_paper)
    assert [n.node.node_id for n in nodes] == [p.chunk_id for p in ours], "same passages, order"
    assert [n.score for n in nodes] == pytest.approx([p.score for p in ours])
    for n, passage in zip(nodes, ours):
        assert isinstance(n, NodeWithScore) and isinstance(n.node, TextNode)
        meta = n.node.metadata
        paper = papers[meta["paper_id"]]
        assert (meta["title"], meta["url"], meta["authors"]) == (paper.title, paper.url,
                                                                 paper.authors)
        assert paper.text[meta["start"]:meta["end"]] == n.node.text == passage.text
        assert (n.node.start_char_idx, n.node.end_char_idx) == (meta["start"], meta["end"])
        assert n.node.ref_doc_id == paper.id
    assert "non-positive kernels" in nodes[0].node.text.lower() or "mean revert" in \
        nodes[0].node.text.lower()


def test_what_an_llm_would_read_of_a_node_is_title_and_text_not_offsets(seed_settings):
    node = RagRetriever(seed_settings, k=1).retrieve(QUESTION)[0].node
    shown = node.get_content(metadata_mode=MetadataMode.LLM)
    assert node.metadata["title"] in shown and node.text in shown
    assert "start:" not in shown and "url:" not in shown


def test_filters_and_settings_overrides_reach_the_retriever(seed_settings):
    first = RagRetriever(seed_settings, k=1).retrieve(QUESTION)[0].node.metadata["paper_id"]
    only = RagRetriever(seed_settings, filters={"paper_id": [first]}, k=5, max_per_paper=3,
                        retriever="bm25").retrieve("kernels")
    assert only and {n.node.metadata["paper_id"] for n in only} == {first}
    assert len(only) <= 3


def test_the_query_engine_answers_with_the_cited_passages_as_source_nodes(seed_settings,
                                                                          papers):
    engine = RagQueryEngine(seed_settings)
    assert isinstance(engine, BaseQueryEngine)
    response = engine.query(QUESTION)
    answer = rag.ask(QUESTION, settings=seed_settings)
    assert isinstance(response, Response)
    assert str(response) == answer.text and "[1]" in str(response)
    assert [n.node.metadata["citation"] for n in response.source_nodes] == \
        [c.n for c in answer.citations]
    for node, citation in zip(response.source_nodes, answer.citations):
        meta = node.node.metadata
        assert meta["paper_id"] == citation.paper_id and meta["quote"] == citation.quote
        assert citation.quote in papers[meta["paper_id"]].text
    assert response.metadata["abstained"] is False
    assert response.metadata["generator"] == "extractive"
    assert response.metadata["answer"].passages, "every retrieved passage is still reachable"


def test_an_unanswerable_question_is_an_abstention_without_sources(seed_settings):
    response = RagQueryEngine(seed_settings).query(
        "What is the best recipe for sourdough bread with rye flour?")
    assert str(response) == CANNOT_ANSWER
    assert response.source_nodes == [] and response.metadata["abstained"] is True


def test_importing_rag_does_not_import_llama_index():
    code = "import sys, rag; print(sorted(m for m in sys.modules if m.startswith('llama_index')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
