"""Regions of the map and their names: k-means over the 2-D positions, c-TF-IDF labels.

Clusters are drawn over the map, not the embedding space, so a cluster is a region a reader
sees as one patch of colour. Each is named by the words its papers use more than the other
clusters' papers do (class-based TF-IDF, as BERTopic does: a term's frequency in the cluster
times log(1 + average words per cluster / the term's frequency in all clusters)), unigrams
and bigrams of titles and abstracts, English stop words and a few words every abstract uses
left out. Deterministic: seeded k-means, ties between words broken alphabetically.

Example: 2,634 ICML papers -> 26 clusters, one labelled "reinforcement learning, policy,
offline"; labels(["graph neural networks ...", ...], [0, ...], 1) -> ["graph, neural networks, gnn"].
"""

from __future__ import annotations

import math

import numpy as np

from ..lexicon import LABEL_GENERIC

SEED = 0
LABEL_WORDS = 3
# Words that say nothing about a topic in an ML abstract, on top of English stop words.



def cluster_count(n: int) -> int:
    """How many clusters for `n` papers: about sqrt(n / 4), between 1 and 40.
    Example: 2634 -> 26, 90 -> 5, 3 -> 1."""
    return max(1, min(40, round(math.sqrt(n / 4)))) if n >= 8 else 1


def assign(positions: np.ndarray, k: int | None = None) -> np.ndarray:
    """Each point's cluster (0..k-1), numbered by size, largest first."""
    n = len(positions)
    k = cluster_count(n) if k is None else min(k, n)
    if k <= 1:
        return np.zeros(n, dtype=int)
    from sklearn.cluster import KMeans

    raw = KMeans(n_clusters=k, n_init=4, random_state=SEED).fit_predict(positions)
    sizes = np.bincount(raw, minlength=k)
    order = sorted(range(k), key=lambda c: (-sizes[c], positions[raw == c, 0].mean()))
    renumber = {old: new for new, old in enumerate(order)}
    return np.array([renumber[c] for c in raw], dtype=int)


def labels(texts: list[str], clusters: np.ndarray, k: int) -> list[str]:
    """A short label per cluster from its texts' most distinctive words (c-TF-IDF)."""
    if k == 0:
        return []
    from sklearn.feature_extraction.text import CountVectorizer

    vec = CountVectorizer(ngram_range=(1, 2), stop_words="english", min_df=min(3, len(texts)),
                          token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z0-9-]+\b")
    try:
        counts = vec.fit_transform(texts)
    except ValueError:  # no word survives (empty or tiny texts)
        return [f"cluster {c + 1}" for c in range(k)]
    terms = vec.get_feature_names_out()
    # a generic word alone says nothing; in a bigram ("reinforcement learning") it may
    keep = np.array([not all(w in LABEL_GENERIC for w in t.split()) for t in terms])
    per = np.zeros((k, counts.shape[1]))
    for c in range(k):
        rows = np.flatnonzero(clusters == c)
        if len(rows):
            per[c] = np.asarray(counts[rows].sum(axis=0)).ravel()
    per[:, ~keep] = 0
    total = per.sum(axis=0)
    average = per.sum() / k
    weight = per * np.log1p(average / np.maximum(total, 1))
    return [_label(weight[c], terms) or f"cluster {c + 1}" for c in range(k)]


def _label(weights: np.ndarray, terms: np.ndarray) -> str:
    """The top words, a word left out when a chosen term holds it (in the singular too):
    "graphs" after "graph", "reinforcement" after "reinforcement learning" and the reverse."""
    order = sorted(np.flatnonzero(weights > 0), key=lambda i: (-weights[i], terms[i]))
    chosen: list[str] = []
    for i in order[:50]:
        term = str(terms[i])
        words = {w.removesuffix("s") for w in term.split()}
        if any(words <= c or c <= words for c in ({w.removesuffix("s") for w in t.split()}
                                                   for t in chosen)):
            continue
        chosen.append(term)
        if len(chosen) == LABEL_WORDS:
            break
    return ", ".join(chosen)
