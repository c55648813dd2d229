"""The OpenAI-compatible API of a real `rag serve` (/v1), through clients nobody here wrote: the
`openai` SDK (streaming and not, the citations read back from both), llama-index's OpenAILike
LLM, and curl for the raw server-sent events; OpenAI-shaped errors with their status codes; the
server's login. The answers are `rag.ask`'s on the seed index (the extractive generator)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai
import pytest

import rag
from conftest import copy_home, free_port, stop
from rag.settings import Settings
from rag.ui.availability import generator_status

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "Which kernels avoid mean reversion in Gaussian process regression?"
GP_TITLE = "Stationarity without mean reversion in improper Gaussian processes"
COOKIES = "What is the best recipe for chocolate chip cookies?"

pytestmark = pytest.mark.server




def start_serve(home: Path, log: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    """`rag serve` on a free port; its base URL once /v1/models answers."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_"))}
    env.update(RAG_HOME=str(home), RAG_CORPUS="seeds", GRADIO_ANALYTICS_ENABLED="False",
               HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "rag.ui.cli", "serve", "--port", str(port),
                             *extra], cwd=ROOT, env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"rag serve exited with {proc.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(url + "/v1/models", timeout=2).status_code in (200, 401):
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    stop(proc)
    raise AssertionError(f"rag serve did not come up:\n{log.read_text()}")


@pytest.fixture(scope="module")
def home(seed_home, tmp_path_factory) -> Path:
    return copy_home(seed_home, tmp_path_factory.mktemp("openai-api") / "home")


@pytest.fixture(scope="module")
def server(home, tmp_path_factory):
    proc, url = start_serve(home, tmp_path_factory.mktemp("logs") / "serve.log")
    yield url
    stop(proc)


@pytest.fixture(scope="module")
def client(server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server + "/v1", api_key="unused", max_retries=0)


@pytest.fixture(scope="module")
def settings(home) -> Settings:
    return Settings.load(home=str(home), env={}, corpus="seeds")


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def expected_citations(answer: rag.Answer) -> list[dict]:
    return [{"n": c.n, "paper_id": c.paper_id, "title": c.passage.title, "url": c.passage.url,
             "quote": c.quote, "text": c.passage.text} for c in answer.citations]


# -- models --------------------------------------------------------------------------------------


def test_models_are_one_per_generator_this_machine_runs(client):
    ids = [m.id for m in client.models.list()]
    assert ids[:2] == ["icml-rag", "icml-rag-extractive"]
    assert ("icml-rag-local" in ids) == generator_status()["local"].available
    assert "icml-rag-openai" not in ids  # the server has no LLM endpoint configured


# -- the openai SDK ------------------------------------------------------------------------------


def test_a_completion_carries_the_answer_its_references_and_citations(client, settings):
    reply = client.chat.completions.create(model="icml-rag", messages=user(QUESTION))
    want = rag.ask(QUESTION, settings=settings)
    choice = reply.choices[0]
    assert choice.finish_reason == "stop" and choice.message.role == "assistant"
    content = choice.message.content
    assert content.startswith(want.text + "\n\nReferences:\n")
    assert f"[1] {GP_TITLE} <https://icml.cc/virtual/2024/poster/34936>" in content
    assert choice.message.citations == expected_citations(want)
    assert choice.message.outcome == "answered"
    assert reply.object == "chat.completion" and reply.model == "icml-rag"


def test_a_stream_ends_in_a_chunk_that_carries_the_citations(client, settings):
    chunks = list(client.chat.completions.create(model="icml-rag", messages=user(QUESTION),
                                                 stream=True))
    want = rag.ask(QUESTION, settings=settings)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    plain = client.chat.completions.create(model="icml-rag", messages=user(QUESTION))
    assert text == plain.choices[0].message.content
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert last.citations == expected_citations(want)  # top level, and in the delta
    assert last.choices[0].delta.citations == expected_citations(want)
    assert all(c.choices[0].finish_reason is None for c in chunks[:-1])
    assert len({c.id for c in chunks}) == 1


def test_a_completion_says_how_long_the_server_took_to_answer(server):
    t = time.perf_counter()
    r = httpx.post(server + "/v1/chat/completions", timeout=300,
                   json={"model": "icml-rag", "messages": user(QUESTION)})
    elapsed_ms = (time.perf_counter() - t) * 1000
    name, _, duration = r.headers["server-timing"].partition(";dur=")
    assert name == "ask" and 0 < float(duration) <= elapsed_ms


def test_an_abstention_is_an_ordinary_answer(client):
    reply = client.chat.completions.create(model="icml-rag-extractive", messages=user(COOKIES))
    message = reply.choices[0].message
    assert reply.choices[0].finish_reason == "stop"
    assert message.content == rag.CANNOT_ANSWER and message.citations == []
    assert message.outcome == "cannot_answer"
    chunks = list(client.chat.completions.create(model="icml-rag", messages=user(COOKIES),
                                                 stream=True))
    assert chunks[-1].choices[0].finish_reason == "stop" and chunks[-1].citations == []


def test_the_messages_become_the_question_and_its_history(client, settings):
    first = rag.ask(QUESTION, settings=settings)
    follow_up = "What data did they analyse?"
    messages = [{"role": "system", "content": "You are terse."},
                {"role": "user", "content": QUESTION},
                {"role": "assistant", "content": first.text},
                {"role": "user", "content": [{"type": "text", "text": follow_up}]}]
    reply = client.chat.completions.create(model="icml-rag", messages=messages)
    want = rag.ask(follow_up, [(QUESTION, first.text)], settings=settings)
    assert reply.choices[0].message.content.startswith(want.text)
    assert reply.choices[0].message.citations == expected_citations(want)


# -- llama-index and curl ------------------------------------------------------------------------


def test_llama_index_openai_like_reads_the_answer(server, client):
    from llama_index.core.llms import ChatMessage
    from llama_index.llms.openai_like import OpenAILike

    llm = OpenAILike(model="icml-rag", api_base=server + "/v1", api_key="unused",
                     is_chat_model=True, max_retries=0, timeout=120)
    plain = client.chat.completions.create(model="icml-rag", messages=user(QUESTION))
    reply = llm.chat([ChatMessage(role="user", content=QUESTION)])
    assert reply.message.content == plain.choices[0].message.content
    assert reply.raw.choices[0].message.citations == plain.choices[0].message.citations
    streamed = list(llm.stream_chat([ChatMessage(role="user", content=QUESTION)]))
    assert streamed[-1].message.content == plain.choices[0].message.content


def sse_events(raw: str) -> list[str]:
    """The `data:` payloads of a server-sent event stream, checking its framing."""
    assert raw.endswith("\n\n")
    events = raw.split("\n\n")[:-1]
    assert all(e.startswith("data: ") and "\n" not in e for e in events), raw
    return [e[len("data: "):] for e in events]


def test_curl_sees_the_raw_event_stream(server, settings):
    body = json.dumps({"model": "icml-rag", "stream": True, "messages": user(QUESTION)})
    out = subprocess.run(["curl", "-sS", "-N", "-D", "-", "-H", "Content-Type: application/json",
                          "-d", body, server + "/v1/chat/completions"],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    head, _, raw = out.replace("\r\n", "\n").partition("\n\n")
    assert head.startswith("HTTP/1.1 200") and "text/event-stream" in head.lower()
    events = sse_events(raw)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    final = chunks[-1]
    assert final["choices"][0]["finish_reason"] == "stop"
    assert final["citations"] == expected_citations(rag.ask(QUESTION, settings=settings))


# -- errors --------------------------------------------------------------------------------------


def error_of(response: httpx.Response, status: int) -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
    assert "\n" not in error["message"] and "Traceback" not in response.text
    return error


def test_an_unknown_model_is_a_404_the_sdk_understands(client):
    with pytest.raises(openai.NotFoundError) as info:
        client.chat.completions.create(model="gpt-4o", messages=user(QUESTION))
    assert info.value.code == "model_not_found"
    assert "The model 'gpt-4o' does not exist" in info.value.message


def test_empty_or_malformed_messages_are_400(client, server):
    for messages in ([], user("   "), [{"role": "assistant", "content": "hi"}],
                     [{"role": "wizard", "content": "hi"}]):
        with pytest.raises(openai.BadRequestError) as info:
            client.chat.completions.create(model="icml-rag", messages=messages)
        assert info.value.body["param"].startswith("messages")
    url = server + "/v1/chat/completions"
    error = error_of(httpx.post(url, json={"messages": user(QUESTION)}), 400)
    assert error["param"] == "model"
    error = error_of(httpx.post(url, json={"model": "icml-rag", "messages": user(QUESTION),
                                           "stream": "yes"}), 400)
    assert error["param"] == "stream"


def test_bad_json_is_400_and_an_oversized_body_413(server):
    url = server + "/v1/chat/completions"
    headers = {"Content-Type": "application/json"}
    error = error_of(httpx.post(url, content=b'{"model": "icml-rag", "messages": [',
                                headers=headers), 400)
    assert error["code"] == "invalid_json" and error["type"] == "invalid_request_error"
    assert error_of(httpx.post(url, content=b"[1, 2]", headers=headers), 400)["code"] == \
        "invalid_json"
    huge = json.dumps({"model": "icml-rag", "messages": user("x" * 1_100_000)})
    assert error_of(httpx.post(url, content=huge, headers=headers), 413)["code"] == \
        "body_too_large"


def test_unknown_routes_are_openai_errors(server):
    assert error_of(httpx.get(server + "/v1/embeddings"), 404)["code"] == "unknown_url"
    assert error_of(httpx.get(server + "/v1/chat/completions"), 405)["code"] == \
        "method_not_allowed"
    assert httpx.get(server + "/").status_code == 200  # the page is still there


# -- the login -----------------------------------------------------------------------------------


def test_with_a_login_the_api_key_is_user_colon_password(home, tmp_path):
    proc, url = start_serve(home, tmp_path / "serve.log", "--auth", "ann:s3cret")
    try:
        anonymous = openai.OpenAI(base_url=url + "/v1", api_key="wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError) as info:
            anonymous.models.list()
        assert info.value.code == "invalid_api_key"
        error_of(httpx.post(url + "/v1/chat/completions", json={}), 401)
        ann = openai.OpenAI(base_url=url + "/v1", api_key="ann:s3cret", max_retries=0)
        reply = ann.chat.completions.create(model="icml-rag", messages=user(QUESTION))
        assert reply.choices[0].message.citations[0]["title"] == GP_TITLE
    finally:
        stop(proc)
