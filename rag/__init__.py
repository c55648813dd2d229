"""icml-rag: cited answers from ICML 2024 abstracts.

    >>> import rag
    >>> answer = rag.ask("Which kernels avoid mean reversion in Gaussian process regression?")
    >>> print(answer.text, answer.citations[0].passage.title)

Heavy libraries (torch, chromadb) are imported on first use, not on `import rag`.
"""

from __future__ import annotations

from typing import Any

from .errors import RagError
from .answer.prompts import CANNOT_ANSWER
from .settings import Settings
from .types import Answer, Citation, Paper, PaperMap, Passage, Similar

__all__ = ["ask", "ask_stream", "table", "index_corpus", "papers", "similar", "paper_map", "Answer",
           "Citation", "Paper", "PaperMap", "Passage", "Similar", "Settings", "RagError",
           "CANNOT_ANSWER"]
__version__ = "0.1.0"


def ask(question: str, history=None, settings: Settings | None = None, **overrides: Any) -> Answer:
    """Answer a question from the indexed abstracts; see `rag.pipeline.ask`."""
    from .pipeline import ask as _ask

    return _ask(question, history, settings, **overrides)


def ask_stream(question: str, history=None, settings: Settings | None = None, **overrides: Any):
    """Yield answer text pieces, then the Answer; see `rag.pipeline.ask_stream`."""
    from .pipeline import ask_stream as _stream

    return _stream(question, history, settings, **overrides)


def table(topic: str, columns, paper_ids=(), settings: Settings | None = None,
          **overrides: Any) -> Answer:
    """A table across papers, every cell cited or "not stated"; see `rag.pipeline.table`."""
    from .pipeline import table as _table

    return _table(topic, columns, paper_ids, settings, **overrides)


def index_corpus(corpus: str | None = None, settings: Settings | None = None, progress=None,
                 rebuild: bool = False, uploads=()):
    """Build or update the index of a corpus, embedding only what changed; an IndexReport.
    `uploads`: papers to add to it as uploaded documents (`rag.documents.add_documents`).

    (Not called `index`: that name belongs to the `rag.index` module.)"""
    from . import factory
    from .index.build import build_index

    settings = settings or Settings.load()
    report = build_index(settings, factory.embedder(settings), factory.store(settings),
                         corpus or settings.corpus, progress=progress, rebuild=rebuild,
                         uploads=uploads)
    factory.forget_index(settings, corpus)
    # The corpus's background for the answerability gate, measured now rather than on the
    # first question of every process (kept on disk per index generation).
    from .retrieve.background import background

    background(factory.index(settings, corpus))
    return report


def papers(corpus: str | None = None, settings: Settings | None = None) -> list[Paper]:
    """Every paper in the index of a corpus."""
    from . import factory

    settings = settings or Settings.load()
    return factory.index(settings, corpus).papers()


def similar(paper_id: str, k: int = 10, settings: Settings | None = None,
            corpus: str | None = None) -> list[Similar]:
    """The `k` papers most like `paper_id`, best first, by whole-abstract embedding (the mean
    of each paper's chunk vectors), the paper itself left out.

    Args:
        paper_id: an id of the index (`rag papers` lists them).
        k: how many papers to return.
        settings: the settings to open the index with (loaded if None).
        corpus: the corpus whose index to read (the settings' corpus if None).

    Raises `rag.errors.PaperNotFoundError` (a RagError) for an id the index does not hold."""
    from . import factory
    from .retrieve.similar import similar as _similar

    settings = settings or Settings.load()
    return _similar(factory.index(settings, corpus), paper_id, k)


def paper_map(corpus: str | None = None, settings: Settings | None = None) -> PaperMap:
    """The map of the conference: every paper's 2-D position (from its whole-abstract
    embedding), the clusters over them with their labels, uploads placed and marked. Drawn
    the first time it is asked for (tens of seconds for the 2,634 ICML papers) and kept with
    the index; see `rag.index.paper_map`."""
    from . import factory
    from .index.paper_map import paper_map as _map

    settings = settings or Settings.load()
    return _map(factory.index(settings, corpus))
