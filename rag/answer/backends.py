"""The language-model backends, registered by name (as simonw/llm registers models).

`BACKENDS` maps the setting `generator`'s names to a maker `make(settings) -> Generator`; a new
backend is one `register_backend("name", make)` line. Each maker imports its backend's module
when called, so a missing optional dependency is a clear `GeneratorUnavailableError` on first
use rather than an import failure of the package. "extractive" is no backend: the engine's own
reader writes those answers, with no model.

Example: make_backend("local", settings) -> LocalGenerator (the in-process llama.cpp server).
"""

from __future__ import annotations

from typing import Callable

from ..errors import GeneratorUnavailableError
from ..settings import Settings
from . import Generator


def _openai(settings: Settings) -> Generator:
    try:
        from .openai import OpenAIGenerator
    except ImportError as exc:
        raise GeneratorUnavailableError(f"the openai generator is unavailable ({exc})") from None
    return OpenAIGenerator(settings)


def _local(settings: Settings) -> Generator:
    try:
        from .local import LocalGenerator
    except ImportError as exc:
        raise GeneratorUnavailableError(f"the local generator is unavailable ({exc})") from None
    return LocalGenerator(settings)


BACKENDS: dict[str, Callable[[Settings], Generator]] = {"openai": _openai, "local": _local}


def register_backend(name: str, make: Callable[[Settings], Generator]) -> None:
    """Make `make(settings)` the backend the setting `generator=name` chooses."""
    BACKENDS[name] = make


def make_backend(name: str, settings: Settings) -> Generator:
    """The backend `name` for `settings`; GeneratorUnavailableError if none is registered."""
    make = BACKENDS.get(name)
    if make is None:
        raise GeneratorUnavailableError(f"no generator backend named {name!r}; registered: "
                                        f"{', '.join(sorted(BACKENDS))}")
    return make(settings)
