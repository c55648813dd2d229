"""Answers that list papers, one line each, every line cited: lists, comparisons, a person's papers.

- `Listing` (a generator, no LLM): one line per retrieved paper, "- Title: its best sentence
  for the topic [n].", for the first `limit` papers (retrieval already dropped those under the
  relevance floor); `lister` adds a notice saying how many more relevant papers there are. A
  comparison of two named papers is the same with two lines.
- `person_lines`: a person's papers from the metadata, "- Title (with co-authors; link): what
  it does [n].", and the same lines with the claim alone, which is what the support check
  judges (the title, names and link are the cited paper's own record).
The line for a paper quotes the abstract verbatim, so it is faithful by construction; it does
not summarise, nor say how the listed papers relate to each other.

Example: Listing("X", limit=2).generate("papers on X", [p1, p2, p3]) ->
    "- Title 1: We study X [1].\\n- Title 2: X helps [2]." (and the notice "1 more relevant
    paper is not listed: ...")
"""

from __future__ import annotations

import re
from typing import Iterator, Sequence

from ..retrieve.authors import name_key, split_authors
from ..retrieve.route import Route
from ..text import content_terms, coverage
from ..types import Passage
from . import Generator, History
from .extractive import cite

DEFAULT_LIMIT = 5
MAX_COAUTHORS = 6
_CONTRIBUTION = re.compile(r"\b(?:we|this (?:paper|work)|here)\b.{0,40}?\b(?:propose|introduce|"
                           r"present|develop|design|show|study|investigate|establish|prove|"
                           r"provide|offer)", re.I)


def summary_sentence(passage: Passage) -> str:
    """The sentence that says what the paper does: the first one stating its contribution ("We
    propose..."), else its first sentence."""
    sents = [t.strip() for _, _, t in passage.sentence_texts() if t.strip()]
    sents = [s for s in sents if s != passage.title.strip()] or sents
    if not sents:
        return passage.text.strip()
    return next((s for s in sents[:6] if _CONTRIBUTION.search(s)), sents[0])


def weighted_coverage(topic: str, sentence: str, idf=None) -> float:
    """IDF-weighted share of the topic's terms that the sentence contains (0 if none)."""
    return coverage(topic, sentence, idf) if content_terms(topic) else 0.0


def best_sentence(topic: str, passage: Passage, idf=None) -> str:
    """The passage's sentence covering most of `topic` (its summary sentence on a tie at 0)."""
    scored = [(weighted_coverage(topic, t, idf), -j, t.strip())
              for j, (_, _, t) in enumerate(passage.sentence_texts()) if t.strip()]
    if not scored or max(scored)[0] == 0.0:
        return summary_sentence(passage)
    return max(scored)[2]


def more_notice(more: int, limit: int) -> str:
    """What the answer says when more papers are relevant than the list shows."""
    noun = "paper is" if more == 1 else "papers are"
    return (f"{more} more relevant {noun} not listed: raise list_limit (now {limit}; \u201cPapers "
            f"in a list answer\u201d in the chat's Settings, --list-limit for rag ask) to see "
            f"{'it' if more == 1 else 'them'}.")


class Listing(Generator):
    """The list generator (module doc): each paper's best sentence for `topic`, or its summary
    sentence when `topic` is None (a comparison, whose words are the papers' names)."""

    name = "extractive"

    def __init__(self, topic: str | None = "", limit: int = DEFAULT_LIMIT, idf=None):
        self.topic, self.limit, self.idf = topic, limit, idf

    def line(self, question: str, p: Passage, n: int) -> str:
        sentence = (summary_sentence(p) if self.topic is None
                    else best_sentence(self.topic or question, p, self.idf))
        return f"- {p.title}: {cite(sentence, n)}"

    def generate(self, question: str, passages: list[Passage], history: History = (),
                 idf=None) -> Iterator[str]:
        yield "\n".join(self.line(question, p, n)
                         for n, p in enumerate(passages[: self.limit], start=1))


def lister(route: Route, found: list[Passage], limit: int = DEFAULT_LIMIT, idf=None,
           notices: list | None = None) -> Listing | None:
    """The generator of a list or comparison question (None for other questions); a list with
    more relevant papers than `limit` adds a notice saying how many to `notices`."""
    if route.kind == "list":
        if notices is not None and len(found) > limit:
            notices.append(more_notice(len(found) - limit, limit))
        return Listing(route.intent.query, limit, idf)
    if route.kind == "compare":
        return Listing(None, len(found), idf)
    return None


def coauthors(authors: str, person: str) -> str:
    """The other authors of a paper. Example: ("A B, S. Levine, C D", "Sergey Levine")
    -> "A B, C D" (the person is matched by surname and initial)."""
    key = name_key(person)
    others = [a for a in split_authors(authors) if not _same(name_key(a), key)]
    if len(others) > MAX_COAUTHORS:
        return ", ".join(others[:MAX_COAUTHORS]) + f" and {len(others) - MAX_COAUTHORS} more"
    return ", ".join(others)


def _same(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return bool(a and b) and (a == b or (a[-1] == b[-1] and a[0][:1] == b[0][:1]))


def person_lines(name: str, topic: str, passages: Sequence[Passage], total: int, idf=None
                 ) -> tuple[str, str]:
    """(answer text, the same with each line's claim alone) for a person's papers."""
    on = f" on {topic}" if topic else ""
    noun = "paper" if len(passages) == 1 else "papers"
    head = f"{name} has {len(passages)} {noun}{on} in this corpus"
    if topic:
        head += f" ({total} in all)"
    text, claims = [head + ":"], [head + ":"]
    for n, p in enumerate(passages, start=1):
        line = cite(best_sentence(topic, p, idf) if topic else summary_sentence(p), n)
        others = coauthors(p.authors, name)
        meta = "; ".join(x for x in (f"with {others}" if others else "", p.url) if x)
        text.append(f"- {p.title}" + (f" ({meta})" if meta else "") + f": {line}")
        claims.append(f"- {p.title}: {line}")
    return "\n".join(text), "\n".join(claims)
