"""Answers to person questions, written from the author index and checked like any answer.

The papers a name stands for become a cited list (`answer/listing.py` `person_lines`); the
citation check numbers and quotes them as usual, and the support check judges each line's
claim, the sentence quoted from the abstract: the title, co-authors and link beside it are the
cited paper's own record, not claims an abstract could back. A name that stands for several
authors lists them; a name that is in no author list gets "No paper by X in this corpus." and
no papers at all (abstained).

Example: metadata_answer("papers by S. Levine", search, idf) -> Answer(text="Sergey Levine has
10 papers in this corpus:\\n- Title (with ...; https://...): We propose ... [1].\\n...")
"""

from __future__ import annotations

from ..answer.listing import person_lines
from ..retrieve.search import Search
from ..text import Idf
from ..types import Answer
from .citations import check_citations
from .support import check_support

GENERATOR = "metadata"
MAX_CANDIDATES = 8


def no_paper_by(name: str) -> str:
    return f"No paper by {name} in this corpus."


def metadata_answer(question: str, found: Search, idf: Idf | None = None,
                    notices: list[str] | None = None) -> Answer:
    """The answer to a person question (module doc); `found.author` must be set."""
    match, intent = found.author, found.intent
    assert match is not None

    def plain(text: str) -> Answer:
        return Answer(question=question, text=text, citations=[], passages=[], abstained=True,
                      generator=GENERATOR, timings_ms={}, query=found.query,
                      notices=list(notices or []))

    if match.status == "missing":
        return plain(no_paper_by(intent.person))
    if match.status == "ambiguous":
        names = [f"{name} ({n} paper{'s' if n > 1 else ''})"
                 for name, n in zip(match.names[:MAX_CANDIDATES], match.counts)]
        extra = len(match.names) - len(names)
        listed = "; ".join(names) + (f"; and {extra} more" if extra > 0 else "")
        return plain(f"{len(match.names)} authors match \u201c{intent.person}\u201d: {listed}. "
                     "Ask again with one of these names.")
    name = match.names[0]
    if not found.passages:
        return plain(f"No paper by {name} on {intent.topic} in this corpus "
                     f"({len(match.papers)} on other topics).")
    text, claims = person_lines(name, intent.topic, found.passages, len(match.papers), idf)
    checked = check_citations(text, found.passages)
    judged = check_citations(claims, found.passages)
    check_support(judged, None, idf)
    for sent, claim in zip(checked.sentences, judged.sentences):
        sent.supported, sent.support = claim.supported, claim.support
    return Answer(question=question, text=checked.text, citations=checked.citations,
                  passages=found.passages, abstained=False, generator=GENERATOR, timings_ms={},
                  sentences=checked.sentences, query=found.query, notices=list(notices or []),
                  relevance=max((p.scores.get("dense", 0.0) for p in found.passages),
                                default=0.0))
