"""Answers to person questions, written from the author index (`route.py` settled who the name
stands for; `search.py` fetched their papers).

The papers a name stands for become a cited list (`listing.person_lines`); the engine's check
stage numbers and quotes them as usual, and its checks judge each line's claim, the sentence
quoted from the abstract: the title, co-authors and link beside it are the cited paper's own
record, not claims an abstract could back (`Written.claims`). A name that stands for several
authors lists them; a name that is in no author list gets "No paper by X in this corpus." and
no papers at all (abstained).

Example: person_answer(turn) for "papers by S. Levine" -> Written(text="Sergey Levine has
10 papers in this corpus:\n- Title (with ...; https://...): We propose ... [1].\n...")
"""

from __future__ import annotations

from ..types import CANNOT, PERSON, Turn, Written
from .listing import person_lines

GENERATOR = "metadata"
MAX_CANDIDATES = 8


def no_paper_by(name: str) -> str:
    return f"No paper by {name} in this corpus."


def several_match(person: str, names: list[str], counts: list[int]) -> str:
    """What is said when several authors match a name: each with their paper count."""
    shown = [f"{name} ({n} paper{'s' if n > 1 else ''})"
             for name, n in zip(names[:MAX_CANDIDATES], counts)]
    extra = len(names) - len(shown)
    listed = "; ".join(shown) + (f"; and {extra} more" if extra > 0 else "")
    return f"{len(names)} authors match \u201c{person}\u201d: {listed}. Ask again with one of these names."


def person_answer(turn: Turn) -> Written:
    """The answer to a person question (module doc): the papers to check, or, when there are
    none to list, an abstention that says why."""
    route = turn.route
    match, intent = route.author, route.intent
    assert match is not None

    def plain(text: str) -> Written:
        return Written(text, GENERATOR, [], decision=CANNOT)

    if match.status == "missing":
        return plain(no_paper_by(intent.person))
    if match.status == "ambiguous":
        return plain(several_match(intent.person, match.names, match.counts))
    name = match.names[0]
    if not turn.passages:
        return plain(f"No paper by {name} on {intent.topic} in this corpus "
                     f"({len(match.papers)} on other topics).")
    text, claims = person_lines(name, intent.topic, turn.passages, len(match.papers), turn.idf)
    return Written(text, GENERATOR, turn.passages, claims=claims, decision=PERSON)
