"""Twins: an answerable question asked of a copy of its abstract that lost the answer.

A twin of a bank question with key facts and exactly one gold paper is the same question, word
for word, against that paper's abstract with every sentence (`split_sentences`) that contains a
key fact removed. It is kept only when no key fact is left anywhere in the edited abstract or in
the title, and at least one sentence was removed and one is left. The right answer to a twin is
to abstain or to say the paper does not state it. Twins measure reading, not wording: the
question sounds exactly like an answerable one, so a gate that learned which questions *sound*
unanswerable cannot catch them (eval/baseline.py measures that).

Matching is lenient in what counts as "contains", so a twin errs towards losing one sentence
too many rather than keeping the answer: lower case, any run of whitespace as one space, dashes
and minus signs as "-", "×" as "x", TeX's `$ \\ { }` dropped, number words up to twenty and the
tens as digits ("eight" == "8"), and a fact that starts or ends with a digit matches only at a
number's edge ("8" is not in "2018" or "0.8").

Example (key facts ["8 different"]):
    title   "Spider: A Unified Segmentation Model"
    abstract "We present Spider. It handles eight different tasks. It is fast."
    -> edited "We present Spider. It is fast.", removed ["It handles eight different tasks."]
With key facts ["Spider"] there is no twin: the fact is in the title (and in what is left).

Kept sentences are byte-for-byte those of the original, each with the whitespace that stood
before it (the first kept one with none). Not handled: an answer stated only by paraphrase
(the key facts are the only evidence looked for), and a fact split across two sentences (it is
then found in the whole abstract and the twin is dropped).

`make_twin` is pure; `twin_rows(split)` gives every twin of a bank split as plain dicts (the
reader model's training script reads them), `corpus_lines` a corpus with the twins' abstracts
replaced, for `rag eval` to index (eval/twin_eval.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

from rag.ingest.chunking import split_sentences

NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}
NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60",
                     "seventy": "70", "eighty": "80", "ninety": "90", "hundred": "100"})
_NUMBER_WORD = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2212]")


@dataclass(frozen=True)
class Twin:
    """A gold abstract without the sentences that state the answer."""

    abstract: str  # the edited abstract
    removed: tuple[str, ...]  # the removed sentences, in order
    kept: tuple[str, ...]  # the sentences left, in order


def normalise(text: str) -> str:
    """The form key facts are compared in. Example: "Eight  Different" -> "8 different"."""
    text = _DASHES.sub("-", text.lower()).replace("\u00d7", "x")
    text = re.sub(r"[$\\{}]", "", text)
    text = re.sub(r"\s+", " ", text).strip()
    return _NUMBER_WORD.sub(lambda m: NUMBER_WORDS[m.group(1)], text)


def _pattern(fact: str) -> re.Pattern[str]:
    body = re.escape(normalise(fact))
    head = r"(?<![\d.])" if body[:1].isdigit() else ""
    tail = r"(?!\.?\d)" if body[-1:].isdigit() else ""
    return re.compile(head + body + tail)


def contains_fact(text: str, facts: Iterable[str]) -> bool:
    """Whether `text` contains any of `facts` (compared as `normalise` says)."""
    norm = normalise(text)
    return any(_pattern(f).search(norm) for f in facts if normalise(f))


def make_twin(title: str, abstract: str, key_facts: Sequence[str]) -> Twin | None:
    """The twin abstract of one question, or None when no honest twin exists (a key fact in
    the title or left in the abstract, nothing removed, or nothing left)."""
    facts = [f for f in key_facts if normalise(f)]
    if not facts or contains_fact(title, facts):
        return None
    spans = split_sentences(abstract)
    parts, removed, kept, prev_end = [], [], [], 0
    for start, end in spans:
        sentence = abstract[start:end]
        if contains_fact(sentence, facts):
            removed.append(sentence)
        else:
            parts.append((abstract[prev_end:start] if kept else "") + sentence)
            kept.append(sentence)
        prev_end = end
    edited = "".join(parts)
    if not removed or not kept or contains_fact(edited, facts):
        return None
    return Twin(edited, tuple(removed), tuple(kept))


# -- the bank's twins -----------------------------------------------------------------------


def twin_id(question_id: str) -> str:
    return f"{question_id}~twin"


def twins_of(questions: Iterable, papers: dict) -> Iterator[tuple[object, object, Twin]]:
    """(question, paper, twin) for every question that has a twin; `papers` maps id -> Paper."""
    for q in questions:
        if not (q.answerable and q.key_facts and len(q.gold) == 1 and q.gold[0] in papers):
            continue
        paper = papers[q.gold[0]]
        twin = make_twin(paper.title, paper.text, q.key_facts)
        if twin is not None:
            yield q, paper, twin


def _bank(split: str):
    from rag.ingest.corpus import load_corpus

    from .datasets import load_dataset

    dataset = load_dataset(f"icml2024-{split}")
    papers = {p.id: p for p in load_corpus(dataset.corpus).papers}
    return dataset, papers


def twin_rows(split: str) -> list[dict]:
    """Every twin of a bank split ("train", "dev" or "test"), as plain dicts:

    id ("<question id>~twin"), question_id, question, type, key_facts, paper_id, title,
    abstract (the edited one), original (the shipped abstract), removed (the sentences that
    stated the answer), kept (the sentences left). In bank order."""
    dataset, papers = _bank(split)
    return [{"id": twin_id(q.id), "question_id": q.id, "question": q.question, "type": q.type,
             "key_facts": list(q.key_facts), "paper_id": p.id, "title": p.title,
             "abstract": t.abstract, "original": p.text, "removed": list(t.removed),
             "kept": list(t.kept)} for q, p, t in twins_of(dataset.questions, papers)]


def corpus_lines(papers: Iterable, edited: dict[str, str]) -> Iterator[str]:
    """A corpus as JSONL lines (id, title, authors, url, abstract and the paper's extra
    fields), each paper's abstract replaced by `edited[paper.id]` where there is one: a twin
    corpus (one copy holds all the twins of a question set, one per paper)."""
    for p in papers:
        yield json.dumps({**p.meta, "id": p.id, "title": p.title, "authors": p.authors,
                          "url": p.url, "abstract": edited.get(p.id, p.text)},
                         ensure_ascii=False)
