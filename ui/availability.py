"""Which generators and corpora can be chosen in the settings panel, and why not when not.

Cheap checks only (environment variables, `importlib.util.find_spec`, the store's collections):
nothing here loads a model or contacts a server, so the panel can ask on every page load.

Example: generator_status({}) -> {"auto": Status(True, "extractive (no LLM endpoint set)"),
    "extractive": Status(True, ""), "openai": Status(False, "set OPENAI_BASE_URL ..."), ...}
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from rag.registry import WRITERS
from rag.settings import Settings

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


def generator_status(env: Mapping[str, str] | None = None) -> dict[str, Status]:
    """Availability of each generator choice, with the reason shown to the user."""
    env = os.environ if env is None else env
    endpoint = bool(env.get("OPENAI_BASE_URL") or env.get("OPENAI_API_KEY"))
    local_ready = WRITERS["local"].why_unavailable(env) is None if "local" in WRITERS else False
    out = {"auto": Status(True, "uses openai" if endpoint else
                          "uses extractive: no LLM endpoint is configured" + (
                              f"; the local model is not the default, too slow here "
                              f"({LOCAL_SPEED}; goals: 3 s and 8 s) and less accurate "
                              f"({LOCAL_QUALITY})" if local_ready else "")),
           "extractive": Status(True, "quotes the abstracts' own sentences; no LLM")}
    for entry in WRITERS:  # every registered writer, with the registry's cheap check
        if entry.name in out:
            continue
        why = entry.why_unavailable(env)
        if why is not None:
            out[entry.name] = Status(False, why)
        elif entry.name == "openai":
            out[entry.name] = Status(True, env.get("OPENAI_BASE_URL") or "api.openai.com")
        elif entry.name == "local":
            out[entry.name] = Status(True, f"{LOCAL_SPEED}; {LOCAL_QUALITY}")
        else:
            out[entry.name] = Status(True, entry.help)
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
