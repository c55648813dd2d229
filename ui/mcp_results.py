"""The MCP tools' typed inputs and structured results (pydantic models): what `rag mcp`'s
tools declare as their input and output schemas (`ui/mcp_server.py`). An `ask` result and a
table's citations are the answer's one view (`Answer.to_dict`), field for field."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class PastTurn(BaseModel):
    """An earlier turn of the conversation (a follow-up's context)."""

    question: str = Field(description="an earlier question")
    answer: str = Field("", description="the answer it got")


class CitationOut(BaseModel):
    n: int = Field(description="the [n] marker in the answer")
    paper_id: str
    title: str
    url: str
    quote: str = Field(description="the sentence(s) of the abstract the claim rests on; empty "
                                   "for a not_stated answer, which cites the paper unquoted")
    text: str = Field(description="the cited passage")


class AskResult(BaseModel):
    question: str
    answer: str = Field(description="the answer text with its [n] citation markers")
    outcome: Literal["answered", "not_stated", "cannot_answer"]
    decision: Literal["answered", "not_stated", "cannot_answer", "list", "person", "table"] = Field(
        description="what kind of answer: the outcome's three, or a list of papers, a "
                    "person's papers, or a table across papers")
    abstained: bool
    citations: list[CitationOut]
    notices: list[str] = Field(description="fallbacks and truncations the user should see")
    query: str = Field(description="what was searched (a follow-up's standalone form)")
    generator: str


class Match(BaseModel):
    text: str
    score: float
    chunk_id: str


class PaperHit(BaseModel):
    rank: int
    paper_id: str
    title: str
    authors: str
    url: str
    score: float = Field(description="the best matching passage's retrieval score")
    passages: list[Match]


class SearchResult(BaseModel):
    query: str
    author: str | None = None
    papers: list[PaperHit]


class PaperOut(BaseModel):
    paper_id: str
    title: str
    authors: str
    url: str
    abstract: str
    source: str


class PaperBrief(BaseModel):
    paper_id: str
    title: str
    authors: str
    url: str


class Candidate(BaseModel):
    name: str
    papers: int


class AuthorResult(BaseModel):
    name: str
    status: Literal["found", "ambiguous", "missing"]
    authors: list[Candidate] = Field(description="the one author found, or the candidates of "
                                                 "an ambiguous name, most papers first")
    papers: list[PaperBrief] = Field(description="the found author's papers")
    answer: str = Field(description="what `rag ask \"papers by <name>\"` answers")


class CellOut(BaseModel):
    value: str | None = Field(description="the value the abstract states; null if not stated")
    quote: str | None = Field(description="the sentence it comes from, verbatim")
    stated: bool


class RowOut(BaseModel):
    paper_id: str
    title: str
    url: str
    cells: dict[str, CellOut] = Field(description="one per column, named as asked")


class TableResult(BaseModel):
    topic: str
    columns: list[str]
    rows: list[RowOut]
    citations: list[CitationOut] = Field(description="the [n] of the stated cells: paper and "
                                                     "quoted sentence")
    markdown: str = Field(description="the table as Markdown, [n] after each stated cell")


class BibResult(BaseModel):
    bibtex: str
    missing: list[str] = Field(description="ids not in the index")


class SimilarPaper(BaseModel):
    paper_id: str
    title: str
    authors: str
    url: str
    score: float = Field(description="cosine of the two whole-abstract vectors")


class SimilarResult(BaseModel):
    paper_id: str
    papers: list[SimilarPaper]
