"""One view of an answer: `rag ask --json`, MCP's `ask`, the OpenAI-compatible endpoint and the
export all write what `Answer.to_dict()` says, so a client sees the same citations and the same
decision whichever door it came through."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import Client
from starlette.testclient import TestClient

import rag
from rag.settings import Settings
from rag.types import DECISIONS
from rag.ui import cli
from rag.ui.mcp_server import build_server
from rag.ui.openai_api import app

QUESTION = "Which kernels avoid mean reversion in Gaussian process regression?"
NOT_STATED = "How long does training DiffAug take?"


def through_cli(question: str, capsys) -> dict:
    assert cli.main(["ask", "--json", question]) == 0
    return json.loads(capsys.readouterr().out)


def through_mcp(settings: Settings, question: str) -> dict:
    async def go():
        async with Client(build_server(settings)) as client:
            return await client.call_tool("ask", {"question": question})
    return anyio.run(go).structured_content


def through_openai(settings: Settings, question: str) -> dict:
    with TestClient(app(settings)) as client:
        reply = client.post("/v1/chat/completions", json={
            "model": "icml-rag", "messages": [{"role": "user", "content": question}]})
    assert reply.status_code == 200, reply.text
    return reply.json()["choices"][0]["message"]


@pytest.mark.parametrize("question, decision", [(QUESTION, "answered"),
                                                (NOT_STATED, "not_stated")])
def test_every_door_gives_the_same_citations_and_decision(question, decision, settings,
                                                          seed_home, monkeypatch, capsys):
    monkeypatch.setenv("RAG_HOME", str(seed_home))
    view = rag.ask(question, settings=settings).to_dict()
    assert view["decision"] == decision and view["citations"]
    for door in (through_cli(question, capsys), through_mcp(settings, question),
                 through_openai(settings, question)):
        assert door["citations"] == view["citations"]
        assert door["decision"] == view["decision"] and door["outcome"] == view["outcome"]


def test_a_citation_names_its_paper_quote_and_passage(settings):
    answer = rag.ask(QUESTION, settings=settings)
    cited = answer.to_dict()["citations"][0]
    c = answer.citations[0]
    assert cited == {"n": 1, "paper_id": c.passage.paper_id, "title": c.passage.title,
                     "url": c.passage.url, "quote": c.quote, "text": c.passage.text}
    assert c.quote and c.quote in c.passage.text


def test_each_kind_of_answer_says_its_decision(settings):
    author = rag.papers(settings=settings)[0].authors.split(",")[0].strip()
    kinds = {"answered": QUESTION,
             "not_stated": NOT_STATED,
             "cannot_answer": "How do I change a flat tire on a bicycle?",
             "list": "List papers on Gaussian processes",
             "person": f"papers by {author}",
             "table": "Compare the papers on Gaussian processes by kernel and dataset"}
    for want, question in kinds.items():
        answer = rag.ask(question, settings=settings)
        assert answer.decision == want, (question, answer.decision, answer.text)
        assert answer.abstained == (want in ("not_stated", "cannot_answer"))
    assert set(kinds) == set(DECISIONS)
