"""The chat's logic, without the page: a session's turns and settings, answering a question as a
stream of message updates, finding what a citation link points at, friendly error messages.

The page keeps, per browser session, a list of `Turn`s (each answer and the corpus it came
from) and a dict of settings chosen in the panel; `respond()` turns a question into successive
HTML versions of the assistant's message, ending with the rendered answer.

Example: for html, turn in respond("Which kernels avoid mean reversion?", [], settings): ...
    -> pending html, (streamed text html ...), then the answer's html with its Turn; with a
    language model, the cited evidence comes first and its answer streams below it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import rag
from rag.errors import (GeneratorError, IndexCorruptError, IndexLockedError, IndexNotFoundError,
                        InputError, RagError, StoreUnavailableError)
from rag.settings import Settings
from rag.factory import generator_name
from rag.types import Answer, Draft

from . import live, render

log = logging.getLogger("ui")
PREF_KEYS = ("corpus", "retriever", "k", "generator", "list_limit")
_LINK = re.compile(r"^(?P<kind>[cpx])/(?P<turn>\d+)(?:/(?P<n>\d+))?$")


@dataclass
class Turn:
    answer: Answer
    corpus: str


def settings_for(base: Settings, prefs: dict[str, Any] | None) -> Settings:
    """The session's settings: the server's, with the panel's choices applied."""
    changes = {k: v for k, v in (prefs or {}).items() if k in PREF_KEYS and v not in (None, "")}
    return base.replace(**changes) if changes else base


def history(turns: Sequence[Turn]) -> list[tuple[str, str]]:
    return [(t.answer.question, t.answer.text) for t in turns]


def friendly(exc: BaseException) -> str:
    """What the chat says about an error: the error's own advice, framed for the page."""
    if isinstance(exc, InputError):
        return str(exc)
    if isinstance(exc, IndexNotFoundError):
        return ("this corpus has no index yet. Open Settings and press \u201cBuild index\u201d, "
                "or run `rag index --corpus <name>` in a terminal, then ask again")
    if isinstance(exc, IndexLockedError):
        return "the index is being updated right now; ask again in a moment"
    if isinstance(exc, StoreUnavailableError):
        return f"the vector store cannot be reached ({exc}); check it is running, then ask again"
    if isinstance(exc, (IndexCorruptError, GeneratorError, RagError)):
        return str(exc)
    return ("something went wrong on the server while answering "
            f"({type(exc).__name__}). The app is still running: try again, or rephrase")


def respond(question: str, turns: Sequence[Turn], settings: Settings
            ) -> Iterator[tuple[str, Turn | None]]:
    """(message html, the finished Turn or None) as the answer is retrieved and written."""
    yield live.pending_html(), None
    text, draft = "", None
    try:
        for event in rag.ask_stream(question, history(turns), settings=settings):
            if isinstance(event, Answer):
                turn = Turn(event, settings.corpus)
                yield render.answer_html(event, len(turns)), turn
                return
            if isinstance(event, Draft):  # the evidence at once; the model's answer below it
                draft = event.answer
                yield live.draft_html(draft, text, generator_name(settings)), None
            elif isinstance(event, str) and event:
                text += event
                yield (live.streaming_html(text) if draft is None else
                       live.draft_html(draft, text, generator_name(settings))), None
    except RagError as exc:
        yield render.error_html(friendly(exc)), None
    except Exception as exc:  # noqa: BLE001 - the page must keep working; the log keeps details
        log.exception("answering %r failed", question)
        yield render.error_html(friendly(exc)), None


def parse_link(value: str) -> tuple[str, int, int] | None:
    """'c/3/2:17' -> ('c', 3, 2): kind (c citation, p passage, x export), turn, number."""
    m = _LINK.match(str(value or "").split(":", 1)[0].strip())
    if not m:
        return None
    return m.group("kind"), int(m.group("turn")), int(m.group("n") or 0)


def source_for(turns: Sequence[Turn], kind: str, turn: int, n: int, settings: Settings,
               names: dict[str, str] | None = None) -> str | None:
    """The source panel's html for citation n (or passage n) of a turn; None if out of range."""
    if not 0 <= turn < len(turns):
        return None
    t = turns[turn]
    if kind == "c":
        cit = next((c for c in t.answer.citations if c.n == n), None)
        if cit is None:
            return None
        passage, spans, badge, quote = cit.passage, cit.spans, str(cit.n), cit.quote
    else:
        if not 0 <= n < len(t.answer.passages):
            return None
        passage, spans, badge, quote = t.answer.passages[n], (), "", ""
    paper = full_paper(settings.replace(corpus=t.corpus), passage.paper_id)
    source = (names or {}).get(passage.source, "")
    return render.passage_source_html(passage, spans, badge, quote, paper, source)


def full_paper(settings: Settings, paper_id: str):
    """The whole paper from the index (passages may hold only part of a long document)."""
    from .corpus_view import paper

    return paper(settings, paper_id)
