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
    counts: tuple[int, ...] = ()  # how many papers each of `names` has


class AuthorIndex:
    """Every author name of a corpus, by normal form, with the papers listing it."""

    def __init__(self, authors_of: Mapping[str, str]):
        """`authors_of`: paper id -> comma-separated author list. Spellings with one normal
        form are one author ("Yixuan Zhang", "YIXUAN ZHANG"), shown as its commonest one."""
        self.papers: dict[tuple[str, ...], list[str]] = {}  # normal form -> paper ids
        spellings: dict[tuple[str, ...], dict[str, int]] = {}
        for pid, authors in authors_of.items():
            for name in split_authors(authors):
                key = name_key(name)
                if not key:
                    continue
                seen = spellings.setdefault(key, {})
                seen[name] = seen.get(name, 0) + 1
                if pid not in self.papers.setdefault(key, []):
                    self.papers[key].append(pid)
        self.shown = {key: max(seen, key=lambda n: (seen[n], n)) for key, seen in spellings.items()}
        self.by_last: dict[str, list[tuple[str, ...]]] = {}
        for key in self.papers:
            self.by_last.setdefault(key[-1], []).append(key)

    def __contains__(self, name: str) -> bool:
        return self.lookup(name).status == "found"

    def lookup(self, name: str) -> AuthorMatch:
        """The author(s) `name` stands for (module doc)."""
        key = name_key(name)
        keys = sorted(self._candidates(key) if key else [],
                      key=lambda k: (-len(self.papers[k]), self.shown[k]))
        if not keys:
            return AuthorMatch(name, "missing")
        counts = tuple(len(self.papers[k]) for k in keys)
        if len(keys) > 1:
            return AuthorMatch(name, "ambiguous", tuple(self.shown[k] for k in keys), (), counts)
        return AuthorMatch(name, "found", (self.shown[keys[0]],), tuple(self.papers[keys[0]]),
                           counts)

    def _candidates(self, key: tuple[str, ...]) -> list[tuple[str, ...]]:
        if key in self.papers:
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
