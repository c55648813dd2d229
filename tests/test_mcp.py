"""`rag mcp` through the official MCP SDK's own clients: the in-memory `Client` for every tool and
each error, a real `rag mcp` process over stdio (the SDK's ClientSession), and `rag mcp --http`
behind its login. The tools answer what the library answers, from the seed index."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client

import rag
from conftest import free_port
from rag.retrieve.catalog import catalog
from rag import factory
from rag.ui.mcp_server import build_server

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "Which kernels avoid mean reversion in Gaussian process regression?"
GP_PAPER = "icml2024-poster-34936"
TOOLS = {"ask", "search_papers", "get_paper", "papers_by_author", "similar_papers",
         "compare_papers", "bibtex"}


@pytest.fixture(scope="module")
def server(settings):
    return build_server(settings)


def call(server, tool: str, **arguments):
    """One tool call through an in-memory client session."""
    async def go():
        async with Client(server) as client:
            return await client.call_tool(tool, arguments)
    return anyio.run(go)


def ok(result) -> dict:
    assert not result.is_error, result.content[0].text
    assert result.content[0].type == "text" and result.content[0].text.strip()
    return result.structured_content


def error_text(result) -> str:
    assert result.is_error and result.structured_content is None
    assert len(result.content) == 1
    text = result.content[0].text
    assert "\n" not in text and "Traceback" not in text
    return text


# -- the tool list -------------------------------------------------------------------------------


def test_every_tool_is_listed_with_typed_inputs_and_a_typed_output(server):
    async def go():
        async with Client(server) as client:
            return (await client.list_tools()).tools
    tools = {t.name: t for t in anyio.run(go)}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and tool.input_schema["type"] == "object"
        assert tool.output_schema and tool.output_schema["type"] == "object"
    assert tools["ask"].input_schema["required"] == ["question"]
    assert set(tools["ask"].output_schema["properties"]) >= {"answer", "outcome", "abstained",
                                                             "citations"}
    assert set(tools["search_papers"].input_schema["properties"]) == {"query", "k", "author"}
    assert set(tools["similar_papers"].input_schema["properties"]) == {"paper_id", "k"}


# -- ask -----------------------------------------------------------------------------------------


def test_ask_returns_the_cited_answer_of_rag_ask(server, settings):
    got = ok(call(server, "ask", question=QUESTION))
    want = rag.ask(QUESTION, settings=settings)
    assert got["answer"] == want.text and got["outcome"] == "answered"
    assert got["abstained"] is False
    assert [c["paper_id"] for c in got["citations"]] == [c.paper_id for c in want.citations]
    first = got["citations"][0]
    assert first["paper_id"] == GP_PAPER and first["n"] == 1 and first["url"]
    abstract = factory.index(settings).paper(GP_PAPER).text
    assert first["quote"] and first["quote"] in abstract
    assert f"[{first['n']}]" in got["answer"]


def test_ask_text_carries_the_references(server):
    text = call(server, "ask", question=QUESTION).content[0].text
    assert "References:" in text
    assert "[1] Stationarity without mean reversion in improper Gaussian processes" in text


def test_an_off_topic_question_cannot_be_answered(server):
    got = ok(call(server, "ask", question="What is the best recipe for chocolate chip cookies?"))
    assert got["outcome"] == "cannot_answer" and got["abstained"] is True
    assert got["answer"] == rag.CANNOT_ANSWER and got["citations"] == []


def test_found_paper_but_not_the_fact_is_kept_apart_from_cannot_answer(server):
    # The seed index's gate finds DiffAug but no sentence on training time (rag.ask agrees).
    got = ok(call(server, "ask", question="How long does training DiffAug take?"))
    assert got["outcome"] == "not_stated" and got["abstained"] is True
    assert "does not state" in got["answer"]
    assert len(got["citations"]) == 1 and got["citations"][0]["quote"] == ""
    assert got["citations"][0]["title"].startswith("DiffAug")


def test_ask_with_history_answers_the_follow_up(server, settings):
    history = [{"question": QUESTION, "answer": rag.ask(QUESTION, settings=settings).text}]
    got = ok(call(server, "ask", question="What data did they analyse?", history=history))
    want = rag.ask("What data did they analyse?", [(h["question"], h["answer"])
                                                     for h in history], settings=settings)
    assert got["answer"] == want.text and got["query"] == want.query


def test_an_empty_question_is_the_clis_one_line_error(server):
    assert error_text(call(server, "ask", question="   ")) == \
        "rag: error: the question is empty; type a question about the indexed papers"


def test_an_argument_of_the_wrong_type_is_a_one_line_error(server):
    assert error_text(call(server, "ask", question=3)) == \
        "rag: error: ask: question: Input should be a valid string"


# -- search, paper, author, similar --------------------------------------------------------------


def test_search_ranks_papers_with_the_passages_that_matched(server, settings):
    got = ok(call(server, "search_papers", query="improper Gaussian process priors", k=3))
    papers = got["papers"]
    assert len(papers) == 3 and [p["rank"] for p in papers] == [1, 2, 3]
    assert papers[0]["paper_id"] == GP_PAPER
    assert [p["score"] for p in papers] == sorted((p["score"] for p in papers), reverse=True)
    assert len({p["paper_id"] for p in papers}) == 3
    index = factory.index(settings)
    for p in papers:
        assert p["passages"] and p["score"] == p["passages"][0]["score"]
        for match in p["passages"]:
            assert match["text"] in index.paper(p["paper_id"]).text


def test_search_by_author_keeps_only_their_papers(server, settings):
    got = ok(call(server, "search_papers", query="diffusion", author="Fan Wang"))
    mine = set(catalog(factory.index(settings)).authors.lookup("Fan Wang").papers)
    assert got["papers"] and {p["paper_id"] for p in got["papers"]} <= mine
    assert all("Fan Wang" in p["authors"] for p in got["papers"])


def test_search_errors(server):
    assert error_text(call(server, "search_papers", query="diffusion", k=0)) == \
        "rag: error: k must be between 1 and 50 (got 0)"
    assert error_text(call(server, "search_papers", query="  ")).startswith(
        "rag: error: the query is empty")
    ambiguous = error_text(call(server, "search_papers", query="diffusion", author="Wang"))
    assert ambiguous.startswith("rag: error: 14 authors match 'Wang': Fan Wang;")
    assert error_text(call(server, "search_papers", query="x", author="Nobody Atall")) == \
        "rag: error: No paper by Nobody Atall in this corpus."


def test_get_paper_is_the_whole_abstract_and_its_metadata(server, settings):
    got = ok(call(server, "get_paper", paper_id=GP_PAPER))
    paper = next(p for p in rag.papers(settings=settings) if p.id == GP_PAPER)
    assert got == {"paper_id": paper.id, "title": paper.title, "authors": paper.authors,
                   "url": paper.url, "abstract": paper.text, "source": paper.source}


def test_an_unknown_paper_is_the_same_line_as_the_cli_prints(server, settings, seed_home):
    """`similar_papers` and `rag similar` raise the same error: the same line."""
    env = {**os.environ, "RAG_HOME": str(seed_home), "RAG_CORPUS": "seeds"}
    cli = subprocess.run([sys.executable, "-m", "rag.ui.cli", "similar", "no-such-paper"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert cli.returncode == 1
    line = cli.stderr.strip().splitlines()[-1]
    assert error_text(call(server, "similar_papers", paper_id="no-such-paper")) == line
    assert error_text(call(server, "get_paper", paper_id="no-such-paper")).startswith(
        "rag: error: no paper with id 'no-such-paper' in the index")


def test_papers_by_author_found(server, settings):
    got = ok(call(server, "papers_by_author", name="Fan Wang"))
    assert got["status"] == "found"
    assert got["authors"] == [{"name": "Fan Wang", "papers": 2}]
    assert len(got["papers"]) == 2 and all("Fan Wang" in p["authors"] for p in got["papers"])
    # read from the author index, not asked of the engine: each paper a line with its link
    lines = got["answer"].splitlines()
    assert lines[0] == "Fan Wang has 2 papers in this corpus:"
    assert lines[1:] == [f"- {p['title']} <{p['url']}>" for p in got["papers"]]


def test_papers_by_author_ambiguous_lists_the_candidates(server, settings):
    got = ok(call(server, "papers_by_author", name="Wang"))
    assert got["status"] == "ambiguous" and got["papers"] == []
    assert len(got["authors"]) == 14 and got["authors"][0] == {"name": "Fan Wang", "papers": 2}
    assert got["answer"] == rag.ask("papers by Wang", settings=settings).text  # same words
    assert got["answer"].startswith("14 authors match")


def test_papers_by_author_missing(server):
    got = ok(call(server, "papers_by_author", name="Nobody Atall"))
    assert got == {"name": "Nobody Atall", "status": "missing", "authors": [], "papers": [],
                   "answer": "No paper by Nobody Atall in this corpus."}


def test_similar_papers_are_rag_similar(server, settings):
    got = ok(call(server, "similar_papers", paper_id=GP_PAPER, k=4))
    want = rag.similar(GP_PAPER, 4, settings)
    assert got["paper_id"] == GP_PAPER
    assert [p["paper_id"] for p in got["papers"]] == [s.paper.id for s in want]
    assert [p["score"] for p in got["papers"]] == [round(s.score, 6) for s in want]
    assert GP_PAPER not in [p["paper_id"] for p in got["papers"]]
    assert error_text(call(server, "similar_papers", paper_id=GP_PAPER, k=51)) == \
        "rag: error: k must be between 1 and 50 (got 51)"


def test_a_paper_is_a_resource(server, settings):
    async def go():
        async with Client(server) as client:
            templates = (await client.list_resource_templates()).resource_templates
            read = await client.read_resource(f"paper://{GP_PAPER}")
            return templates, read
    templates, read = anyio.run(go)
    assert [t.uri_template for t in templates] == ["paper://{paper_id}"]
    text = read.contents[0].text
    assert text.startswith("# Stationarity without mean reversion in improper Gaussian processes")
    assert factory.index(settings).paper(GP_PAPER).text in text


# -- real processes ------------------------------------------------------------------------------


def rag_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("RAG_", "OPENAI_"))}
    return {**env, "RAG_HOME": str(home), "RAG_CORPUS": "seeds", "HF_HUB_OFFLINE": "1"}


def test_rag_mcp_over_stdio_lists_tools_and_answers(copy_of_seed_home, tmp_path):
    params = StdioServerParameters(command=sys.executable, args=["-m", "rag.ui.cli", "mcp"],
                                   env=rag_env(copy_of_seed_home), cwd=str(ROOT))

    async def go():
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    init = await session.initialize()
                    tools = await session.list_tools()
                    answer = await session.call_tool("ask", {"question": QUESTION})
                    return init, tools, answer
    init, tools, answer = anyio.run(go)
    assert init.server_info.name == "icml-rag"
    assert {t.name for t in tools.tools} == TOOLS
    got = answer.structured_content
    assert not answer.is_error and got["outcome"] == "answered"
    assert got["citations"][0]["paper_id"] == GP_PAPER and got["citations"][0]["quote"]




def test_rag_mcp_http_needs_the_login_when_one_is_set(copy_of_seed_home, tmp_path):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "rag.ui.cli", "mcp", "--http", "--port",
                             str(port), "--auth", "ann:s3cret"], cwd=ROOT,
                            env=rag_env(copy_of_seed_home), stdout=subprocess.PIPE,
                            stderr=open(tmp_path / "stderr.log", "wb"), text=True)
    try:
        assert proc.stdout.readline().startswith(f"rag mcp: http://127.0.0.1:{port}/mcp")
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 120
        while True:
            try:
                refused = httpx2.post(url, json={})
                break
            except httpx2.TransportError:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.5)
        assert refused.status_code == 401 and "Bearer" in refused.json()["error"]

        async def go():
            headers = {"Authorization": "Bearer ann:s3cret"}
            async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
                async with streamable_http_client(url, http_client=http) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        tools = await session.list_tools()
                        found = await session.call_tool("get_paper", {"paper_id": GP_PAPER})
                        return tools, found
        tools, found = anyio.run(go)
        assert {t.name for t in tools.tools} == TOOLS
        assert found.structured_content["paper_id"] == GP_PAPER
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("command", [["mcp", "--http"], ["api"]])
def test_another_address_without_a_login_is_refused(command, copy_of_seed_home):
    out = subprocess.run([sys.executable, "-m", "rag.ui.cli", *command, "--host", "0.0.0.0",
                          "--port", str(free_port())], cwd=ROOT, env=rag_env(copy_of_seed_home),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("rag: error: refusing to serve on 0.0.0.0 without a login")
    assert len(out.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("header, ok", [
    ("Bearer ann:s3cret", True), ("bearer ann:s3cret", True), ("Bearer bob:pw", True),
    ("Bearer ann:wrong", False), ("Bearer s3cret", False), ("Basic ann:s3cret", False),
    ("Bearer ", False), (None, False)])
def test_the_login_rule_of_the_http_endpoints(header, ok):
    from rag.ui.asgi import bearer_ok

    assert bearer_ok(header, [("ann", "s3cret"), ("bob", "pw")]) is ok
    assert bearer_ok(header, None) is True  # no logins: nothing is asked
