"""Generators write answer text with `[n]` markers from numbered passages.

The protocol has one required method, `generate`, which yields the answer in pieces (a
streaming backend yields tokens, the extractive one yields once). The LLM backends first yield
the `Prompt` they sent (`answer/prompting.py`: which passages fit the token budget, and any
truncation notice), then text. Citation and support checking are not done here: the pipeline
runs them once on the joined text, whatever generator wrote it.
"""

from __future__ import annotations

from typing import Iterator, Protocol, Sequence

from ..types import Passage

History = Sequence[tuple[str, str]]  # (user question, assistant answer) pairs, oldest first


class Generator(Protocol):
    name: str

    def generate(self, question: str, passages: list[Passage],
                 history: History = ()) -> Iterator[object]:
        """Pieces of the answer (`str`; an LLM backend yields its `Prompt` first); `[n]`
        refers to `passages[n - 1]`."""
        ...
