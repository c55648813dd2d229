"""Configurations to compare in one run: a grid of settings plus the BM25 and dense baselines.

`parse_grid(["retriever=bm25,hybrid", "k=3,5"])` -> four override dicts (the cartesian product,
in the order given). `make_configs` turns them into named `Config`s on top of the base settings
and appends a retrieval-only BM25 row and dense row unless the grid already holds them, so every
retrieval table carries its baselines measured in the same run.

Settings that change what is indexed (embedder, chunking, corpus, data directory) cannot be
gridded: each value needs an index of its own, so run `rag eval` once per value instead.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Sequence

from rag.errors import ConfigError
from rag.settings import Settings

NOT_GRIDDABLE = ("home", "corpus", "embedder", "embed_model", "chunk_tokens", "chunk_overlap",
                 "chroma_url")
BASELINES = ("bm25", "dense")


@dataclass(frozen=True)
class Config:
    name: str
    settings: Settings
    overrides: dict[str, Any] = field(default_factory=dict)
    baseline: bool = False  # a retrieval baseline row added by the harness
    with_answer: bool = True  # False: retrieval only, no generation


def parse_grid(tokens: Sequence[str]) -> list[dict[str, str]]:
    """Override dicts for every combination of `name=v1,v2` tokens; [{}] for no tokens."""
    axes: list[tuple[str, list[str]]] = []
    for token in tokens:
        name, sep, values = token.partition("=")
        name = name.strip().replace("-", "_")
        items = [v.strip() for v in values.split(",") if v.strip()]
        if not sep or not name or not items:
            raise ConfigError(f"bad --grid entry {token!r}: write name=value1,value2 (e.g. "
                              f"retriever=bm25,dense,hybrid k=3,5,10)")
        if name in NOT_GRIDDABLE:
            raise ConfigError(f"--grid cannot vary {name}: each value needs its own index; run "
                              f"`rag eval` once per value instead")
        if any(name == n for n, _ in axes):
            raise ConfigError(f"--grid names {name} twice")
        axes.append((name, items))
    if not axes:
        return [{}]
    names = [n for n, _ in axes]
    return [dict(zip(names, combo)) for combo in itertools.product(*(v for _, v in axes))]


def describe(settings: Settings, overrides: dict[str, Any]) -> str:
    """A short name: retriever and k, then any other override. Example: 'hybrid k=5 rrf_k=20'."""
    extra = [f"{n}={getattr(settings, n)}" for n in overrides if n not in ("retriever", "k")]
    return " ".join([settings.retriever, f"k={settings.k}", *extra])


def make_configs(base: Settings, grid: Sequence[dict[str, Any]], baselines: bool = True,
                 with_answer: bool = True) -> list[Config]:
    """The grid's configs on `base` (invalid values raise ConfigError), then the baselines."""
    configs: list[Config] = []
    for overrides in grid:
        settings = base.replace(**overrides)
        configs.append(Config(describe(settings, overrides), settings, dict(overrides),
                              with_answer=with_answer))
    if baselines:
        # k does not change the ranking (it is recorded to depth max(10, k)), other settings do.
        have = {c.settings.retriever for c in configs
                if not c.overrides.keys() - {"retriever", "k"}}
        for name in BASELINES:
            if name not in have:
                settings = base.replace(retriever=name)
                configs.append(Config(f"{name} (baseline)", settings, {"retriever": name},
                                      baseline=True, with_answer=False))
    names = [c.name for c in configs]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise ConfigError(f"--grid gives the same configuration twice: {', '.join(sorted(dupes))}")
    return configs
