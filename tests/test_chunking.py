"""Sentence splitting and token-bounded chunking keep exact character spans."""

from __future__ import annotations

from rag.ingest import tokens
from rag.ingest.chunking import chunk_paper, split_sentences
from rag.ingest.corpus import load_corpus
from rag.types import Paper


def test_sentences_split_at_terminal_punctuation_but_not_abbreviations_or_math():
    text = ("We use e.g. kernels, cf. Smith et al. 2020. The map $x \\in \\mathbb{R}^d. y$ holds. "
            "Accuracy is 0.95 on J. Doe's data! Why? Because.")
    spans = split_sentences(text)
    assert [text[s:e] for s, e in spans] == [
        "We use e.g. kernels, cf. Smith et al. 2020.",
        "The map $x \\in \\mathbb{R}^d. y$ holds.",
        "Accuracy is 0.95 on J. Doe's data!", "Why?", "Because."]


def test_every_chunk_maps_back_to_its_paper_text_and_respects_the_token_limit():
    for paper in load_corpus("seeds").papers[:30]:
        for chunk in chunk_paper(paper, max_tokens=64, overlap=16):
            assert paper.text[chunk.start : chunk.end] == chunk.text
            assert tokens.count(chunk.text) <= 64
            for s, e in chunk.sentences:
                assert chunk.start <= s < e <= chunk.end


def test_chunks_cover_every_sentence_in_order_with_sentence_aligned_overlap():
    paper = load_corpus("seeds").papers[0]
    chunks = chunk_paper(paper, max_tokens=80, overlap=30)
    assert len(chunks) > 1
    covered = [s for c in chunks for s in c.sentences]
    assert sorted(set(covered)) == sorted(set(covered), key=lambda s: s[0])
    assert set(covered) == {s for c in chunk_paper(paper, 10_000, 0) for s in c.sentences}
    # Where a trailing sentence fits in the overlap budget, the next chunk repeats it.
    assert any(b.sentences[0] in a.sentences for a, b in zip(chunks, chunks[1:]))
    for a, b in zip(chunks, chunks[1:]):
        if b.sentences[0] in a.sentences:
            assert tokens.count(paper.text[b.sentences[0][0] : a.end]) <= 30


def test_a_sentence_longer_than_a_chunk_is_cut_at_token_boundaries():
    paper = Paper(id="p", title="t", text="word " * 500 + "end.")
    chunks = chunk_paper(paper, max_tokens=50, overlap=0)
    assert len(chunks) >= 10
    assert all(tokens.count(c.text) <= 50 for c in chunks)
    assert chunks[-1].text.endswith("end.")


def test_special_token_strings_in_text_are_counted_as_plain_text():
    assert tokens.count("<|endoftext|> hello") > 1
