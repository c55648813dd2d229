"""`rag mcp`: the assistant as a Model Context Protocol server (the official `mcp` SDK, 2.x).

Tools, each with typed inputs and a typed structured result beside a readable text:
- `ask(question, history?)`: the cited answer; `outcome` keeps "answered", "not_stated" (the
  paper was found, its abstract does not state the fact) and "cannot_answer" apart;
- `search_papers(query, k?, author?)`: ranked papers with the passages that matched, scored;
- `get_paper(paper_id)`: the whole abstract and its metadata (also the resource paper://{id});
- `papers_by_author(name)`: the author index, as `rag ask "papers by ..."` reads it, with the
  candidates of an ambiguous name;
- `similar_papers(paper_id, k?)`: the nearest papers by whole-abstract embedding;
- `compare_papers(topic, columns, paper_ids?)`: a table across papers, each cell the value its
  abstract states with the quoted sentence, or "not stated" (`rag.table`);
- `bibtex(paper_ids)`: BibTeX entries for papers, from the corpus metadata.
A `RagError` comes back as a tool error whose text is the CLI's one line (`rag: error: ...`);
nothing else of a failure reaches the client. Transports: stdio (`rag mcp`) and streamable
HTTP (`rag mcp --http`, at /mcp, under `rag serve`'s login rule: asgi.py).

It is the only module that imports `mcp`; the result types (pydantic) are in mcp_results.py.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Callable

from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field, ValidationError

import rag
from rag import factory
from rag.answer.person import no_paper_by, several_match
from rag.errors import InputError, PaperNotFoundError, RagError
from rag.retrieve.catalog import catalog
from rag.settings import Settings
from rag.types import Answer, Paper, Passage

from .export import answer_with_references, papers_bibtex
from .mcp_results import (AskResult, AuthorResult, BibResult, Candidate, Match, PaperBrief,
                          PaperHit, PaperOut, PastTurn, SearchResult, SimilarPaper, SimilarResult,
                          TableResult)

NAME = "icml-rag"
INSTRUCTIONS = ("Cited answers from the ICML 2024 paper abstracts. `ask` answers a question "
                "with numbered citations quoting the abstracts, or says the abstracts do not "
                "answer it; `compare_papers` makes a table across papers, every cell cited or "
                "\"not stated\"; the other tools find papers, read one, list a person's papers, "
                "find papers like one and give BibTeX.")
MAX_K = 50


class _Server(MCPServer):
    """MCPServer whose argument errors are one line too: "rag: error: ask: question: Input
    should be a valid string", not pydantic's report with its link."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None):
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            first = exc.__cause__.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            return _error(f"{name}: {where}: {first['msg']}")


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=f"rag: error: {message}")],
                          is_error=True)


def _result(text: str, value: BaseModel) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=value.model_dump(mode="json"))


def _one_line_errors(fn: Callable[..., CallToolResult]) -> Callable[..., CallToolResult]:
    """A RagError becomes a tool error carrying the CLI's one-line message."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> CallToolResult:
        try:
            return fn(*args, **kwargs)
        except RagError as exc:
            return _error(str(exc))
    return wrapper


def _k(k: int) -> int:
    if not 1 <= k <= MAX_K:
        raise InputError(f"k must be between 1 and {MAX_K} (got {k})")
    return k


def _brief(p: Paper) -> PaperBrief:
    return PaperBrief(paper_id=p.id, title=p.title, authors=p.authors, url=p.url)


def ask_result(answer: Answer) -> AskResult:
    """The structured result of the `ask` tool: the answer's one view (`Answer.to_dict`), the
    fields AskResult names."""
    view = answer.to_dict()
    return AskResult.model_validate({k: view[k] for k in AskResult.model_fields})


def build_server(settings: Settings | None = None) -> MCPServer:
    """The MCP server over the index `settings` name (loaded from the environment if None)."""
    settings = settings or Settings.load()
    server = _Server(NAME, instructions=INSTRUCTIONS, version=rag.__version__,
                     log_level="WARNING")

    def paper(paper_id: str) -> Paper:
        found = factory.index(settings).paper(paper_id)
        if found is None:
            raise PaperNotFoundError(f"no paper with id {paper_id!r} in the index; "
                                     "search_papers or `rag papers` gives the ids")
        return found

    @server.tool()
    @_one_line_errors
    def ask(question: Annotated[str, Field(description="a question about ICML 2024 papers")],
            history: Annotated[list[PastTurn] | None, Field(description="earlier turns of this "
                               "conversation, oldest first, for follow-up questions")] = None,
            ) -> Annotated[CallToolResult, AskResult]:
        """Answer a question from the ICML 2024 abstracts, with numbered citations that quote
        the abstracts; says so when they do not answer it."""
        turns = [(t.question, t.answer) for t in history or ()]
        answer = rag.ask(question, turns, settings=settings)
        return _result(answer_with_references(answer), ask_result(answer))

    @server.tool()
    @_one_line_errors
    def search_papers(
            query: Annotated[str, Field(description="words or a question to search for")],
            k: Annotated[int, Field(description=f"papers to return, 1-{MAX_K}")] = 5,
            author: Annotated[str | None, Field(description="only this author's papers")] = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Papers ranked for a query (dense and BM25 retrieval fused), each with the passages
        that matched and their scores."""
        _k(k)
        if not query.strip():
            raise InputError("the query is empty; give words to search for")
        filters = None
        if author is not None:
            match = catalog(factory.index(settings)).authors.lookup(author)
            if match.status == "missing":
                raise InputError(no_paper_by(author))
            if match.status == "ambiguous":
                raise InputError(f"{len(match.names)} authors match {author!r}: "
                                 f"{'; '.join(match.names[:8])}; give one of these names")
            filters = {"paper_id": list(match.papers)}
        passages = factory.retriever(settings).retrieve(query, k * 3, max_per_paper=3,
                                                        filters=filters)
        hits: dict[str, PaperHit] = {}
        for p in passages:
            if p.paper_id not in hits:
                if len(hits) == k:
                    continue
                hits[p.paper_id] = PaperHit(rank=len(hits) + 1, paper_id=p.paper_id,
                                            title=p.title, authors=p.authors, url=p.url,
                                            score=float(p.score), passages=[])
            hits[p.paper_id].passages.append(Match(text=p.text, score=float(p.score),
                                                   chunk_id=p.chunk_id))
        result = SearchResult(query=query, author=author, papers=list(hits.values()))
        text = "\n".join(f"{h.rank}. {h.title} ({h.paper_id}, score {h.score:.3f})"
                         for h in result.papers) or "No paper matched."
        return _result(text, result)

    @server.tool()
    @_one_line_errors
    def get_paper(paper_id: Annotated[str, Field(description="a paper id, as search_papers "
                                                             "returns it")]
                  ) -> Annotated[CallToolResult, PaperOut]:
        """One paper's whole abstract, title, authors and link."""
        p = paper(paper_id)
        out = PaperOut(paper_id=p.id, title=p.title, authors=p.authors, url=p.url,
                       abstract=p.text, source=p.source)
        return _result(_paper_text(p), out)

    @server.tool()
    @_one_line_errors
    def papers_by_author(name: Annotated[str, Field(description="an author's name as people "
                                                    "write it: 'Sergey Levine', 'S. Levine', "
                                                    "'Levine'")]
                         ) -> Annotated[CallToolResult, AuthorResult]:
        """A person's papers from the author index; for a name several authors share, the
        candidates with their paper counts."""
        if not name.strip():
            raise InputError("the name is empty; give an author's name")
        cat = catalog(factory.index(settings))
        match = cat.authors.lookup(name)
        papers = {p.id: p for p in rag.papers(settings=settings)} if match.papers else {}
        found = [_brief(papers[pid]) for pid in match.papers if pid in papers]
        if match.status == "missing":
            answer = no_paper_by(name)
        elif match.status == "ambiguous":
            answer = several_match(name, match.names, match.counts)
        else:  # read from the author index: no question goes through the engine
            answer = "\n".join([f"{match.names[0]} has {len(found)} paper"
                                f"{'s' if len(found) != 1 else ''} in this corpus:"]
                               + [f"- {b.title}" + (f" <{b.url}>" if b.url else "")
                                  for b in found])
        out = AuthorResult(
            name=name, status=match.status, answer=answer,
            authors=[Candidate(name=n, papers=c) for n, c in zip(match.names, match.counts)],
            papers=found)
        return _result(answer, out)

    @server.tool()
    @_one_line_errors
    def similar_papers(
            paper_id: Annotated[str, Field(description="a paper id, as search_papers returns it")],
            k: Annotated[int, Field(description=f"papers to return, 1-{MAX_K}")] = 10,
    ) -> Annotated[CallToolResult, SimilarResult]:
        """The papers nearest to one paper by whole-abstract embedding, best first."""
        found = rag.similar(paper_id, _k(k), settings)
        out = SimilarResult(paper_id=paper_id, papers=[
            SimilarPaper(paper_id=s.paper.id, title=s.paper.title, authors=s.paper.authors,
                         url=s.paper.url, score=round(float(s.score), 6)) for s in found])
        text = "\n".join(f"{i}. {s.title} ({s.paper_id}, cosine {s.score:.3f})"
                         for i, s in enumerate(out.papers, 1))
        return _result(text or "No other paper in the index.", out)

    @server.tool()
    @_one_line_errors
    def compare_papers(
            topic: Annotated[str, Field(description="the papers' topic, e.g. 'KV cache "
                                                    "compression' (rows: its papers)")],
            columns: Annotated[list[str], Field(description="the attributes to compare, e.g. "
                                                            "['benchmark', 'memory reduction']")],
            paper_ids: Annotated[list[str] | None, Field(description="rows by paper id, "
                                                                     "instead of the topic's "
                                                                     "papers")] = None,
    ) -> Annotated[CallToolResult, TableResult]:
        """A table across papers: each cell is the value the paper's abstract states, with the
        sentence it comes from as its citation, or "not stated" where it states none."""
        answer = rag.table(topic, columns, paper_ids=paper_ids or (), settings=settings)
        view = answer.to_dict()
        out = TableResult.model_validate({**view["table"], "citations": view["citations"],
                                          "markdown": answer.text})
        text = answer.text if answer.table.rows else f"No paper on {topic} in this corpus."
        return _result(text, out)

    @server.tool()
    @_one_line_errors
    def bibtex(paper_ids: Annotated[list[str], Field(description="paper ids, as search_papers "
                                                                 "returns them")]
               ) -> Annotated[CallToolResult, BibResult]:
        """BibTeX entries for papers, from the corpus metadata (title, authors, ICML 2024)."""
        found, missing = [], []
        for pid in dict.fromkeys(paper_ids):
            p = factory.index(settings).paper(pid)
            (found if p else missing).append(p or pid)
        text = papers_bibtex([Passage(chunk_id=p.id, paper_id=p.id, title=p.title, text="",
                                      score=0.0, authors=p.authors, url=p.url) for p in found])
        out = BibResult(bibtex=text, missing=missing)
        return _result(text or "No such paper in the index.", out)

    @server.resource("paper://{paper_id}", name="paper", mime_type="text/markdown",
                     description="One paper: its title, authors, link and whole abstract.")
    def paper_resource(paper_id: str) -> str:
        try:
            return _paper_text(paper(paper_id))
        except RagError as exc:
            raise ResourceError(f"rag: error: {exc}") from None

    return server


def _paper_text(p: Paper) -> str:
    lines = [f"# {p.title}", ""]
    if p.authors:
        lines.append(f"Authors: {p.authors}")
    if p.url:
        lines.append(f"Link: {p.url}")
    lines.append(f"Id: {p.id}")
    return "\n".join(lines + ["", p.text])


def serve(http: bool = False, host: str | None = None, port: int | None = None,
          corpus: str | None = None, auth: str | None = None, no_auth: bool = False) -> int:
    """`rag mcp`: stdio (for desktop clients) or, with `http`, streamable HTTP at /mcp."""
    from . import asgi, launch

    settings = Settings.load(**({"corpus": corpus} if corpus else {}))
    server = build_server(settings)
    if not http:
        factory.index(settings)  # a missing index is a one-line error now, not on each call
        server.run("stdio")
        return 0
    host, port = host or "127.0.0.1", port or 8765
    logins = launch.resolve_auth(auth)
    launch.check_exposure(host, logins, no_auth)
    factory.index(settings)
    app = server.streamable_http_app(host=host)
    print(f"rag mcp: http://{host}:{port}/mcp (corpus {settings.corpus}"
          f"{', login required' if logins else ''})", flush=True)
    return asgi.run(asgi.RequireLogin(app, logins), host, port, "the MCP server")


def in_process_client(server: MCPServer) -> Client:
    """An MCP client of `server` over the SDK's in-memory transport (`async with` it): how
    bench/protocols.py measures the tools without a subprocess between."""
    return Client(server)
