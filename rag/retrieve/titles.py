"""Title matching: which indexed paper a question names, even loosely.

A question names a paper when its normal form (lower case, accents and punctuation dropped)
contains, as whole words:
1. the paper's whole title ("in context language learning architectures and algorithms");
2. or the title's short name, the part before its colon ("Genie", "rankseg"), when that short
   name is the paper's own: no other title starts with it and at most `MAX_SHORT_DF` papers
   mention it at all (so "Position: ..." or a common word never counts);
3. or at least `MIN_OVERLAP` of the title's search terms (stemmed content words), for a title
   of `MIN_TERMS` terms or more, and more than any other title.
It does not catch a misspelt short name, nor a paper named only by what it does.

Example: TitleIndex({"p1": ("Genie: Generative Interactive Environments", "...")})
    .match("What is the Genie paper about?") -> ["p1"]
"""

from __future__ import annotations

import re
import unicodedata
from typing import Mapping

from ..text import content_terms

MAX_SHORT_DF = 3  # papers that may mention a short name for it to name one paper
MIN_OVERLAP = 0.8
MIN_TERMS = 4
_NON_WORD = re.compile(r"[^a-z0-9]+")
_QUOTED = re.compile(r"[\"“”'‘’]([^\"“”‘’]{8,})[\"“”'‘’]")


def title_key(text: str) -> str:
    """Lower case, accents dropped, words joined by single spaces. Example: "Flow-Matching:
    Théorie" -> "flow matching theorie"."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    return _NON_WORD.sub(" ", text).strip()


def _within(needle: str, hay: str) -> bool:
    return bool(needle) and f" {needle} " in f" {hay} "


class TitleIndex:
    """The titles of a corpus, to find the paper a question names."""

    def __init__(self, papers: Mapping[str, tuple[str, str]]):
        """`papers`: paper id -> (title, abstract)."""
        self.ids = list(papers)
        self.titles = {pid: title_key(t) for pid, (t, _) in papers.items()}
        self.texts = {pid: title_key(f"{t} {a}") for pid, (t, a) in papers.items()}
        self.terms = {pid: content_terms(t) for pid, (t, _) in papers.items()}
        shorts: dict[str, list[str]] = {}
        for pid, (title, _) in papers.items():
            if ":" in title:
                short = title_key(title.split(":", 1)[0])
                if len(short) >= 3 and len(short.split()) <= 6:
                    shorts.setdefault(short, []).append(pid)
        self.shorts = {s: ids[0] for s, ids in shorts.items() if len(ids) == 1}
        self._df: dict[str, int] = {}

    def match(self, question: str, loose: bool = True) -> list[str]:
        """Ids of the papers `question` names, best first (usually none or one); without
        `loose`, only by whole title or short name (rules 1 and 2), not by shared words."""
        q = title_key(question)
        scored: dict[str, float] = {}
        for pid, title in self.titles.items():
            if len(title.split()) >= 2 and _within(title, q):
                scored[pid] = 3 + len(title) / 1000
        for short, pid in self.shorts.items():
            if pid not in scored and _within(short, q) and self._mentions(short) <= MAX_SHORT_DF:
                scored[pid] = 2 + len(short) / 1000
        if not scored and loose:
            for part in _QUOTED.findall(question) or [question]:
                best = self._overlap(part)
                if best:
                    scored[best] = 1
        return sorted(scored, key=lambda pid: -scored[pid])

    def name(self, paper_id: str, title: str) -> str:
        """The words that name the paper in a question: its short name when that names it
        alone (rule 2), else its whole title. Example: "Genie: Generative ..." -> "Genie"."""
        head = title.split(":", 1)[0].strip() if ":" in title else ""
        short = title_key(head)
        if head and self.shorts.get(short) == paper_id and self._mentions(short) <= MAX_SHORT_DF:
            return head
        return title.strip()

    def _overlap(self, text: str) -> str | None:
        """The one title whose terms `text` covers best, at least MIN_OVERLAP of them."""
        words = content_terms(text)
        ranked = sorted(((len(t & words) / len(t), pid) for pid, t in self.terms.items()
                         if len(t) >= MIN_TERMS), reverse=True)
        if not ranked or ranked[0][0] < MIN_OVERLAP:
            return None
        if len(ranked) > 1 and ranked[1][0] >= ranked[0][0]:
            return None
        return ranked[0][1]

    def _mentions(self, short: str) -> int:
        """How many papers mention `short` in their title or abstract (cached)."""
        if short not in self._df:
            self._df[short] = sum(_within(short, text) for text in self.texts.values())
        return self._df[short]
