"""The typed records that flow between the pipeline's stages.

Paper -> (chunking) -> Chunk -> (retrieval) -> Passage -> (generation + citation check) -> Answer.
Character offsets always refer to the paper's `text`, so a citation can point at the exact
sentence(s) it rests on: `paper.text[start:end] == quote`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the later stages' types, named in `Turn` (they import this module)
    from .index.snapshot import Snapshot
    from .retrieve.answerability import Verdict
    from .retrieve.cells import Reading
    from .retrieve.route import Route
    from .text import Idf

# What an answer is (`Answer.decision`): the asked fact, cited; "the abstract of X does not
# state it" (its paper cited, nothing quoted); no answer; a list of papers; a person's papers;
# a table across papers.
ANSWERED, NOT_STATED, CANNOT, LIST, PERSON, TABLE = ("answered", "not_stated", "cannot_answer",
                                                     "list", "person", "table")
DECISIONS = (ANSWERED, NOT_STATED, CANNOT, LIST, PERSON, TABLE)


@dataclass(frozen=True)
class Paper:
    """One document of a corpus: an abstract, an uploaded file."""

    id: str
    title: str
    text: str
    authors: str = ""
    url: str = ""
    source: str = ""  # where it came from: a file name, a corpus name
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Similar:
    """A paper like another one (`rag.similar`): the paper and the cosine of their
    whole-abstract vectors."""

    paper: Paper
    score: float


@dataclass(frozen=True)
class MapPoint:
    """One paper on the map of the conference (`rag.paper_map`)."""

    paper_id: str
    title: str
    authors: str
    x: float
    y: float
    cluster: int  # index into PaperMap.clusters; -1 for an upload (not clustered)
    upload: bool = False  # a user's uploaded document, placed on the conference's map


@dataclass(frozen=True)
class Cluster:
    """A region of the map: its papers' distinctive words, and where to write them."""

    id: int
    label: str
    x: float
    y: float
    size: int


@dataclass
class PaperMap:
    """Every paper's 2-D position, the clusters over them and their labels."""

    points: list[MapPoint]
    clusters: list[Cluster]
    generation: str = ""  # the index generation it was drawn for
    seconds: float = 0.0  # time the layout took when it was computed (0 when read back)


@dataclass(frozen=True)
class Chunk:
    """A token-bounded, sentence-aligned piece of a paper."""

    paper_id: str
    index: int  # position of the chunk inside its paper
    text: str
    start: int  # character span inside the paper's text
    end: int
    sentences: tuple[tuple[int, int], ...]  # sentence spans, paper-relative

    @property
    def id(self) -> str:
        return f"{self.paper_id}#{self.index}"


@dataclass
class Passage:
    """A retrieved chunk with what the reader needs to cite it."""

    chunk_id: str
    paper_id: str
    title: str
    text: str
    score: float
    start: int = 0
    end: int = 0
    sentences: tuple[tuple[int, int], ...] = ()
    authors: str = ""
    url: str = ""
    source: str = ""
    rank: int = 0
    scores: dict[str, float] = field(default_factory=dict)  # per-retriever evidence
    # how likely each sentence (`sentence_texts()` order) states the answer to this turn's
    # question, by the setting `reader`'s scorer (retrieve/sentences.py); () when not scored
    sentence_scores: tuple[float, ...] = ()

    def sentence_texts(self) -> list[tuple[int, int, str]]:
        """(start, end, text) of each sentence, paper-relative offsets."""
        out = []
        for s, e in self.sentences:
            out.append((s, e, self.text[s - self.start : e - self.start]))
        return out


@dataclass
class Citation:
    """One `[n]` of an answer: the passage it points at and the sentence(s) it rests on."""

    n: int
    passage: Passage
    quote: str
    spans: tuple[tuple[int, int], ...] = ()  # paper-relative spans of the quote

    @property
    def paper_id(self) -> str:
        return self.passage.paper_id

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "paper_id": self.passage.paper_id, "title": self.passage.title,
                "url": self.passage.url, "quote": self.quote, "text": self.passage.text}


@dataclass
class AnswerSentence:
    """One sentence of the answer, its citation numbers and whether its citations support it."""

    text: str
    citations: tuple[int, ...]
    supported: bool = True
    support: float = 1.0

    @property
    def unbacked(self) -> bool:
        """Cited, but not supported by what it cites: the UI marks it and a notice counts it
        (an uncited sentence is counted apart, as citing nothing)."""
        return bool(self.citations) and not self.supported


@dataclass(frozen=True)
class Cell:
    """One cell of a table: the value the paper's abstract states for the column, with the
    sentence it comes from (`quote`, cited as `[citation]`), or not stated (all None)."""

    value: str | None
    quote: str | None
    stated: bool
    citation: int | None = None  # the answer's [n] for the quote
    score: float = 0.0  # the reader's score of the quoted (or best) sentence

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "quote": self.quote, "stated": self.stated}


@dataclass(frozen=True)
class TableRow:
    paper_id: str
    title: str
    url: str
    cells: dict[str, Cell]  # one per column, named as asked


@dataclass(frozen=True)
class Table:
    """Papers (rows) by asked attributes (columns): what `rag.table()` returns and a table
    answer carries (`Answer.table`)."""

    topic: str
    columns: tuple[str, ...]
    rows: tuple[TableRow, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON of `rag table --json`."""
        return {"topic": self.topic, "columns": list(self.columns),
                "rows": [{"paper_id": r.paper_id, "title": r.title, "url": r.url,
                          "cells": {c: r.cells[c].to_dict() for c in self.columns}}
                         for r in self.rows]}


TIMINGS = ("retrieve", "generate", "total")  # always in `to_dict()`; "first_token" and
# "rewrite" are added when they happened


@dataclass
class Answer:
    """What `ask()` returns: the answer and all the evidence behind it."""

    question: str
    text: str
    citations: list[Citation]
    passages: list[Passage]
    abstained: bool
    generator: str
    timings_ms: dict[str, float]
    sentences: list[AnswerSentence] = field(default_factory=list)
    query: str = ""  # the standalone query retrieval ran on (differs from `question` on follow-ups)
    notices: list[str] = field(default_factory=list)  # fallbacks, truncations: shown to the user
    relevance: float = 0.0  # the abstention gate's score for the best passage
    decision: str = ANSWERED  # one of DECISIONS: what kind of answer this is
    table: Table | None = None  # a table answer's table (its cells' quotes are the citations)

    @property
    def outcome(self) -> str:
        """What the protocol doors call it: answered (an answer, a list, a person's papers),
        not_stated (the paper asked about was found, its abstract does not state the fact: it
        is cited, unquoted), or cannot_answer (nothing cited)."""
        return self.decision if self.decision in (NOT_STATED, CANNOT) else ANSWERED

    @property
    def support_rate(self) -> float:
        """Share of cited answer sentences that their citations support (1.0 when none)."""
        cited = [s for s in self.sentences if s.citations]
        return sum(s.supported for s in cited) / len(cited) if cited else 1.0

    def to_dict(self) -> dict[str, Any]:
        """The one view of an answer: the JSON of `rag ask --json` and of the UI's `ask` API
        endpoint, and what MCP's `ask`, the OpenAI-compatible endpoint's `citations` and the
        exports take their fields from."""
        return {
            "question": self.question,
            "answer": self.text,
            "abstained": self.abstained,
            "generator": self.generator,
            "citations": [c.to_dict() for c in self.citations],
            "passages": [{"rank": p.rank, "paper_id": p.paper_id, "title": p.title,
                          "text": p.text, "score": round(float(p.score), 6)} for p in self.passages],
            "timings_ms": {k: round(float(self.timings_ms.get(k, 0.0)), 2) for k in TIMINGS}
            | {k: round(float(v), 2) for k, v in self.timings_ms.items() if k not in TIMINGS},
            "query": self.query or self.question,
            "notices": list(self.notices),
            "sentences": [{"text": s.text, "citations": list(s.citations),
                           "supported": s.supported} for s in self.sentences],
            "support_rate": round(self.support_rate, 4),
            "relevance": round(float(self.relevance), 6),
            "decision": self.decision,
            "outcome": self.outcome,
            "table": self.table.to_dict() if self.table is not None else None,
        }


@dataclass
class Draft:
    """The cited evidence shown while a language model writes: the extractive answer, yielded
    by `ask_stream` before the model's first token. The model's checked Answer replaces it;
    if the model fails, the final Answer is this one with the fallback notice."""

    answer: Answer


@dataclass(frozen=True)
class TableRequest:
    """A table asked for directly (`rag.table`): the topic, the columns, and the papers (rows)
    when given by id (else the topic's papers are found as a list's are)."""

    topic: str
    columns: tuple[str, ...]
    paper_ids: tuple[str, ...] = ()


@dataclass
class Turn:
    """One question on its way through the engine (`rag/engine.py`): every stage reads it and
    adds to it, in order, and nothing else travels between them.

    Stages and what each adds: route (`query`, `route`, `snapshot`, `idf`) -> retrieve
    (`passages`) -> gate (`whole` with their sentence scores, `verdict`, `decision`,
    `relevance`) -> write (a `Written`) -> check (the Answer). The index's snapshot is read
    once, by the route stage, and every later read goes through `snapshot`, so a write by
    another process mid-question changes nothing this question sees.
    """

    question: str  # cleaned, truncated to max_question_chars
    history: list[tuple[str, str]]  # earlier (question, answer) pairs, oldest first
    notices: list[str]  # shown to the user: truncation, fallback, "N more papers"
    t0: float  # time.perf_counter() when the question arrived
    query: str = ""  # the standalone query (a follow-up rewritten), then the route's query
    route: Route | None = None
    snapshot: Snapshot | None = None  # the one index snapshot the turn reads
    idf: Idf | None = None  # the snapshot's IDF table
    passages: list[Passage] = field(default_factory=list)  # retrieved, best first
    # the same grown to whole abstracts: the scored papers, each sentence's score (the only
    # copy of them) in `Passage.sentence_scores` for the papers a writer may quote
    whole: list[Passage] = field(default_factory=list)
    verdict: Verdict | None = None  # when the gate was asked
    # a table asked for by `rag.table()` (not read from a question): topic, columns, paper ids
    request: TableRequest | None = None
    cells: list[list[Reading]] = field(default_factory=list)  # a table's cells, as read
    decision: str = "answer"  # "answer", "not_stated" or "abstain"
    relevance: float = 0.0  # the gate's P(answerable), else the best cosine
    timings: dict[str, float] = field(default_factory=dict)  # ms: rewrite, first_token, ...
    trace: list[tuple[str, float]] = field(default_factory=list)  # (stage, ms), in order


@dataclass
class Written:
    """What the write stage hands the check stage: text with `[n]` markers, where `[n]` is
    `shown[n - 1]`, who wrote it, and what kind of answer it is (`decision`, one of
    DECISIONS). `claims` is what the checks judge when it is not the text itself (a person's
    papers: each line's quoted sentence without its title and co-authors). A language model's
    text comes with the extractive `draft` it falls back on, and `failure`, why the backend
    broke, when it did (then `text` is empty)."""

    text: str
    generator: str
    shown: list[Passage]
    claims: str = ""
    decision: str = ANSWERED
    draft: Answer | None = None
    failure: str | None = None
    table: Table | None = None  # a table writer's table; `shown` are its rows' papers
    # a writer that numbers its own citations (a table's stated cells, each quoting its
    # sentence): the check keeps them as they are
    citations: list[Citation] = field(default_factory=list)
