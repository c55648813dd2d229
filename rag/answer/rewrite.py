"""Follow-up questions: detected by rule, rewritten into a standalone query for retrieval.

"What data did they use?" after "Which paper studies X?" is retrieved as "Which paper studies
X? What data did they use?", or as the LLM's own rewrite when an LLM generator is configured.

A question is a follow-up only when it leans on the conversation (`leans_on_conversation`):
a pronoun standing for something said before ("they", "it", "their"), a demonstrative without
its noun or with a generic one ("this", "these methods", "that paper"), a definite reference
("the paper", "the authors", "the second one"), or an ellipsis ("and the second one?", "what
about images?", "why?"). A relative "that" ("methods that reduce memory"), a short but complete
question ("Which papers use LoRA?") or an expletive "it" ("is it possible to ...") stand alone.
It does not resolve what a pronoun refers to: the whole previous question is borrowed.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from ..errors import GeneratorError
from ..text import clean_question, content_terms
from . import Generator, History

_GENERIC = (r"(?:papers?|works?|methods?|approach(?:es)?|models?|ones?|results?|datasets?|"
            r"techniques?|ideas?|algorithms?|frameworks?|stud(?:y|ies)|authors?|findings?|"
            r"benchmarks?|systems?|tasks?|experiments?|claims?)")
_LEANS = [re.compile(p, re.I) for p in (
    # personal and possessive pronouns (an expletive "it is possible/hard/..." excepted)
    r"\b(?:they|them|their|theirs|he|she|his|him|its)\b",
    r"(?<!\bis )\bit\b(?!\s+(?:is|was|be)\s+(?:possible|hard|easy|true|feasible|known|"
    r"necessary|difficult|common|useful)\b)",
    # demonstratives with no noun, or with a generic one
    rf"\b(?:this|these|those|such)\s+{_GENERIC}\b",
    r"\bthat\s+(?:paper|method|approach|model|one|dataset|technique|idea|algorithm|framework|"
    r"benchmark|system)\b",
    r"\b(?:this|these|those)\s*(?:[?.!,]|$)",
    r"\b(?:does|do|did|is|was|would|can|could|will)\s+that\b",
    r"\b(?:this|these|those)\s+(?:is|are|was|were|do|does|did|can|could|would|have|has|mean|"
    r"means|work|works|use|uses|compare|differ|scale|handle)\b",
    r"(?:^|\b(?:about|of|for|with|does|do|did|is|was|explain|like)\s+)that\s*[?.!]*$",
    r"^that\b",
    # definite references to something said before
    rf"\bthe\s+(?:(?:first|second|third|fourth|fifth|last|other|former|latter|same|above|"
    rf"previous|mentioned)\s+)?(?:paper|papers|authors|method|approach|work|study|one|ones)\b"
    rf"(?!\s+(?:of|on|about|by|that|which|called|named|titled)\b)",
    r"\b(?:former|latter|aforementioned|previous(?:ly)?|mentioned|above)\b",
    # ellipsis
    r"^(?:and|but|also|so|or|then)\b",
    r"^(?:what|how)\s+about\b",
    r"^(?:why|how|how so|really|what else|which one|examples?|details?|more|any others?)\s*"
    r"[?.!]*$",
    r"\b(?:tell me more|more details|elaborate|say more|explain further|go on)\b")]


def leans_on_conversation(question: str) -> bool:
    """Does the question need the conversation to be understood (module doc)?

    Example: "What data did they use?" -> True; "Which papers propose methods that reduce
    memory?" -> False."""
    text = clean_question(question)
    if not content_terms(text) and re.search(r"[^\W\d_]", text):
        return True  # only function words: "why?", "and then?", "which one?"
    return any(p.search(text) for p in _LEANS)


def is_follow_up(question: str, history: History) -> bool:
    """Does `question` lean on the conversation ('what data did they use?', 'and the second?')."""
    return bool(history) and leans_on_conversation(question)


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
        query = llm().rewrite(question, history)
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
