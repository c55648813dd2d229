"""Security: the UI binds 127.0.0.1 unless told otherwise, and an API key never shows up in
an output: not in answers, notices, error messages, logs, saved eval results or the data
directory. The key is fake (`sk-test-FAKE...`) and the endpoints are local: a refused port, and
a server that answers 401 echoing back the key it was sent (as some servers do).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import rag
from conftest import ROOT, free_port
from fault_server import FaultServer
from rag.settings import Settings

QUESTION = "Which kernels avoid mean reversion in Gaussian process regression?"


@pytest.fixture
def key(monkeypatch) -> str:
    value = f"sk-test-FAKE{secrets.token_hex(16)}"
    monkeypatch.setenv("OPENAI_API_KEY", value)
    return value




def refused_url() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there


def leaks(key: str, *texts: str | bytes) -> list[str]:
    """The outputs that contain the key, or any 12-character piece of its secret part."""
    pieces = {key} | {key[i : i + 12] for i in range(len("sk-test-FAKE"), len(key) - 11)}
    found = []
    for text in texts:
        text = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        if any(p in text for p in pieces):
            found.append(text[:300])
    return found


def files_with(key: str, folder: Path) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and leaks(key, p.read_bytes())]


def run_rag(home: Path, *args: str, timeout: float = 600, **env: str):
    return subprocess.run([sys.executable, "-m", "rag.ui.cli", *args], cwd=ROOT, capture_output=True,
                          env={**os.environ, "RAG_HOME": str(home), **env}, timeout=timeout)


def test_the_ui_binds_to_loopback_by_default():
    assert Settings.load(env={}).ui_host == "127.0.0.1"


def test_serving_a_network_address_without_a_login_is_refused(tmp_path):
    out = run_rag(tmp_path / "home", "serve", "--host", "0.0.0.0", "--port", str(free_port()),
                  timeout=120)
    assert out.returncode == 1 and b"refusing to serve on 0.0.0.0 without a login" in out.stderr
    assert b"Traceback" not in out.stderr


def test_answers_and_logs_never_hold_the_key(key, seed_settings, caplog, capfd, monkeypatch):
    """A 401 that echoes the key, then a refused port: the fallback notice names the problem,
    not the key."""
    caplog.set_level(logging.DEBUG)
    with FaultServer(default="401") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        refused = rag.ask(QUESTION, settings=seed_settings, generator="openai")
        assert server.chat_requests, "the request never reached the server"
    assert any("refused the API key" in n for n in refused.notices)
    monkeypatch.setenv("OPENAI_BASE_URL", refused_url())
    unreachable = rag.ask(QUESTION, settings=seed_settings.replace(llm_retries=0),
                          generator="openai")
    assert any("cannot connect" in n for n in unreachable.notices)
    out, err = capfd.readouterr()
    outputs = [json.dumps(a.to_dict()) for a in (refused, unreachable)]
    outputs += [" ".join(a.notices) for a in (refused, unreachable)]
    assert not leaks(key, *outputs, caplog.text, out, err)
    assert not files_with(key, Path(seed_settings.home))


@pytest.mark.slow
def test_the_cli_never_prints_the_key(key, copy_of_seed_home, tmp_path):
    with FaultServer(default="401") as server:
        text = run_rag(copy_of_seed_home, "ask", QUESTION, OPENAI_BASE_URL=server.url)
        as_json = run_rag(copy_of_seed_home, "ask", "--json", QUESTION, "--generator", "openai",
                          OPENAI_BASE_URL=server.url)
    assert text.returncode == 0 and as_json.returncode == 0, text.stderr
    assert b"refused the API key" in text.stdout
    # An OpenAI-compatible embedder on a refused port: indexing fails with a clear message.
    corpus = tmp_path / "papers.jsonl"
    corpus.write_text(json.dumps({"id": "x", "abstract": "A short abstract."}) + "\n")
    failed = run_rag(tmp_path / "other-home", "index", "--corpus", str(corpus),
                     RAG_EMBEDDER="openai", OPENAI_BASE_URL=refused_url(), RAG_LLM_RETRIES="0")
    assert failed.returncode == 1 and b"rag: error:" in failed.stderr
    assert b"Traceback" not in failed.stderr
    assert not leaks(key, text.stdout, text.stderr, as_json.stdout, as_json.stderr,
                     failed.stdout, failed.stderr)
    assert not files_with(key, copy_of_seed_home) and not files_with(key, tmp_path)


def test_a_key_put_in_the_config_file_is_refused_without_echoing_it(key, tmp_path):
    from rag.errors import ConfigError

    config = tmp_path / "config.toml"
    config.write_text(f'openai_api_key = "{key}"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        Settings.load(config_file=config)
    assert "openai_api_key" in str(err.value) and not leaks(key, str(err.value))
    assert not leaks(key, repr(Settings.load(env=dict(os.environ))))


@pytest.mark.slow
def test_saved_eval_results_never_hold_the_key(key, seed_home, tmp_path):
    out = tmp_path / "results"
    proc = run_rag(seed_home, "eval", "--dataset", "seeds", "--limit", "3", "--no-baselines",
                   "--no-plots", "--no-index", "--generator", "openai", "--out", str(out),
                   OPENAI_BASE_URL=refused_url(), RAG_LLM_RETRIES="0", timeout=900)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert any(out.rglob("*")), "the eval saved nothing"
    assert not leaks(key, proc.stdout, proc.stderr)
    assert not files_with(key, out)


@pytest.mark.slow
@pytest.mark.server
def test_rag_serve_listens_on_127_0_0_1_and_its_logs_and_api_never_hold_the_key(
        key, copy_of_seed_home):
    import psutil
    from gradio_client import Client

    port = free_port()
    with FaultServer(default="401") as server:
        env = {**os.environ, "RAG_HOME": str(copy_of_seed_home), "OPENAI_BASE_URL": server.url,
               "GRADIO_ANALYTICS_ENABLED": "False"}
        proc = subprocess.Popen([sys.executable, "-m", "rag.ui.cli", "serve", "--port", str(port)],
                                cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline and proc.poll() is None:
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.5)
            assert proc.poll() is None, proc.stdout.read().decode()[-3000:]
            listening = [c for c in psutil.Process(proc.pid).net_connections(kind="inet")
                         if c.status == psutil.CONN_LISTEN]
            assert listening and all(c.laddr.ip == "127.0.0.1" for c in listening), listening
            client = Client(f"http://127.0.0.1:{port}/", verbose=False)
            answer = client.predict(QUESTION, api_name="/ask")
            assert answer["question"] == QUESTION and answer["citations"]
            assert server.chat_requests, "the request never reached the LLM server"
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        log = proc.stdout.read()
    assert not leaks(key, json.dumps(answer), log)
    assert not files_with(key, copy_of_seed_home)
