"""Papers like this one: the nearest papers to a paper by whole-abstract vector.

A paper's vector is the normalised mean of its chunk vectors (`index/vectors.py`), so two
papers are compared as wholes, not by their best-matching chunks. The score is the cosine of
the two vectors. It does not read the question or the BM25 side: it is a neighbourhood in the
embedding space, the same one the map of the conference is drawn from.

Example: similar(index, "abc123", 3) -> the 3 papers whose vectors are closest to abc123's,
best first, abc123 itself left out.
"""

from __future__ import annotations

import numpy as np

from ..errors import PaperNotFoundError
from ..index.opened import Index
from ..index.vectors import paper_vectors
from ..types import Paper, Similar


def similar(index: Index, paper_id: str, k: int = 10) -> list[Similar]:
    """The `k` papers nearest to `paper_id`, best first; PaperNotFoundError if it is not in
    the index."""
    found = paper_vectors(index)
    row = found.row(paper_id)
    if row is None:
        raise PaperNotFoundError(f"no paper with id {paper_id!r} in the index {index.name}; "
                                 "`rag papers` lists the ids")
    if k <= 0:
        return []
    scores = found.vectors @ found.vectors[row]
    scores[row] = -np.inf
    k = min(k, len(found.ids) - 1)
    if k <= 0:
        return []
    top = np.argpartition(-scores, k - 1)[:k]
    # Ties broken by id, so the order is the same on every run.
    top = sorted(top, key=lambda i: (-float(scores[i]), found.ids[i]))
    papers = {p.id: p for p in index.papers()}
    return [Similar(papers[found.ids[i]], float(scores[i])) for i in top
            if found.ids[i] in papers]
