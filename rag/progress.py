"""The one progress bar: a tqdm bar on stderr for the command line, the UI launch and the evals.

The library itself draws nothing: it reports progress through a `(done, total)` callback
(`index_corpus(progress=...)`), and the edges pass one of these. The bar is created on the
first update, so work that never starts draws nothing, and closes itself when `done` reaches
`total`; `close()` ends its line early, so an error printed after a failed build starts on a
line of its own. Example:

    with ProgressBar("embedding") as bar:
        rag.index_corpus(progress=bar)      # embedding: 100%|#####| 212/212 [00:09, 23 chunk/s]

    with ProgressBar("seeds", unit="q", total=len(questions), leave=False) as bar:
        for q in questions:
            ...
            bar.advance()                   # one more question done

`enabled=False` gives a bar that draws nothing (and never imports tqdm). It does not nest bars
or detect a non-terminal stream: a log file gets tqdm's carriage-return updates.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO


class ProgressBar:
    """A `(done, total)` progress callback that draws a tqdm bar on `file` (default stderr)."""

    def __init__(self, desc: str, *, unit: str = "chunk", total: int | None = None,
                 file: TextIO | None = None, enabled: bool = True, leave: bool = True):
        self.desc, self.unit, self.total, self.file = desc, unit, total, file
        self.enabled, self.leave = enabled, leave
        self._bar: Any = None

    def _open(self, total: int | None) -> Any:
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=self.desc, unit=self.unit,
                             file=self.file or sys.stderr, dynamic_ncols=True, leave=self.leave)
        return self._bar

    def __call__(self, done: int, total: int) -> None:
        """`done` of `total` units are finished (the library's progress callback)."""
        if not self.enabled:
            return
        bar = self._open(total)
        bar.total, bar.n = total, done
        bar.refresh()
        if done >= total:
            self.close()

    def advance(self, n: int = 1) -> None:
        """`n` more units are finished (of the `total` given when the bar was made)."""
        if self.enabled:
            self._open(self.total).update(n)

    def close(self) -> None:
        """End the bar's line; the next update starts a new bar."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
