"""Shared fixtures: a real Chroma index of the shipped seeds, built once per test session with
the real MiniLM model, and an isolated data directory for every test.

The default corpus is the whole conference (icml2024); the tests run on the 90 seed papers:
`RAG_CORPUS=seeds` for every test, and the seed index's data directory carries a config.toml
that says `corpus = "seeds"`, so settings loaded with `env={}` on it query the seeds too."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path, monkeypatch):
    """No test touches the user's cache or a configured LLM endpoint, or indexes the whole
    conference, by accident."""
    monkeypatch.setenv("RAG_HOME", str(tmp_path / "rag-home"))
    for key in list(os.environ):
        if key.startswith("RAG_") and key != "RAG_HOME":
            monkeypatch.delenv(key)
    monkeypatch.setenv("RAG_CORPUS", "seeds")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture(scope="session")
def embedder():
    from rag.models.embedders import MiniLM

    return MiniLM()


@pytest.fixture(scope="session")
def seed_home(tmp_path_factory, embedder) -> Path:
    """A data directory holding the index of the seeds (built once per session)."""
    from rag import factory
    from rag.index.build import build_index
    from rag.settings import Settings

    home = tmp_path_factory.mktemp("seed-home")
    (home / "config.toml").write_text('corpus = "seeds"\n', encoding="utf-8")
    settings = Settings.load(home=str(home), env={}, corpus="seeds")
    factory._embedders[("minilm", "")] = embedder
    build_index(settings, embedder, factory.store(settings), "seeds")
    return home


@pytest.fixture(scope="session")
def full_home(tmp_path_factory, embedder) -> Path:
    """A data directory holding the index of the whole ICML 2024 corpus (the default corpus),
    built once per session from the shipped embedding cache (about 30 s, nothing embedded)."""
    from rag import factory
    from rag.index.build import build_index
    from rag.settings import Settings

    home = tmp_path_factory.mktemp("full-home")
    (home / "config.toml").write_text('corpus = "icml2024"\n', encoding="utf-8")
    settings = Settings.load(home=str(home), env={}, corpus="icml2024")
    factory._embedders[("minilm", "")] = embedder
    report = build_index(settings, embedder, factory.store(settings), "icml2024")
    assert report.embedded == 0, "the shipped embedding cache should cover the built-in corpus"
    return home


@pytest.fixture
def full_settings(full_home):
    from rag.settings import Settings

    return Settings.load(home=str(full_home), env={}, corpus="icml2024")


@pytest.fixture(scope="session")
def seed_settings(seed_home):
    """Settings on the session's seed index (immutable, so shared by every test)."""
    from rag.settings import Settings

    return Settings.load(home=str(seed_home), env={}, corpus="seeds")


@pytest.fixture(scope="session")
def settings(seed_settings):
    """The settings most tests ask with: the seed index's (a module may define its own)."""
    return seed_settings


def _link_or_copy(source: str, target: str) -> None:
    """Model files (a 1 GB GGUF once a test has assembled one) are hard-linked, not copied: no
    test changes them, and a copy per test filled the disk of a CI machine."""
    if Path(source).parent.name == "models":
        try:
            os.link(source, target)
            return
        except OSError:
            pass
    shutil.copy2(source, target)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a test's server)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc: subprocess.Popen) -> None:
    """Stop a server a test started as Ctrl-C does (SIGINT), killing it after 30 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def copy_home(source: Path, target: Path) -> Path:
    """A private copy of a data directory: its index is copied, its models are shared."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("index.lock"),
                    copy_function=_link_or_copy)
    return target


@pytest.fixture
def copy_of_seed_home(seed_home, tmp_path) -> Path:
    """A private copy of the seed index, for tests that change it."""
    return copy_home(seed_home, tmp_path / "home-copy")


def load_questions() -> list[dict]:
    path = ROOT / "eval" / "datasets" / "seeds.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
