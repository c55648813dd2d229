"""The language-model backends, registered by name in `rag.registry.WRITERS` (as simonw/llm
registers models).

A new backend is one `register_backend("name", make)` line, `make(settings) -> Generator`;
the setting `generator` accepts it at once. A built-in backend's module is imported when the
backend is made, so a missing optional dependency is a clear `GeneratorUnavailableError` on
first use rather than an import failure of the package. "auto" and "extractive" are no
backend: the engine's own reader writes those answers, with no model.

Example: make_backend("local", settings) -> LocalGenerator (the in-process llama.cpp server).
"""

from __future__ import annotations

from typing import Callable

from ..errors import GeneratorUnavailableError
from ..registry import WRITERS, Availability
from ..settings import Settings
from . import Generator


def register_backend(name: str, make: Callable[[Settings], Generator], help: str = "",
                     available: Availability | None = None, options: tuple[str, ...] = ()
                     ) -> None:
    """Make `make(settings)` the backend the setting `generator=name` chooses; `available`
    (env -> None or why not) is what `rag backends` and the settings panel show."""
    WRITERS.register(name, make, help, available, options)


def unregister_backend(name: str) -> None:
    WRITERS.unregister(name)


def make_backend(name: str, settings: Settings) -> Generator:
    """The backend `name` for `settings`; GeneratorUnavailableError if none is registered
    under that name or its module cannot be imported."""
    entry = WRITERS[name] if name in WRITERS else None
    if entry is None or entry.make is None:
        raise GeneratorUnavailableError(
            f"no generator backend named {name!r}; registered: "
            f"{', '.join(e.name for e in WRITERS if e.make is not None)}")
    try:
        make = entry.maker()
    except ImportError as exc:
        raise GeneratorUnavailableError(f"the {name} generator is unavailable ({exc})") from None
    return make(settings)
