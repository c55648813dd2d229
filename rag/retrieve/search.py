"""Retrieval along the question's route (`route.py`), through the question's one snapshot.

- person:  the author index answers, not retrieval: the person's papers (those on the topic,
           for "X's work on Y"), or none at all;
- compare: the two papers the question names by title, one passage each;
- list:    the papers that belong in the topic's list, judged paper by paper, likeliest first
           (`membership.py`: the topic and each half of an "or" searched);
- table:   a list's papers for its topic, or the papers given by id (`rag.table`);
- fact:    the usual top `k`, with a paper the question names by title moved to rank 1.

Example: search(Route(fact, pinned=("<Genie's id>",)), ...) -> [Genie's passage, ...].
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..models.embedders import embed_query
from ..settings import Settings
from ..text import Idf
from ..types import Passage
from .catalog import Catalog
from .membership import covers, members
from .route import Route

if TYPE_CHECKING:
    from ..index.snapshot import Snapshot
    from .retrievers import Retriever

TOPIC_COVERAGE = 0.5  # IDF-weighted share of a person's topic words a paper must contain


def search(route: Route, retriever: "Retriever", snap: "Snapshot", cat: Catalog, idf: Idf,
           settings: Settings) -> list[Passage]:
    """The passages of the route, best first, all read through `snap`."""
    intent, query = route.intent, route.intent.query
    if route.author is not None:
        return _person(route, cat, retriever, idf)
    if intent.kind == "compare" or (intent.kind == "table" and route.pinned):
        passages = [_passage(pid, cat, retriever, query) for pid in route.pinned]
        return [p for p in passages if p]
    if intent.kind in ("list", "table"):
        return _ranked(members(query, retriever, snap, cat, idf, settings.max_per_paper))
    passages = retriever.retrieve(query, settings.k, settings.max_per_paper, snap=snap)
    if route.pinned:
        passages = _pin(passages, route.pinned[0], cat, retriever, query, settings.k)
    return passages


def _person(route: Route, cat: Catalog, retriever, idf: Idf) -> list[Passage]:
    """The person's papers as passages, on the topic if one is given (best match first)."""
    match, topic = route.author, route.intent.topic
    if match is None or match.status != "found":
        return []
    papers = list(match.papers)
    if topic and papers:
        cover = {pid: covers(topic, pid, cat, idf) for pid in papers}
        papers = sorted((pid for pid in papers if cover[pid] >= TOPIC_COVERAGE),
                        key=lambda pid: -cover[pid])
    else:
        papers.sort(key=lambda pid: cat.titles_of.get(pid, "").lower())
    passages = [_passage(pid, cat, retriever, topic or None) for pid in papers]
    return _ranked([p for p in passages if p])


def _passage(paper_id: str, cat: Catalog, retriever, query: str | None) -> Passage | None:
    """The paper's whole abstract, with its cosine to `query` (if any) as the gate's evidence."""
    p = cat.passage(paper_id)
    if p is None or query is None:
        return p
    index = retriever.index
    vec = index.collection.vectors([p.chunk_id]).get(p.chunk_id)
    if vec is not None:
        qv = getattr(retriever, "query_vector", None)
        q = qv(query) if qv else embed_query(index.embedder, query)
        p.scores["dense"] = float(np.dot(vec, q))
    return p


def _pin(passages: list[Passage], paper_id: str, cat: Catalog, retriever, query: str, k: int
         ) -> list[Passage]:
    """`passages` with the named paper's passage first (fetched when retrieval missed it)."""
    mine = [p for p in passages if p.paper_id == paper_id]
    rest = [p for p in passages if p.paper_id != paper_id]
    if not mine:
        p = _passage(paper_id, cat, retriever, query)
        mine = [p] if p else []
    if mine and passages:
        mine[0].score = max(p.score for p in passages)
    return _ranked((mine + rest)[: max(k, len(mine))])


def _ranked(passages: list[Passage]) -> list[Passage]:
    for rank, p in enumerate(passages, start=1):
        p.rank = rank
    return passages
