"""The author index: who wrote which indexed paper, found by a name as people type it.

Names are compared in a normal form: accents dropped, lower case, punctuation and nicknames in
brackets removed ("Bernhard Schölkopf" -> "bernhard scholkopf", "Jia (Kevin) Liu" -> "jia
liu"). A written name matches, in this order:
- the whole name ("sergey levine"); with middle names or initials ignored when nothing matches
  exactly ("Michael Jordan" finds "Michael I. Jordan");
- an initial and a surname ("S. Levine", "S Levine"): the authors with that surname whose first
  name starts with that letter;
- a surname alone ("Levine").
One author is `found`; several are `ambiguous` (the candidates are listed, most papers first);
none is `missing`. It does not guess at misspellings, nor tell apart two people who publish
under one identical name (the corpus cannot either).

Example: AuthorIndex({"p1": "Sergey Levine, Chelsea Finn"}).lookup("S. Levine")
    -> AuthorMatch(status="found", names=("Sergey Levine",), ...)
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Mapping

_BRACKETS = re.compile(r"\([^)]*\)|“[^”]*”|\"[^\"]*\"")
_WORD = re.compile(r"[a-z0-9]+")


def name_key(name: str) -> tuple[str, ...]:
    """The words of a name in normal form. Example: "Bernhard Schölkopf" -> ("bernhard",
    "scholkopf"); "S. Levine" -> ("s", "levine"); "Jia (Kevin) Liu" -> ("jia", "liu")."""
    text = _BRACKETS.sub(" ", unicodedata.normalize("NFKD", name))
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = re.sub(r"['’]", "", text)  # "D'Oro" -> "doro"
    return tuple(_WORD.findall(text))


def split_authors(authors: str) -> list[str]:
    """The names of a comma-separated author list, cleaned of invisible characters."""
    names = (re.sub(r"[\u200b-\u200f\u202a-\u202e]", "", a).strip() for a in authors.split(","))
    return [n for n in names if n]


@dataclass(frozen=True)
class AuthorMatch:
    """The authors a written name stands for, with their papers (ids, in index order)."""

    query: str
    status: str  # "found" | "ambiguous" | "missing"
    names: tuple[str, ...] = ()  # the corpus's own spelling; one when found
    papers: tuple[str, ...] = ()  # the found author's paper ids (empty unless found)


class AuthorIndex:
    """Every author name of a corpus, by normal form, with the papers listing it."""

    def __init__(self, authors_of: Mapping[str, str]):
        """`authors_of`: paper id -> comma-separated author list."""
        self.papers_of: dict[str, list[str]] = {}  # display name -> paper ids
        self.by_key: dict[tuple[str, ...], list[str]] = {}  # normal form -> display names
        for pid, authors in authors_of.items():
            for name in split_authors(authors):
                key = name_key(name)
                if not key:
                    continue
                if name not in self.papers_of:
                    self.papers_of[name] = []
                    self.by_key.setdefault(key, []).append(name)
                if pid not in self.papers_of[name]:
                    self.papers_of[name].append(pid)
        self.by_last: dict[str, list[tuple[str, ...]]] = {}
        for key in self.by_key:
            self.by_last.setdefault(key[-1], []).append(key)

    def __contains__(self, name: str) -> bool:
        return self.lookup(name).status == "found"

    def lookup(self, name: str) -> AuthorMatch:
        """The author(s) `name` stands for (module doc)."""
        key = name_key(name)
        keys = self._candidates(key) if key else []
        names = sorted({n for k in keys for n in self.by_key[k]},
                       key=lambda n: (-len(self.papers_of[n]), n))
        if not names:
            return AuthorMatch(name, "missing")
        if len(names) > 1:
            return AuthorMatch(name, "ambiguous", tuple(names))
        return AuthorMatch(name, "found", (names[0],), tuple(self.papers_of[names[0]]))

    def _candidates(self, key: tuple[str, ...]) -> list[tuple[str, ...]]:
        if key in self.by_key:
            return [key]
        same_last = self.by_last.get(key[-1], [])
        if len(key) == 1:  # a surname alone
            return same_last
        first = key[0]
        if len(first) == 1:  # an initial: "S. Levine"
            return [k for k in same_last if len(k) > 1 and k[0].startswith(first)]
        # a full name without (or with other) middle names: "Michael Jordan" ~ "Michael I. Jordan"
        found = [k for k in same_last if len(k) > 1 and k[0] == first
                 and (len(key) == 2 or set(key[1:-1]) <= set(k[1:-1]))]
        # or a surname of several words: "Choquette Choo"
        return found or [k for k in same_last if len(k) > len(key) and k[-len(key):] == key]
