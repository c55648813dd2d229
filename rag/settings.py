"""One `Settings` object: defaults, then a config file, then `RAG_*` variables, then arguments.

Every field has a default and a one-line description; unknown keys are rejected, values are
checked. Secrets (API keys) are not settings: they are read from the environment where they are
used and never stored or printed.

Example: `RAG_K=3 rag ask "..."` and `Settings.load(k=3)` are the same thing.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError

CORPORA_BUILTIN = ("seeds", "icml2024")
RETRIEVERS = ("hybrid", "dense", "bm25")
FUSIONS = ("zscore", "rrf")
# 8 ran 1.24-1.39x faster than 32 on these 2 cores (less padding per batch): `make bench`.
EMBED_BATCH_SIZE = 8
EMBEDDERS = ("minilm", "openai")


def _default_home() -> str:
    from platformdirs import user_cache_dir

    return user_cache_dir("icml-rag", appauthor=False)


def _f(default: Any, help: str, **kw: Any) -> Any:
    return field(default=default, metadata={"help": help, **kw})


@dataclass(frozen=True)
class Settings:
    home: str = _f("", "Data directory for indexes, models and uploads (env RAG_HOME).")
    corpus: str = _f("icml2024", "Corpus to index and query: icml2024 (all 2,634 posters), "
                     "seeds (90 of them), or a path.")
    embedder: str = _f("minilm", "Embedder: minilm (offline, bundled) or openai (an endpoint).")
    embed_model: str = _f("text-embedding-3-small", "Model name for the openai embedder.")
    embed_batch_size: int = _f(EMBED_BATCH_SIZE, "Passages per embedding batch.", min=1,
                               max=4096)
    chunk_tokens: int = _f(200, "Maximum tokens per chunk (cl100k_base).", min=32, max=8192)
    chunk_overlap: int = _f(40, "Tokens of trailing sentences repeated in the next chunk.",
                            min=0, max=4096)
    retriever: str = _f("hybrid", "Retriever: hybrid (dense+BM25 fused), dense or bm25.",
                        choices=RETRIEVERS)
    k: int = _f(5, "Passages handed to the generator.", min=1, max=50)
    list_limit: int = _f(5, "Papers a list answer shows; it says how many more are relevant.",
                         min=1, max=40)
    table_rows: int = _f(10, "Papers (rows) a table answer compares.", min=1, max=40)
    candidates: int = _f(50, "Candidates each retriever returns before fusion.", min=1, max=1000)
    max_per_paper: int = _f(1, "At most this many passages per paper.", min=1, max=50)
    fusion: str = _f("zscore", "How hybrid fuses dense and BM25: zscore (z-normalised scores "
                     "summed) or rrf (reciprocal rank fusion).", choices=FUSIONS)
    rrf_k: int = _f(60, "Reciprocal rank fusion constant (fusion = rrf).", min=1, max=1000)
    abstain_threshold: float = _f(-1.0, "P(answerable) below which the answer abstains, 0-1; "
                                  "-1: the threshold fitted with the answerability model (see "
                                  "rag/retrieve/answerability.py).", min=-1.0, max=1.0)
    reader: str = _f("model", "Sentence scorer the reader and the gate ask which sentences "
                     "state the answer: model (the trained reader model, rag/models/reader.py; "
                     "its gate reads its score) or rules (word overlap: faster, reads worse), "
                     "or another registered one (`rag backends`); see rag/retrieve/sentences.py.",
                     registry="SCORERS")
    generator: str = _f("auto", "Generator (answer writer): auto, extractive, openai, local, or "
                        "another registered one (`rag backends`).", registry="WRITERS")
    openai_model: str = _f("gpt-4o-mini", "Chat model name for the openai generator.")
    llm_timeout: float = _f(60.0, "Seconds before an LLM request is abandoned.", min=1.0,
                            max=3600.0)
    llm_retries: int = _f(2, "Retries on 429/5xx, with exponential backoff.", min=0, max=10)
    llm_context_tokens: int = _f(8192, "Context window the LLM prompt must fit in.", min=512,
                                 max=1_000_000)
    answer_tokens: int = _f(350, "Tokens reserved for the generated answer.", min=16, max=8192)
    local_passages: int = _f(5, "Papers given to the local LLM (as evidence sentences).", min=1,
                             max=10)
    llm_verdict: bool = _f(True, "Ask the LLM whether the evidence states the answer and combine "
                           "its P(YES) with the gate (models with a fitted rag/answer/verdict.json).")
    llm_focus: bool = _f(True, "Count an LLM sentence that restates the question about papers "
                         "that do not speak of it as unsupported (rag/check/focus.py).")
    local_threads: int = _f(0, "CPU threads for the local LLM (0: all cores).", min=0, max=256)
    max_question_chars: int = _f(2000, "Longer questions are truncated, with a notice.",
                                 min=16, max=1_000_000)
    chroma_url: str = _f("", "Chroma server URL (client/server mode); empty: embedded store.")
    lease_seconds: float = _f(30.0, "How long a killed writer's lock on a Chroma server lasts.",
                              min=1.0, max=3600.0)
    ui_host: str = _f("127.0.0.1", "Address the chat UI binds to.")
    ui_port: int = _f(7860, "Port of the chat UI.", min=1, max=65535)
    ui_concurrency: int = _f(2, "Questions answered at once; the rest wait in the queue.",
                             min=1, max=64)

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def load(cls, config_file: str | os.PathLike | None = None, env: dict | None = None,
             **overrides: Any) -> "Settings":
        """Defaults < config file (RAG_CONFIG or HOME/config.toml) < RAG_* env < overrides."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        names = {f.name for f in dataclasses.fields(cls)}
        home = overrides.get("home") or env.get("RAG_HOME") or _default_home()
        path = config_file or env.get("RAG_CONFIG") or Path(home) / "config.toml"
        if Path(path).is_file():
            try:
                data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{path}: not valid TOML ({exc})") from None
            _reject_unknown(data, names, f"config file {path}")
            values.update(data)
        elif config_file:
            raise ConfigError(f"config file {config_file} does not exist")
        for name in names:
            key = f"RAG_{name.upper()}"
            if key in env and env[key] != "":
                values[name] = env[key]
        _reject_unknown(overrides, names, "arguments")
        values.update({k: v for k, v in overrides.items() if v is not None})
        values["home"] = str(values.get("home") or home)
        return cls(**{k: _coerce(cls, k, v) for k, v in values.items()})

    def replace(self, **changes: Any) -> "Settings":
        _reject_unknown(changes, {f.name for f in dataclasses.fields(self)}, "arguments")
        return dataclasses.replace(
            self, **{k: _coerce(type(self), k, v) for k, v in changes.items() if v is not None})

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            meta = f.metadata
            if "choices" in meta and value not in meta["choices"]:
                raise ConfigError(f"unknown {f.name} {value!r}: choose one of "
                                  f"{', '.join(meta['choices'])}")
            if "registry" in meta:  # a registered part: checked against its registry
                from . import registry

                getattr(registry, meta["registry"]).check(value)
            if "min" in meta and not (meta["min"] <= value <= meta["max"]):
                raise ConfigError(f"{f.name} must be between {meta['min']} and {meta['max']}, "
                                  f"got {value}")
        if self.embedder not in EMBEDDERS:
            raise ConfigError(f"unknown embedder {self.embedder!r}: choose one of "
                              f"{', '.join(EMBEDDERS)}")
        if self.chunk_overlap >= self.chunk_tokens:
            raise ConfigError("chunk_overlap must be smaller than chunk_tokens")

    # -- derived paths --------------------------------------------------------------------

    @property
    def home_path(self) -> Path:
        return Path(self.home).expanduser()

    @staticmethod
    def describe() -> list[tuple[str, Any, str]]:
        """(name, default, description) of every setting, for docs and `rag settings`."""
        return [(f.name, f.default, f.metadata["help"]) for f in dataclasses.fields(Settings)]


def _reject_unknown(data: dict, names: set[str], where: str) -> None:
    unknown = sorted(set(data) - names)
    if unknown:
        raise ConfigError(f"unknown setting(s) in {where}: {', '.join(unknown)}")


def _coerce(cls: type, name: str, value: Any) -> Any:
    kind = {f.name: f.type for f in dataclasses.fields(cls)}[name]
    try:
        if kind in ("bool", bool):
            if isinstance(value, bool):
                return value
            flag = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False,
                    "no": False, "off": False}.get(str(value).strip().lower())
            if flag is None:
                raise ValueError
            return flag
        if kind in ("int", int):
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            return int(value)
        if kind in ("float", float):
            return float(value)
        return str(value)
    except (TypeError, ValueError):
        noun = {"int": "a whole number", "float": "a number", "bool": "true or false"}.get(
            getattr(kind, "__name__", kind), "text")
        raise ConfigError(f"{name} must be {noun}, got {value!r}") from None
