"""Generators write answer text with `[n]` markers from numbered passages.

`Generator` is the one protocol every backend follows (`backends.py` registers them by name).
`generate` is required: it yields the answer in pieces (a streaming backend yields tokens, the
extractive one yields once); the LLM backends first yield the `Prompt` they sent
(`answer/prompting.py`: which passages fit the token budget, and any truncation notice), then
text. The optional methods have defaults that say "not offered", so the engine calls them on
any backend: `verdict` (P(YES) that the evidence states the answer: None), `rewrite` (a
follow-up as a standalone query: None) and `model` (the served model's name: ""). `idf` is the
question's IDF table (its snapshot's), passed per call rather than kept by the backend.
Citation and support checking are not done here: the engine runs them once on the joined text,
whatever generator wrote it.
"""

from __future__ import annotations

from typing import Iterator, Protocol, Sequence

from ..text import Idf
from ..types import Passage

History = Sequence[tuple[str, str]]  # (user question, assistant answer) pairs, oldest first


class Generator(Protocol):
    name: str
    model: str = ""  # the served model's name (a fitted `verdict.json` is for one model)

    def generate(self, question: str, passages: list[Passage], history: History = (),
                 idf: Idf | None = None) -> Iterator[object]:
        """Pieces of the answer (`str`; an LLM backend yields its `Prompt` first); `[n]`
        refers to `passages[n - 1]`."""
        ...

    def verdict(self, question: str, passages: list[Passage], history: History = (),
                idf: Idf | None = None) -> float | None:
        """P(YES) that `passages` state the answer; None: not offered, or no reading."""
        return None

    def rewrite(self, question: str, history: History) -> str | None:
        """`question` as a standalone query; None: not offered, or the reply was unusable."""
        return None
