"""The assistant's message while it is being written: searching, the cited evidence shown at once
with the language model's answer streaming below it, or the extractive answer's text so far.

Citations are not links yet (the answer is not a turn of the chat until it is finished): they
are shown as pending badges, and the finished message (`render.answer_html`) replaces this one.

Example: draft_html(draft, "Genie is an 11B", "local") -> the evidence ("At 11B parameters,
Genie ... [1]", and "[1] Genie: Generative Interactive Environments"), then "Answer from the
local model", the words so far and a blinking caret.
"""

from __future__ import annotations

import re

from rag.types import Answer

from .markup import blocks, esc, inline


def _pending_cite(n: int) -> str:
    return f'<span class="rag-cite rag-cite-pending">{n}</span>'


def _with_caret(partial: str) -> str:
    body = blocks(partial, _pending_cite)
    caret = '<span class="rag-caret"></span>'
    return re.sub(r"((?:</(?:p|li|ul|ol)>)+)$", lambda m: caret + m.group(1), body) or caret


def streaming_html(partial: str) -> str:
    """The message while the answer is being written: the text so far and a caret."""
    return (f'<div class="rag-answer rag-streaming"><div class="rag-text">{_with_caret(partial)}'
            '</div></div>')


def pending_html(label: str = "Searching the abstracts\u2026") -> str:
    return (f'<div class="rag-answer rag-streaming"><div class="rag-thinking">'
            f'<span class="rag-dots"><i></i><i></i><i></i></span>{esc(label)}</div></div>')


def draft_html(draft: Answer, partial: str, generator: str) -> str:
    """The evidence (the extractive answer and the papers it cites), then the model's answer
    so far, or a "writing" indicator before its first word."""
    refs = "".join(f'<li>{_pending_cite(c.n)} {inline(c.passage.title)}</li>'
                   for c in draft.citations)
    evidence = (f'<div class="rag-evidence"><div class="rag-label">Evidence from the abstracts'
                f'</div><div class="rag-text">{blocks(draft.text, _pending_cite)}</div>'
                f'<ol class="rag-evidence-refs">{refs}</ol></div>')
    if partial.strip():
        writing = f'<div class="rag-text">{_with_caret(partial)}</div>'
    else:
        writing = (f'<div class="rag-thinking"><span class="rag-dots"><i></i><i></i><i></i>'
                   f'</span>The {esc(generator)} model is reading the evidence\u2026</div>')
    return (f'<div class="rag-answer rag-streaming rag-drafting">{evidence}'
            f'<div class="rag-label">Answer from the {esc(generator)} model</div>{writing}</div>')
