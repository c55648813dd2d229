"""llama-index adapters: our retriever as a llama-index retriever, `rag.ask` as a query engine.

The library's only module that imports llama-index (`ingest/tokens.py` only locates its bundled
tiktoken files; `bench/` builds a llama-index baseline to compare against). `import rag` does
not import it; llama-index users do:

    from rag.llamaindex import RagQueryEngine, RagRetriever
    nodes = RagRetriever(k=3).retrieve("Which kernels avoid mean reversion?")
    nodes[0].node.metadata["paper_id"], nodes[0].node.metadata["start"]   # "ICML-123", 0
    response = RagQueryEngine().query("Which kernels avoid mean reversion?")
    str(response)                                           # "... not mean reverting [1]."
    response.source_nodes[0].node.metadata["citation"]      # 1: the passage behind "[1]"

- `RagRetriever` (a `BaseRetriever`) returns each retrieved passage as a `NodeWithScore` of a
  `TextNode` whose metadata holds the paper id, title, URL, authors, source and the passage's
  character span in its paper (`start`, `end`; also `start_char_idx`/`end_char_idx`); the
  node's source (`ref_doc_id`) is the paper id.
- `RagQueryEngine` (a `BaseQueryEngine`) runs the whole pipeline (`rag.ask`: retrieval, the
  abstention gate, the generator, the citation check) and returns a llama-index `Response`:
  the checked answer text, `source_nodes` = the cited passages in citation order (metadata
  `citation` = the n of `[n]`, `quote` = the sentence(s) it rests on), and `metadata` with
  `abstained`, `generator`, `notices`, `query`, `support_rate` and the full `answer` (rag's
  Answer, with every retrieved passage).

It never reads llama-index's global `Settings` for an LLM or an embedding model (ours are set
by rag's own `Settings`), so nothing falls back to OpenAI. It does not stream, and the async
methods run the synchronous code.
"""

from __future__ import annotations

from typing import Any, Sequence

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.response.schema import Response
from llama_index.core.callbacks.base import CallbackManager
from llama_index.core.schema import (NodeRelationship, NodeWithScore, QueryBundle,
                                     RelatedNodeInfo, TextNode)

from . import factory
from .pipeline import ask
from .retrieve.retrievers import Filters, Retriever
from .settings import Settings
from .types import Answer, Citation, Passage

# Shown to an LLM that reads the node (llama-index puts metadata in the prompt); spans are not.
_LLM_KEYS = ("title", "authors", "paper_id")


def passage_node(passage: Passage, score: float | None = None, **extra: Any) -> NodeWithScore:
    """A passage as a scored llama-index TextNode (metadata: paper, URL, character span)."""
    metadata = {"paper_id": passage.paper_id, "title": passage.title, "url": passage.url,
                "authors": passage.authors, "source": passage.source, "start": passage.start,
                "end": passage.end, "rank": passage.rank, **extra}
    hidden = [key for key in metadata if key not in _LLM_KEYS]
    node = TextNode(id_=passage.chunk_id, text=passage.text, metadata=metadata,
                    start_char_idx=passage.start, end_char_idx=passage.end,
                    excluded_llm_metadata_keys=hidden, excluded_embed_metadata_keys=hidden,
                    relationships={NodeRelationship.SOURCE:
                                   RelatedNodeInfo(node_id=passage.paper_id)})
    return NodeWithScore(node=node, score=float(passage.score if score is None else score))


def citation_node(citation: Citation) -> NodeWithScore:
    """The passage a citation points at, with its number and the quote it rests on."""
    return passage_node(citation.passage, citation=citation.n, quote=citation.quote)


def _settings(settings: Settings | None, overrides: dict[str, Any]) -> Settings:
    settings = settings or Settings.load()
    return settings.replace(**overrides) if overrides else settings


class RagRetriever(BaseRetriever):
    """Retrieval over the index of `settings.corpus` (`settings.retriever`: hybrid, dense, bm25).

    Args:
        settings: rag's Settings; built from defaults, config file and env when omitted.
        filters: only these papers or sources, e.g. `{"paper_id": ["ICML-123"]}`.
        backend: one of rag's retrievers to wrap instead of the one `settings.retriever` names.
        callback_manager: llama-index callbacks (none by default).
        **overrides: any Settings field, e.g. `k=5`, `max_per_paper=2`, `retriever="bm25"`.
    """

    def __init__(self, settings: Settings | None = None, *, filters: Filters | None = None,
                 backend: Retriever | None = None,
                 callback_manager: CallbackManager | None = None, **overrides: Any):
        super().__init__(callback_manager=callback_manager or CallbackManager([]))
        self.settings = _settings(settings, overrides)
        self.filters = filters
        self.backend = backend or factory.retriever(self.settings)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        passages = self.backend.retrieve(query_bundle.query_str, self.settings.k,
                                        self.settings.max_per_paper, self.filters)
        return [passage_node(p) for p in passages]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._retrieve(query_bundle)


class RagQueryEngine(BaseQueryEngine):
    """Cited answers from `rag.ask`, as llama-index Responses.

    Args:
        settings: rag's Settings; built from defaults, config file and env when omitted.
        history: earlier (question, answer) pairs, oldest first, for follow-up questions.
        callback_manager: llama-index callbacks (none by default).
        **overrides: any Settings field, e.g. `generator="openai"`, `k=3`.
    """

    def __init__(self, settings: Settings | None = None, *, history: Sequence | None = None,
                 callback_manager: CallbackManager | None = None, **overrides: Any):
        super().__init__(callback_manager=callback_manager)
        self.settings = _settings(settings, overrides)
        self.history = list(history or [])

    def _query(self, query_bundle: QueryBundle) -> Response:
        return to_response(ask(query_bundle.query_str, self.history, self.settings))

    async def _aquery(self, query_bundle: QueryBundle) -> Response:
        return self._query(query_bundle)

    def _get_prompt_modules(self) -> dict:
        return {}


def to_response(answer: Answer) -> Response:
    """rag's Answer as a llama-index Response whose source nodes are the cited passages."""
    return Response(
        response=answer.text,
        source_nodes=[citation_node(c) for c in answer.citations],
        metadata={"abstained": answer.abstained, "generator": answer.generator,
                  "notices": list(answer.notices), "query": answer.query or answer.question,
                  "support_rate": answer.support_rate, "answer": answer})
