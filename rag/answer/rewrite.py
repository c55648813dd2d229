"""Follow-up questions: detected by rule, rewritten into a standalone query for retrieval.

"What data did they use?" after "Which paper studies X?" is retrieved as "Which paper studies
X? What data did they use?", or as the LLM's own rewrite when an LLM generator is configured.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from ..errors import GeneratorError
from ..text import clean_question, content_terms
from . import Generator, History

_FOLLOW_UP = re.compile(r"\b(they|them|their|it|its|this|that|these|those|the paper|the method|"
                        r"the authors|the model|same|above|previous|mentioned)\b", re.I)


def is_follow_up(question: str, history: History) -> bool:
    """Does `question` lean on the conversation ('what data did they use?', 'and the second?')."""
    return bool(history) and (bool(_FOLLOW_UP.search(question))
                              or len(content_terms(question)) <= 2)


def rewrite_query(question: str, history: History) -> str:
    """A standalone query for a follow-up, by rule: borrow the previous question's terms when
    this one refers back to it ('what data did they use?') or is too short to stand alone."""
    if not is_follow_up(question, history):
        return question
    previous = clean_question(str(history[-1][0]))
    return f"{previous} {question}"


def standalone_query(question: str, history: History,
                     llm: Callable[[], Generator] | None = None) -> str:
    """The query retrieval runs on: a follow-up rewritten by the LLM generator `llm()` gives
    (None: no LLM configured), else by rule.

    The LLM is asked only when the rule sees a follow-up, so standalone questions cost no extra
    call; when it fails or answers with something that is not a query, the rule decides (a
    broken backend is reported once, by the generation step's fallback notice)."""
    if not is_follow_up(question, history) or llm is None:
        return rewrite_query(question, history)
    try:
        rewrite = getattr(llm(), "rewrite", None)
        query = rewrite(question, history) if rewrite else None
    except GeneratorError:
        query = None
    return clean_question(query) if query else rewrite_query(question, history)


def normalise_history(history: Sequence | None) -> list[tuple[str, str]]:
    """(question, answer) pairs from pairs or from chat messages ({"role", "content"})."""
    out = []
    for turn in history or ():
        if isinstance(turn, dict):  # {"role": ..., "content": ...} messages
            if turn.get("role") == "user":
                out.append((str(turn.get("content", "")), ""))
            elif out and turn.get("role") == "assistant":
                out[-1] = (out[-1][0], str(turn.get("content", "")))
        else:
            q, a = turn
            out.append((str(q), str(a)))
    return out
