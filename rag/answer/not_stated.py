"""The "found the paper, not the fact" answer: the paper is clearly the one asked about, but its
abstract does not state what was asked, so say exactly that and cite the paper.

Example: "What learning rate did the WMDP paper use?" with *The WMDP Benchmark* found ->
"The abstract of *The WMDP Benchmark: ...* [1] does not state the learning rate."
It counts as an abstention everywhere (`Answer.abstained` is true); the paper stays in the
citations, so the reader can open it.

What is "asked" is phrased from the question by rule: the noun phrase after "what/which"
("what learning rate did..." -> "the learning rate"), a "how many/much X" clause ("how many
GPUs were used" -> "how many GPUs were used"), "who ..." -> "who ...", else "what was asked".
A question about a named paper's thing ("What is Genie's main result?") asks for "the main
result".
"""

from __future__ import annotations

import re

from ..types import NOT_STATED, Passage, Written

_AUX = (r"(?:did|does|do|is|are|was|were|has|have|had|can|could|would|will|should|in|on|for|"
        r"of|from|at|by|with|to)")
_WHAT = re.compile(rf"^(?:what|which)\s+(?:is|are|was|were)\s+the\s+(.+?)\s+(?:of|for|in|on|"
                   rf"used|that|did|does)\b|^(?:what|which)\s+(?!{_AUX}\b)((?:\S+\s+){{0,3}}?\S+)"
                   rf"\s+{_AUX}\b|^(?!.*\babout\W*$)(?:what|which)\s+(?:is|are|was|were)\s+"
                   rf"(?:the|its|their|[\w\-]+['’]s)\s+((?:\S+\s+){{0,3}}?\S+?)[?.!]*$", re.I)
_HOW = re.compile(r"^(how\s+(?:many|much|long|fast|large|big|often)\b.*?)[?.!]*$", re.I)
_WHO = re.compile(r"^(who(?:se)?\b.*?)[?.!]*$", re.I)
_LEAD = re.compile(r"^(?:(?:so|and|ok|okay|hi|hey|please|tell me|do you know|in|for)\b[\s,]*)+",
                   re.I)


def asked_phrase(question: str) -> str:
    """What the question asks for, as a phrase that fits "does not state ___"."""
    q = _LEAD.sub("", question.strip())
    q = re.sub(r"\s+", " ", q)
    m = _WHAT.match(q)
    if m:
        phrase = (m.group(1) or m.group(2) or m.group(3)).strip(" ,")
        if not re.match(r"(?:the|a|an|its|their)\b", phrase, re.I):
            phrase = f"the {phrase}"
        return phrase
    for pattern in (_HOW, _WHO):
        m = pattern.match(q)
        if m:
            return m.group(1)[0].lower() + m.group(1)[1:]
    return "what was asked"


def not_stated_text(question: str, title: str, n: int = 1) -> str:
    title = title.strip().rstrip(".") or "the paper found"
    return f"The abstract of *{title}* [{n}] does not state {asked_phrase(question)}."


def not_stated(query: str, passages: list[Passage]) -> Written:
    """The abstention that names and cites the top paper (`passages[0]`, read whole): nothing
    is quoted, since no sentence of it states what was asked (the check cites it unquoted)."""
    return Written(not_stated_text(query, passages[0].title), "extractive", passages[:1],
                   decision=NOT_STATED)
