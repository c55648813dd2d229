"""Which papers belong in a list (or a table's rows): judged paper by paper.

A topic is searched whole and, when it joins two topics with "or" ("ad auctions or
autobidding"), each half too (`halves`); every paper found is judged against the topic or half
that found it by a small logistic model of our own (`list-membership.json`, fitted on the list
benchmark's train topics by `python -m rag.eval.tables fit-lists`, its threshold chosen on dev):
P(relevant) from the query's cosine, the topic words the paper's title and abstract hold
(IDF-weighted, 0 when its rarest word is missing) and the title's share alone. A paper is listed when P clears the threshold; the list is ordered by P.

Without a fitted file the rule of old applies: a cosine of at least `LIST_DENSE`, or
`LIST_COVERAGE` of the topic's words.

Example: halves("Mamba or state space models") -> ["Mamba or state space models", "Mamba",
"state space models"].
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..text import Idf, content_terms, coverage, term_weights
from ..types import Passage
from .answerability import Logistic
from .catalog import Catalog

if TYPE_CHECKING:
    from ..index.snapshot import Snapshot
    from .retrievers import Retriever

MEMBERSHIP_FILE = Path(__file__).with_name("list-membership.json")
# No retrieval rank among them: every search has a first hit, on topic or not (with the rank,
# "speech recognition" listed a paper on a corpus without any).
FEATURES = ("dense", "cover", "title_cover", "dense_x_cover")
LIST_POOL = 100  # candidates each query retrieves: a topic may have 50 relevant papers
LIST_COVERAGE = 0.5  # the unfitted rule: the share of the topic's words a listed paper holds
LIST_DENSE = 0.55  # or the cosine that lists a paper whatever its words
_OR = re.compile(r"\s+or\s+|\s*/\s*", re.I)


def halves(topic: str) -> list[str]:
    """The topic, then each side of an "or" (module doc)."""
    parts = [p.strip(" ,") for p in _OR.split(topic) if p.strip(" ,")]
    return [topic] + parts if len(parts) > 1 else [topic]


def covers(topic: str, paper_id: str, cat: Catalog, idf) -> float:
    """IDF-weighted share of the topic's words in the paper's title and abstract; 0 when its
    rarest word is missing ("machine unlearning" needs "unlearning", not just "machine")."""
    text = f"{cat.titles_of.get(paper_id, '')}. {cat.text(paper_id)}"
    weights = term_weights(topic, idf)
    if weights and max(weights, key=lambda t: (weights[t], t)) not in content_terms(text):
        return 0.0
    return coverage(topic, text, idf)


def features(topic: str, passage: Passage, cat: Catalog, idf) -> list[float]:
    title = cat.titles_of.get(passage.paper_id, passage.title)
    dense, cover = passage.scores.get("dense", 0.0), covers(topic, passage.paper_id, cat, idf)
    return [dense, cover, coverage(topic, title, idf) if content_terms(topic) else 0.0,
            dense * cover]


@dataclass(frozen=True)
class Membership:
    model: Logistic
    threshold: float

    def probability(self, x: list[float]) -> float:
        return self.model.probability(x)


@lru_cache(maxsize=2)
def membership(path: str = str(MEMBERSHIP_FILE)) -> Membership | None:
    """The fitted membership model, or None when none was fitted."""
    p = Path(path)
    if not p.is_file():
        return None
    data = json.loads(p.read_text(encoding="utf-8"))
    return Membership(Logistic.from_dict(data["model"]), float(data["threshold"]))


def candidates(topic: str, retriever: "Retriever", snap: "Snapshot", cat: Catalog, idf: Idf,
               max_per_paper: int = 1) -> dict[str, tuple[Passage, list[float]]]:
    """Every paper the topic (or a half of it) retrieves, with the features of its best
    (highest-cosine) find: what the model judges, and what fitting it reads."""
    out: dict[str, tuple[Passage, list[float]]] = {}
    for query in halves(topic):
        for p in retriever.retrieve(query, LIST_POOL, max_per_paper, snap=snap):
            x = features(query, p, cat, idf)
            if p.paper_id not in out or x > out[p.paper_id][1]:
                out[p.paper_id] = (p, x)
    return out


def members(topic: str, retriever: "Retriever", snap: "Snapshot", cat: Catalog, idf: Idf,
            max_per_paper: int = 1, model: Membership | None = None) -> list[Passage]:
    """The papers that belong in the topic's list, likeliest first (module doc)."""
    model = model if model is not None else membership()
    found = candidates(topic, retriever, snap, cat, idf, max_per_paper)
    if model is None:
        keep = [(x[0], p) for p, x in found.values()
                if x[0] >= LIST_DENSE or x[1] >= LIST_COVERAGE]
    else:
        keep = [(model.probability(x), p) for p, x in found.values()]
        keep = [(s, p) for s, p in keep if s >= model.threshold]
    return [p for _, p in sorted(keep, key=lambda sp: (-sp[0], sp[1].paper_id))]
