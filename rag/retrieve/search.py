"""Retrieval guided by what the question asks for (`intent.py`), against the corpus's catalog.

- person:  the author index answers, not retrieval: the person's papers (those on the topic,
           for "X's work on Y"), or the candidates of an ambiguous name, or none at all;
- compare: the two papers the question names by title, one passage each;
- list:    up to `LIST_POOL` passages for the topic alone, those above the relevance floor;
- fact:    the usual top `k`, with a paper the question names by title moved to rank 1.

Example: search("What is the Genie paper about?", ...) -> Search(intent=fact, pinned=("<Genie's
id>",), passages=[Genie's passage, ...]).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import numpy as np

from ..index.bm25 import idf_table
from ..index.opened import Index
from ..models.embedders import embed_query
from ..settings import Settings
from ..text import content_terms, coverage, term_weights
from ..types import Passage
from .authors import AuthorMatch
from .catalog import Catalog, catalog
from .intent import Intent, is_list, topic_of, understand, without_conference

_PAPERS = re.compile(r"\b(?:papers|works|studies|articles|publications|posters)\b", re.I)
LIST_POOL = 40  # passages a list question retrieves, to count the relevant papers
LIST_COVERAGE = 0.5  # IDF-weighted share of the topic's words a listed paper must contain
LIST_DENSE = 0.55  # or the cosine that lists a paper whatever its words
TOPIC_COVERAGE = 0.5  # IDF-weighted share of a person's topic words a paper must contain


@dataclass
class Search:
    intent: Intent
    query: str  # what was searched: shown as "Searched as", and `Answer.query`
    passages: list[Passage]
    author: AuthorMatch | None = None  # person questions: who the name stands for
    pinned: tuple[str, ...] = ()  # papers the question names by title, ranked first

    @property
    def by_metadata(self) -> bool:
        """Answered from the author index (a person's papers, candidates, or nobody)."""
        return self.author is not None

    @property
    def skip_gate(self) -> bool:
        """Whether the answerability gate is beside the point: a person's papers; two papers
        named for comparison; a named paper asked about as a whole; a list already cut at its
        relevance floor."""
        return (self.by_metadata or self.intent.kind in ("compare", "list")
                or (bool(self.pinned) and self.intent.describe))


def search(question: str, query: str, retriever, index: Index, settings: Settings) -> Search:
    """Retrieve for `question`; `query` is its standalone form (a rewritten follow-up)."""
    intent = understand(question)
    if query != question:  # a follow-up: search the rewrite, keep this question's kind
        intent = dataclasses.replace(intent, query=understand(query).query)
    cat = catalog(index)
    if intent.kind == "list" and 2 <= len(intent.query.split()) <= 4 and \
            cat.authors.lookup(intent.query).status == "found":  # "Sergey Levine papers"
        intent = Intent("person", intent.query, person=intent.query, strong=True)
    if intent.kind == "person":
        match = cat.authors.lookup(intent.person)
        named = match.status == "missing" and cat.titles.match(question)  # a title, not a name
        if not named and (match.status != "missing" or intent.strong
                          or len(intent.person.split()) > 1):
            return _person(intent, match, cat, retriever, index)
        kind = "list" if is_list(question) else "fact"
        intent = Intent(kind, topic_of(query) if kind == "list" else without_conference(query))
    pinned: tuple[str, ...] = ()
    if intent.kind == "list" and not _PAPERS.search(question) and cat.titles.match(question):
        intent = Intent("fact", without_conference(query))  # "Which methods does RankSEG use?"
    if intent.kind == "compare":
        found = [cat.titles.match(name)[:1] for name in intent.named]
        if all(found) and found[0] != found[1]:
            pinned = (found[0][0], found[1][0])
            passages = [_passage(pid, cat, retriever, index, intent.query) for pid in pinned]
            return Search(intent, intent.query, [p for p in passages if p], pinned=pinned)
        intent = Intent("fact", intent.query)
    if intent.kind == "list":
        return Search(intent, intent.query, _listed(intent.query, cat, retriever, index, settings))
    passages = retriever.retrieve(intent.query, settings.k, settings.max_per_paper)
    pinned = tuple(cat.titles.match(question)[:1])
    if pinned:
        passages = _pin(passages, pinned[0], cat, retriever, index, intent.query, settings.k)
    return Search(intent, intent.query, passages, pinned=pinned)


def _listed(topic: str, cat: Catalog, retriever, index: Index, settings: Settings
            ) -> list[Passage]:
    """Up to LIST_POOL papers on `topic`, best first: those whose title and abstract hold its
    rarest word and much of the rest (`_covers` >= LIST_COVERAGE) or whose cosine is high."""
    passages = retriever.retrieve(topic, max(settings.k, LIST_POOL), settings.max_per_paper)
    idf = idf_table(index.snapshot().bm25)
    return _ranked([p for p in passages if p.scores.get("dense", 0.0) >= LIST_DENSE
                    or _covers(topic, p.paper_id, cat, idf) >= LIST_COVERAGE])


def _covers(topic: str, paper_id: str, cat: Catalog, idf) -> float:
    """IDF-weighted share of the topic's words in the paper's title and abstract; 0 when its
    rarest word is missing ("machine unlearning" needs "unlearning", not just "machine")."""
    text = f"{cat.titles_of.get(paper_id, '')}. {cat.text(paper_id)}"
    weights = term_weights(topic, idf)
    if weights and max(weights, key=lambda t: (weights[t], t)) not in content_terms(text):
        return 0.0
    return coverage(topic, text, idf)


def _person(intent: Intent, match: AuthorMatch, cat: Catalog, retriever, index: Index) -> Search:
    """The person's papers as passages, on the topic if one is given (best match first)."""
    papers = list(match.papers)
    if intent.topic and papers:
        idf = idf_table(index.snapshot().bm25)
        cover = {pid: _covers(intent.topic, pid, cat, idf) for pid in papers}
        papers = sorted((pid for pid in papers if cover[pid] >= TOPIC_COVERAGE),
                        key=lambda pid: -cover[pid])
    else:
        papers.sort(key=lambda pid: cat.titles_of.get(pid, "").lower())
    passages = [_passage(pid, cat, retriever, index, intent.topic or None) for pid in papers]
    query = f"author: {match.names[0] if match.status == 'found' else intent.person}"
    return Search(intent, query + (f" · {intent.topic}" if intent.topic else ""),
                  _ranked([p for p in passages if p]), author=match)


def _passage(paper_id: str, cat: Catalog, retriever, index: Index, query: str | None
             ) -> Passage | None:
    """The paper's whole abstract, with its cosine to `query` (if any) as the gate's evidence."""
    p = cat.passage(paper_id)
    if p is None or query is None:
        return p
    vec = index.collection.vectors([p.chunk_id]).get(p.chunk_id)
    if vec is not None:
        qv = getattr(retriever, "query_vector", None)
        q = qv(query) if qv else embed_query(index.embedder, query)
        p.scores["dense"] = float(np.dot(vec, q))
    return p


def _pin(passages: list[Passage], paper_id: str, cat: Catalog, retriever, index: Index,
         query: str, k: int) -> list[Passage]:
    """`passages` with the named paper's passage first (fetched when retrieval missed it)."""
    mine = [p for p in passages if p.paper_id == paper_id]
    rest = [p for p in passages if p.paper_id != paper_id]
    if not mine:
        p = _passage(paper_id, cat, retriever, index, query)
        mine = [p] if p else []
    if mine and passages:
        mine[0].score = max(p.score for p in passages)
    return _ranked((mine + rest)[: max(k, len(mine))])


def _ranked(passages: list[Passage]) -> list[Passage]:
    for rank, p in enumerate(passages, start=1):
        p.rank = rank
    return passages
