"""The one place that turns settings into components: embedder, store, index, retriever, and
the `Engine` assembling them for `ask()` (`rag/engine.py`; its language-model backend is
registered in `answer/backends.py`). Expensive parts (the embedding model, store clients,
opened indexes) are cached per process and keyed by the settings that define them, and so are
engines (the last ENGINES_KEPT), so changing a setting takes effect on the next question
without a restart. Nothing here calls the engine, and the engine never calls back here.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

from .models.embedders import Embedder, MiniLM
from .engine import Engine
from .index.opened import Index, open_index
from .index.store import store_for
from .retrieve.retrievers import Retriever, make_retriever
from .settings import Settings
from .index.store import Store

_lock = threading.RLock()
_embedders: dict[tuple, Embedder] = {}
_stores: dict[tuple, Store] = {}
_indexes: dict[tuple, Index] = {}
_engines: "OrderedDict[tuple, Engine]" = OrderedDict()
ENGINES_KEPT = 32


def embedder(settings: Settings) -> Embedder:
    key = (settings.embedder, settings.embed_model if settings.embedder == "openai" else "")
    with _lock:
        if key not in _embedders:
            if settings.embedder == "openai":
                from .models.openai_embedder import OpenAIEmbedder

                _embedders[key] = OpenAIEmbedder(settings)
            else:
                _embedders[key] = MiniLM(batch_size=settings.embed_batch_size)
        return _embedders[key]


def store(settings: Settings) -> Store:
    key = (str(settings.home_path), settings.chroma_url)
    with _lock:
        if key not in _stores:
            _stores[key] = store_for(settings)
        return _stores[key]


def index(settings: Settings, corpus: str | None = None) -> Index:
    corpus = corpus or settings.corpus
    emb = embedder(settings)
    key = (str(settings.home_path), settings.chroma_url, corpus, emb.name)
    with _lock:
        idx = _indexes.get(key)
        if idx is None:
            idx = _indexes[key] = open_index(settings, emb, store(settings), corpus)
        return idx


def forget_index(settings: Settings, corpus: str | None = None) -> None:
    """Drop a cached index (after it was rebuilt or found broken)."""
    corpus = corpus or settings.corpus
    with _lock:
        for key in [k for k in _indexes if k[0] == str(settings.home_path) and k[2] == corpus]:
            del _indexes[key]
        for key in [k for k in _engines if k[0].home_path == settings.home_path
                    and k[0].corpus == corpus]:
            del _engines[key]  # it holds the index


def retriever(settings: Settings, name: str | None = None) -> Retriever:
    return make_retriever(name or settings.retriever, index(settings), settings.candidates,
                          settings.rrf_k, settings.fusion)


def llm_configured() -> bool:
    return bool(os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_KEY"))


def generator_name(settings: Settings) -> str:
    """The generator `auto` stands for: openai when an endpoint or key is set, else extractive."""
    if settings.generator != "auto":
        return settings.generator
    return "openai" if llm_configured() else "extractive"


def idf(settings: Settings) -> tuple:
    """(vocabulary, idf per term) of the corpus's BM25 side, as the index is now."""
    return index(settings).snapshot().idf()


def engine(settings: Settings) -> Engine:
    """The stages assembled for `settings`, built once and shared (see `rag.engine`).

    Keyed by the settings and the generator `auto` resolves to now, so setting OPENAI_BASE_URL
    takes effect on the next question; `forget_index` drops the engines of an index."""
    name = generator_name(settings)
    key = (settings, name)
    with _lock:
        found = _engines.get(key)
        if found is not None:
            _engines.move_to_end(key)
            return found
        idx = index(settings)
        found = Engine(settings, name, idx,
                       make_retriever(settings.retriever, idx, settings.candidates,
                                      settings.rrf_k, settings.fusion),
                       embedder(settings))
        _engines[key] = found
        while len(_engines) > ENGINES_KEPT:
            _engines.popitem(last=False)
        return found
