"""Properties that must hold for any input (hypothesis): the chunker and the citation check.

Chunker: chunks cover the text in order, never exceed the token limit, and every span maps
back exactly to the paper's text. Citation check: whatever a generator writes, the answer's
markers are valid (each names a citation), compact (1..m in order of first use, one number per
paper) and each citation's quote is the passage's own sentences at their spans.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rag.ingest import tokens
from rag.ingest.chunking import chunk_paper, split_sentences
from rag.check.citations import MARKER, check_citations
from rag.types import Paper, Passage

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

WORDS = st.sampled_from([
    "we", "propose", "a", "method", "e.g.", "i.e.", "et", "al.", "Fig.", "J.", "Smith",
    "0.95", "3.2x", "$x.y$", "$$a. b$$", "(see", "Sec.", "3).", "results", "on", "CIFAR-10",
    "\u00e9t\u00e9", "\u4e2d\u6587", "\U0001F600", "<|endoftext|>", "state-of-the-art", "[1]",
    "Why?", "Yes!", "...", '"quoted."', "x" * 40, "Mr.", "vs.", "etc.", "U.S.", "1.", "2."])
SEPARATORS = st.sampled_from([" ", " ", " ", "  ", "\n", "\n\n", "\t", ". ", "? ", "! ", ".\n"])


@st.composite
def texts(draw) -> str:
    """Abstract-like text: words, abbreviations, math, odd Unicode and whitespace mixed."""
    parts = draw(st.lists(st.tuples(WORDS, SEPARATORS), min_size=1, max_size=120))
    text = "".join(w + s for w, s in parts)
    if draw(st.booleans()):
        text = draw(st.text(min_size=0, max_size=30)) + text  # anything at all in front
    return text


@SETTINGS
@given(text=texts(), max_tokens=st.integers(8, 120), overlap_share=st.floats(0, 0.9))
@example(text="word " * 400 + "end.", max_tokens=16, overlap_share=0.5)
@example(text="\u00e9" * 300, max_tokens=8, overlap_share=0.0)
def test_chunks_cover_the_text_in_order_within_the_limit_and_map_back_exactly(
        text, max_tokens, overlap_share):
    overlap = min(int(max_tokens * overlap_share), max_tokens - 1)
    paper = Paper(id="p", title="t", text=text)
    chunks = chunk_paper(paper, max_tokens=max_tokens, overlap=overlap)
    if not text.strip():
        assert chunks == []
        return
    covered = [False] * len(text)
    for i, c in enumerate(chunks):
        assert c.index == i and c.id == f"p#{i}"
        assert text[c.start : c.end] == c.text  # spans map back exactly
        assert tokens.count(c.text) <= max_tokens
        assert c.sentences and c.sentences[0][0] == c.start and c.sentences[-1][1] == c.end
        for (s, e), nxt in zip(c.sentences, c.sentences[1:] + ((c.end, c.end),)):
            assert c.start <= s < e <= nxt[0] <= c.end  # sentences in order, inside the chunk
            assert text[s:e] == text[s:e].strip()
        for k in range(c.start, c.end):
            covered[k] = True
    for a, b in zip(chunks, chunks[1:]):
        assert a.start < b.start and a.end < b.end  # in order, always moving forward
    # Every character that is not whitespace is in some chunk.
    assert all(covered[k] for k, ch in enumerate(text) if not ch.isspace())


@SETTINGS
@given(text=texts())
def test_sentences_are_ordered_stripped_disjoint_and_cover_the_text(text):
    spans = split_sentences(text)
    last = 0
    for s, e in spans:
        assert last <= s < e <= len(text)
        assert text[s:e] == text[s:e].strip()
        last = e
    inside = {k for s, e in spans for k in range(s, e)}
    assert all(k in inside for k, ch in enumerate(text) if not ch.isspace())


@st.composite
def passages(draw) -> list[Passage]:
    """1-6 retrieved passages, some of them from the same paper."""
    out = []
    for i in range(draw(st.integers(1, 6))):
        text = draw(texts())
        if not text.strip():
            text = f"Paper {i} reports a result."
        start = draw(st.integers(0, 500))
        sents = tuple((start + s, start + e) for s, e in split_sentences(text))
        out.append(Passage(chunk_id=f"c{i}", paper_id=draw(st.sampled_from("ABCD")),
                           title=f"T{i}", text=text, score=1.0, start=start,
                           end=start + len(text), sentences=sents))
    return out


MARKERS = st.one_of(
    st.integers(-2, 12).map(lambda n: f"[{n}]"),
    st.lists(st.integers(0, 9), min_size=1, max_size=4).map(
        lambda ns: "[" + st_join(ns) + "]"),
    st.sampled_from(["[", "]", "[]", "[ 2 ]", "[1][1]", "[2] [2]", "[1,2]", "[x]", "[10000]",
                     "[1; 3]", "[[1]]", "(1)", "[1]."]),
)


def st_join(ns: list[int]) -> str:
    return ", ".join(map(str, ns))


@st.composite
def generator_outputs(draw) -> str:
    """Anything a generator might write: prose, list lines, markers valid and not."""
    pieces = draw(st.lists(st.one_of(WORDS, SEPARATORS, MARKERS, st.just("\n- "),
                                     st.text(max_size=8)), max_size=60))
    return "".join(p if p in ("\n- ",) else p + " " for p in pieces)


@SETTINGS
@given(text=generator_outputs(), given_passages=passages())
@example(text="A [3]. B [1][3]. C [9].", given_passages=[
    Passage("c0", "A", "T0", "One. Two.", 1.0, 0, 9, ((0, 4), (5, 9))),
    Passage("c1", "B", "T1", "Three.", 1.0, 0, 6, ((0, 6),)),
    Passage("c2", "C", "T2", "Four.", 1.0, 0, 5, ((0, 5),))])
@example(text="we [10000] and [1" + "0" * 5000 + "] too [1].", given_passages=[
    Passage("c0", "A", "T0", "We too.", 1.0, 0, 7, ((0, 7),))])
def test_any_generator_output_yields_valid_compact_citations(text, given_passages):
    checked = check_citations(text, given_passages)
    numbers = [c.n for c in checked.citations]
    assert numbers == list(range(1, len(numbers) + 1))  # compact: 1..m
    papers = [c.passage.paper_id for c in checked.citations]
    assert len(papers) == len(set(papers))  # one number per paper
    assert all(any(c.passage is p for p in given_passages) for c in checked.citations)
    # Every marker left in the text names a citation, and numbers appear in order of first use.
    used = [int(n) for m in MARKER.finditer(checked.text)
            for n in re.split(r"\s*[,;]\s*", m.group(1))]
    assert set(used) == set(numbers)
    first_use = list(dict.fromkeys(used))
    assert first_use == sorted(first_use)
    for marker in re.findall(r"\[[^\[\]]*\]", checked.text):
        if re.fullmatch(r"\[\s*\d+(\s*[,;]\s*\d+)*\s*\]", marker):
            assert re.fullmatch(r"\[\d+\]", marker), marker  # normalised: one number each
    for s in checked.sentences:
        assert set(s.citations) <= set(numbers)
    # Each quote is the passage's own sentence(s), at the spans it reports.
    for c in checked.citations:
        p = c.passage
        assert c.spans
        pieces = [p.text[s - p.start : e - p.start] for s, e in c.spans]
        assert all(p.start <= s < e <= p.end for s, e in c.spans)
        assert c.quote == " ".join(pieces)
