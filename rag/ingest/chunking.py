"""Sentence splitting and token-bounded, sentence-aligned chunking with exact character spans.

`split_sentences(text)` returns (start, end) spans; `chunk_paper(paper, max_tokens, overlap)`
packs whole sentences into chunks of at most `max_tokens` tokens, repeating up to `overlap`
tokens of trailing sentences at the start of the next chunk. A sentence longer than a chunk is
cut at token boundaries. Every span is paper-relative: `paper.text[c.start:c.end] == c.text`.

Example: "We study X. We find Y." -> sentences [(0, 11), (12, 22)]; with a large budget, one
chunk covering (0, 22).

Not handled: sentence boundaries inside tables or code; such text is cut by tokens instead.
"""

from __future__ import annotations

import re

from ..lexicon import ABBREVIATIONS
from . import tokens
from ..types import Chunk, Paper

# A candidate boundary: terminal punctuation, optional closing quote/bracket, then whitespace.
_BOUNDARY = re.compile(r"[.!?]+[\"')\]]*(?=\s+)")
_NEXT_START = re.compile(r"\s+[\"'(\[]?[A-Z0-9$\\]")


def _math_mask(text: str) -> list[tuple[int, int]]:
    """Spans of $...$ math, inside which no sentence ends."""
    return [(m.start(), m.end()) for m in re.finditer(r"\$\$.+?\$\$|\$[^$]+\$", text, re.S)]


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans of `text`, stripped of surrounding whitespace, in order."""
    math = _math_mask(text)
    cuts: list[int] = []
    mi = 0
    for m in _BOUNDARY.finditer(text):
        end = m.end()
        while mi < len(math) and math[mi][1] <= m.start():
            mi += 1
        if mi < len(math) and math[mi][0] <= m.start() < math[mi][1]:
            continue
        if not _NEXT_START.match(text, end):
            continue
        word = re.search(r"([A-Za-z][A-Za-z.]*)\.$", text[max(0, m.start() - 12) : m.start() + 1])
        if word and word.group(1).lower().rstrip(".") in ABBREVIATIONS:
            continue
        if re.search(r"(^|\s)[A-Z]\.$", text[max(0, m.start() - 2) : m.start() + 1]):
            continue  # an initial: "J. Smith"
        cuts.append(end)
    spans, start = [], 0
    for cut in cuts + [len(text)]:
        span = _strip(text, start, cut)
        if span:
            spans.append(span)
        start = cut
    return spans


def _strip(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


def _cut_long(text: str, start: int, end: int, max_tokens: int) -> list[tuple[int, int]]:
    """Cut text[start:end] into pieces of at most `max_tokens` tokens, at token boundaries."""
    enc = tokens.encoding()
    toks = enc.encode(text[start:end], disallowed_special=())
    _, offsets = enc.decode_with_offsets(toks)
    pieces, i = [], 0
    while i < len(toks):
        j = min(i + max_tokens, len(toks))
        while True:
            s = start + offsets[i]
            e = start + offsets[j] if j < len(toks) else end
            if e <= s:  # several tokens inside one character: widen
                j += 1
                continue
            if tokens.count(text[s:e]) <= max_tokens or j - i <= 1:
                break
            j -= 1
        span = _strip(text, s, e)
        if span:
            pieces.append(span)
        i = j
    return pieces


def chunk_paper(paper: Paper, max_tokens: int = 200, overlap: int = 40) -> list[Chunk]:
    """Sentence-aligned chunks of `paper.text`, each at most `max_tokens` tokens."""
    text = paper.text
    sents: list[tuple[int, int]] = []
    for s, e in split_sentences(text):
        if tokens.count(text[s:e]) > max_tokens:
            sents.extend(_cut_long(text, s, e, max_tokens))
        else:
            sents.append((s, e))
    chunks: list[Chunk] = []
    i = 0
    while i < len(sents):
        j = i + 1
        while j < len(sents) and tokens.count(text[sents[i][0] : sents[j][1]]) <= max_tokens:
            j += 1
        group = tuple(sents[i:j])
        chunks.append(Chunk(paper.id, len(chunks), text[group[0][0] : group[-1][1]],
                            group[0][0], group[-1][1], group))
        if j >= len(sents):
            break
        # Start the next chunk with trailing sentences worth at most `overlap` tokens.
        k = j
        while (k - 1 > i and tokens.count(text[sents[k - 1][0] : sents[j - 1][1]]) <= overlap
               and tokens.count(text[sents[k - 1][0] : sents[j][1]]) <= max_tokens):
            k -= 1
        i = k
    return chunks
