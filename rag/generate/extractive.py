"""The extractive generator: an answer made of the retrieved abstracts' own sentences.

No language model: each sentence of the retrieved passages is scored against the question
(cosine similarity of MiniLM embeddings plus content-word overlap), and the best ones are
quoted verbatim with their `[n]`, so the answer is faithful by construction. A question asking
for several papers ("which papers study X?") gets one line per relevant paper with its title.

Example: "Which kernels avoid mean reversion?" -> "We show that non-positive kernels ... [1]"
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Iterator

import numpy as np

from ..embedders import Embedder
from ..text import coverage
from ..types import Passage
from . import History

_LIST = re.compile(
    r"\b(which|what|list|name|any|some|all)\b.{0,40}\b(papers|works|studies|articles|methods|"
    r"approaches|abstracts|publications)\b|\blist\b|\bpapers (that|which|about|on)\b", re.I)
MAX_SENTENCES = 3
LEXICAL_WEIGHT = 0.25


def is_list_question(question: str) -> bool:
    return bool(_LIST.search(question))


class Extractive:
    name = "extractive"

    def __init__(self, embedder: Embedder, min_relevance: float = 0.0, cache_size: int = 20000):
        self.embedder = embedder
        self.min_relevance = min_relevance
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size

    def _vectors(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            for t, v in zip(missing, self.embedder.embed(missing)):
                self._cache[t] = v
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return np.stack([self._cache[t] for t in texts])

    def score_sentences(self, question: str, passages: list[Passage]
                        ) -> list[tuple[float, int, int, str]]:
        """(score, passage index, sentence position, sentence) for every passage sentence."""
        cands = [(i, j, t) for i, p in enumerate(passages)
                 for j, (_, _, t) in enumerate(p.sentence_texts()) if t.strip()]
        if not cands:
            return []
        vecs = self._vectors([question] + [t for _, _, t in cands])
        cos = vecs[1:] @ vecs[0]
        return [(float(c) + LEXICAL_WEIGHT * coverage(question, t), i, j, t)
                for c, (i, j, t) in zip(cos, cands)]

    def generate(self, question: str, passages: list[Passage],
                 history: History = ()) -> Iterator[str]:
        relevant = [i for i, p in enumerate(passages)
                    if p.scores.get("dense", 1.0) >= self.min_relevance]
        pool = [passages[i] for i in relevant]
        scored = self.score_sentences(question, pool)
        if not scored:
            return
        best: dict[int, tuple[float, int, int, str]] = {}
        for row in scored:
            if row[1] not in best or row[0] > best[row[1]][0]:
                best[row[1]] = row
        if is_list_question(question) and len(best) > 1:
            lines = []
            for pi in sorted(best, key=lambda i: pool[i].rank or i):
                _, _, _, sent = best[pi]
                lines.append(f"- {pool[pi].title}: {cite(sent, relevant[pi] + 1)}")
            yield "\n".join(lines)
            return
        scored.sort(key=lambda r: (-r[0], r[1], r[2]))
        top = scored[0][0]
        chosen, per_passage = [], {}
        for score, pi, sj, sent in scored:
            if len(chosen) == MAX_SENTENCES or score < 0.85 * top:
                break
            if per_passage.get(pi, 0) >= 2:
                continue
            per_passage[pi] = per_passage.get(pi, 0) + 1
            chosen.append((pi, sj, sent))
        # Sentences of one paper stay together and in the paper's order.
        order = {pi: k for k, (pi, _, _) in enumerate(chosen)}
        chosen.sort(key=lambda r: (order[r[0]], r[1]))
        yield " ".join(cite(sent, relevant[pi] + 1) for pi, _, sent in chosen)


def cite(sentence: str, n: int) -> str:
    """The sentence with its marker before the final punctuation: 'We find X [1].'"""
    m = re.match(r"(.*?)([.!?]+[\"')\]]*)?\s*$", sentence.strip(), re.S)
    body, end = m.group(1), m.group(2) or "."
    return f"{body} [{n}]{end}"
