"""Generators write answer text with `[n]` markers from numbered passages.

The protocol has one required method, `generate`, which yields the answer in pieces (a
streaming backend yields tokens, the extractive one yields once). Citation checking is not done
here: the pipeline runs it once on the joined text, whatever generator wrote it.
"""

from __future__ import annotations

from typing import Iterator, Protocol, Sequence

from ..types import Passage

History = Sequence[tuple[str, str]]  # (user question, assistant answer) pairs, oldest first


class Generator(Protocol):
    name: str

    def generate(self, question: str, passages: list[Passage],
                 history: History = ()) -> Iterator[str]:
        """Pieces of the answer; `[n]` refers to `passages[n - 1]`."""
        ...
