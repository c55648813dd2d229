"""Chat messages for the LLM generators, fitted to the model's context window.

`build_messages(question, passages, history, context_tokens, answer_tokens, idf)` lays out
SYSTEM (constant, first: llama.cpp's prompt cache keeps it evaluated between questions), the
last few conversation turns, then one user message holding the numbered passages (delimited as
data, see `prompts.PASSAGE`) and the question, so that the prompt plus `answer_tokens` fit
`context_tokens`.

Evidence first: a passage is given as its title and its best sentences for the question
(`reader.pick` on the sentence scores of the setting `reader`, the reader model's when it is
"model": up to 3 for the first paper, the best one for the others), each with the sentence before it when it leans on it ("This...",
"It...", "These..."), in the abstract's order with " ... " where sentences were skipped; a
paper none of whose sentences holds a word of the question is given by its first sentence. A
passage without sentence spans is given whole. Example: five ICML abstracts of ~250 tokens
each (~1,300 prompt tokens) become ~5 x 70 evidence tokens. The citation check and the support
check still read whole abstracts (`engine.py`), so `[n]` keeps meaning `passages[n - 1]`.

When the prompt does not fit:

1. a question longer than a third of the room is truncated, with a notice (never silently);
2. the lowest-ranked passages are dropped, so `[n]` still means `passages[n - 1]`; the first
   passage is shortened rather than dropped;
3. older conversation turns are dropped (they only help to read the question).

Counts use tiktoken's cl100k_base (rag/ingest/tokens.py); the served model's own tokenizer may count
more, so the budget keeps a safety margin (`SAFETY`) and a per-message overhead for the chat
template. Example: 2,048 context tokens and 350 answer tokens leave room for 3-4 abstracts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from ..errors import GeneratorError
from ..ingest import tokens
from ..text import Idf
from ..types import Passage
from .prompts import (CANNOT_ANSWER, NOTICE_QUESTION_TOKENS, PASSAGE, REWRITE_SYSTEM, REWRITE_USER,
                      SYSTEM, USER)

SAFETY = 1.2  # other tokenizers (Qwen, SmolLM2, Llama) count up to ~20% more than cl100k_base
PER_MESSAGE = 8  # chat-template tokens around each message
QUESTION_SHARE = 3  # the question may use at most 1/QUESTION_SHARE of the room
HISTORY_TURNS = 3
HISTORY_ANSWER_TOKENS = 120
MIN_PASSAGE_TOKENS = 40
OTHER_SENTENCES = 1  # evidence sentences of the papers below the first (which gets up to 3)
_TAG = re.compile(r"<(\s*/?\s*)(abstract)", re.I)
_MARKERS = re.compile(r"\s*\[\d+(?:\s*[,;]\s*\d+)*\]")
# A sentence that opens with one of these reads only with the sentence before it.
_LEANS = re.compile(r"^(?:this|these|that|those|it|its|they|their|them|such|here|both|"
                    r"the latter|the former|moreover|furthermore|however|thus|hence|"
                    r"therefore|consequently|in addition|additionally|as a result)\b", re.I)


@dataclass
class Prompt:
    """What an LLM generator sent; it yields this first so the engine knows which passages
    the model saw (citations of others are removed) and which notices to show."""

    messages: list[dict]
    passages: int  # the prompt holds passages[:passages], numbered 1..passages
    tokens: int  # cl100k_base estimate of the whole prompt, template overhead included
    notices: list[str] = field(default_factory=list)


def neutralise(text: str) -> str:
    """`text` with anything that could open or close a passage delimiter defused."""
    return _TAG.sub(lambda m: "\u2039" + m.group(1) + m.group(2), text) if "<" in text else text


def format_passage(n: int, passage: Passage, text: str | None = None) -> str:
    """One passage as numbered data: '<abstract n="1" title="...">text</abstract>'."""
    return PASSAGE.format(n=n, title=neutralise(passage.title).replace('"', "'"),
                          text=neutralise(passage.text if text is None else text))


def evidence(question: str, passage: Passage, idf: Idf | None = None,
             most: int = 3) -> str:
    """The sentences of `passage` the model needs for `question`, at most `most` of them
    (plus the sentences they lean on; see module doc)."""
    from ..retrieve.signals import question_terms
    from ..text import content_terms, share
    from .reader import pick  # the extractive reader's sentence choice

    sentences = [t.strip() for _, _, t in passage.sentence_texts()]
    if not sentences:
        return passage.text
    scores = list(passage.sentence_scores) or None  # the reader's, when it scored them
    picked = pick(question, passage, idf, scores) or [0]
    if len(picked) > most:
        asked = question_terms(question, idf)
        picked = sorted(picked, key=lambda i: -(scores[i] if scores else share(
            asked, content_terms(sentences[i]))))[:most]
    chosen = set(picked)
    chosen |= {i - 1 for i in chosen if i > 0 and _LEANS.match(sentences[i])}
    out, last = [], None
    for i in sorted(chosen):
        if last is not None and i != last + 1:
            out.append("...")
        out.append(sentences[i])
        last = i
    return " ".join(out)


def _cost(text: str) -> int:
    return tokens.count(text)


def build_messages(question: str, passages: Sequence[Passage], history: Sequence = (),
                   context_tokens: int = 8192, answer_tokens: int = 350, system: str = SYSTEM,
                   user: str = USER, idf: Idf | None = None, whole: bool = False) -> Prompt:
    """The messages asking the model to answer `question` from `passages` (see module doc);
    `whole` gives whole abstracts instead of evidence (for comparison in bench/)."""
    room = int((context_tokens - answer_tokens) / SAFETY) - 2 * PER_MESSAGE
    room -= _cost(system) + _cost(user.format(passages="", question=""))
    if room < MIN_PASSAGE_TOKENS * 2:
        raise GeneratorError(f"llm_context_tokens={context_tokens} leaves no room for abstracts "
                             f"after answer_tokens={answer_tokens}; raise RAG_LLM_CONTEXT_TOKENS "
                             f"or lower RAG_ANSWER_TOKENS")
    notices = []
    question = neutralise(question)
    limit = room // QUESTION_SHARE
    if _cost(question) > limit:
        question = tokens.truncate(question, limit).rstrip() + " ..."
        notices.append(NOTICE_QUESTION_TOKENS.format(limit=limit))
    room -= _cost(question) * user.count("{question}")

    blocks: list[str] = []
    for n, p in enumerate(passages, start=1):
        text = p.text if whole else evidence(question, p, idf, 3 if n == 1 else OTHER_SENTENCES)
        block = format_passage(n, p, text)
        cost = _cost(block) + 1
        if cost > room:
            if blocks:
                break
            # Shorten the best passage rather than answer from nothing.
            overhead = _cost(format_passage(n, p, "")) + 4
            block = format_passage(n, p, tokens.truncate(text, room - overhead) + " ...")
            cost = _cost(block) + 1
        blocks.append(block)
        room -= cost

    turns: list[dict] = []
    for q, a in list(history)[::-1][:HISTORY_TURNS]:
        a = tokens.truncate(_MARKERS.sub("", str(a)), HISTORY_ANSWER_TOKENS)
        pair = [{"role": "user", "content": neutralise(str(q))},
                {"role": "assistant", "content": neutralise(a)}]
        cost = _cost(pair[0]["content"]) + _cost(pair[1]["content"]) + 2 * PER_MESSAGE
        if cost > room:
            break
        turns = pair + turns
        room -= cost

    content = user.format(passages="\n\n".join(blocks), question=question)
    messages = [{"role": "system", "content": system}, *turns,
                {"role": "user", "content": content}]
    used = sum(_cost(m["content"]) + PER_MESSAGE for m in messages)
    return Prompt(messages=messages, passages=len(blocks), tokens=used, notices=notices)


def rewrite_messages(question: str, history: Sequence) -> list[dict]:
    """Messages asking for `question` rewritten as a standalone query (last 3 turns shown)."""
    lines = []
    for q, a in list(history)[-HISTORY_TURNS:]:
        lines.append(f"User: {neutralise(str(q))}")
        if a:
            lines.append(f"Assistant: {tokens.truncate(_MARKERS.sub('', str(a)), 80)}")
    user = REWRITE_USER.format(conversation="\n".join(lines), question=neutralise(question))
    return [{"role": "system", "content": REWRITE_SYSTEM}, {"role": "user", "content": user}]


def clean_rewrite(reply: str, question: str) -> str | None:
    """The query in an LLM's rewrite reply, or None when the reply is not a usable query."""
    line = next((ln for ln in reply.strip().splitlines() if ln.strip()), "")
    line = re.sub(r"^(standalone )?(search )?query\s*:\s*", "", line.strip(), flags=re.I)
    line = line.strip().strip("\"'`").strip()
    if not line or len(line) > max(300, 3 * len(question)) \
            or CANNOT_ANSWER.lower().rstrip(".") in line.lower():
        return None
    return line
