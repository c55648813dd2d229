"""Each paper's place on a 2-D map, from its whole-abstract vector (openTSNE).

t-SNE was chosen over UMAP and PaCMAP by measurement on the 2,634 ICML 2024 papers
(`bench/map_layouts.py`, docs/map.md): it keeps more of each paper's 10 nearest neighbours
on the map than the other two, in comparable time. Its affinities are uniform over each
paper's 10 exact nearest papers (not perplexity-based), which kept the most of those 10 on
the map among the settings tried. Seeded and single-threaded: the same vectors give the same
positions on every run.

Uploads are placed with openTSNE's own `transform` into the fitted map (the corpus stays
where it is), so a user's document lands beside the papers it is like.

Example: fit(vectors of shape (2634, 384)) -> positions of shape (2634, 2);
neighbour_preservation(vectors, positions) -> 0.42: on average 4.2 of each paper's 10 nearest
papers on the map are among its 10 nearest in the embedding space (a random layout: 0.004).
"""

from __future__ import annotations

import numpy as np

SEED = 0
NEIGHBOURS = 10  # each paper is pulled towards its 10 nearest papers, all alike
DOF = 1.0  # the map's kernel: Cauchy, as in standard t-SNE
EARLY_ITER, N_ITER = 250, 750  # early exaggeration (12), then the main phase
N_JOBS = 1  # one thread: as fast as two on a busy machine, where two threads spin-wait
PLACE_NEIGHBOURS = 15
# Bump when a setting above changes, so a cached layout is drawn again.
VERSION = f"tsne-uniform{NEIGHBOURS}-dof{DOF}-it{EARLY_ITER}+{N_ITER}-s{SEED}"


def fit(vectors: np.ndarray) -> np.ndarray:
    """Positions (n, 2) for unit vectors (n, dim), by t-SNE over exact cosine neighbours."""
    vectors = np.asarray(vectors, dtype=np.float32)
    n = len(vectors)
    if n < 5:  # t-SNE needs a few neighbours: a handful of papers are placed by PCA
        return _tiny(vectors)
    from openTSNE import TSNEEmbedding, affinity, initialization

    aff = affinity.Uniform(vectors, k_neighbors=min(NEIGHBOURS, n - 1), metric="cosine",
                           method="exact", n_jobs=N_JOBS, random_state=SEED, verbose=False)
    start = initialization.pca(vectors, random_state=SEED)
    emb = TSNEEmbedding(start, aff, dof=DOF, n_jobs=N_JOBS, random_state=SEED, verbose=False)
    emb = emb.optimize(n_iter=EARLY_ITER, exaggeration=12, momentum=0.5)
    emb = emb.optimize(n_iter=N_ITER, momentum=0.8)
    return np.array(emb, dtype=np.float64)


def place(vectors: np.ndarray, positions: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Positions (m, 2) for `new` vectors on the map fitted from `vectors` -> `positions`,
    which do not move: openTSNE's `transform`, which starts each new point at the median of
    its nearest papers' positions and optimises it against them."""
    new = np.asarray(new, dtype=np.float32)
    if len(new) == 0:
        return np.zeros((0, 2))
    vectors = np.asarray(vectors, dtype=np.float32)
    if len(vectors) < 5:
        nearest = np.argmax(new @ vectors.T, axis=1) if len(vectors) else None
        return positions[nearest] if nearest is not None else np.zeros((len(new), 2))
    from openTSNE import TSNEEmbedding, affinity

    k = min(PLACE_NEIGHBOURS, len(vectors) - 1)
    aff = affinity.PerplexityBasedNN(vectors, perplexity=k / 3.0, metric="cosine",
                                     method="exact", k_neighbors=k, random_state=SEED,
                                     n_jobs=N_JOBS, verbose=False)
    fitted = TSNEEmbedding(np.array(positions, dtype=np.float64), aff, dof=DOF,
                           random_state=SEED, n_jobs=N_JOBS, verbose=False)
    # transform centres the fitted map first: the new points are shifted back to ours
    shift = (positions.max(axis=0) + positions.min(axis=0)) / 2
    placed = fitted.transform(new, perplexity=min(5.0, k / 3.0), k=k)
    return np.asarray(placed, dtype=np.float64) + shift


def neighbour_preservation(vectors: np.ndarray, positions: np.ndarray, k: int = 10) -> float:
    """Share of each point's `k` nearest points on the map that are also among its `k`
    nearest by cosine in the embedding space, averaged over the points.

    Example: a map that keeps every neighbourhood -> 1.0; a random one -> about k / n."""
    vectors = np.asarray(vectors, dtype=np.float64)
    positions = np.asarray(positions, dtype=np.float64)
    k = min(k, len(vectors) - 1)
    if k <= 0:
        return 1.0
    near = _nearest(vectors @ vectors.T, k)
    sq = (positions**2).sum(axis=1)
    on_map = _nearest(-(sq[:, None] + sq[None, :] - 2 * positions @ positions.T), k)
    return float(np.mean([len(set(a) & set(b)) / k for a, b in zip(near, on_map)]))


def _nearest(similarity: np.ndarray, k: int) -> np.ndarray:
    similarity = similarity.copy()
    np.fill_diagonal(similarity, -np.inf)
    return np.argpartition(-similarity, k - 1, axis=1)[:, :k]


def _tiny(vectors: np.ndarray) -> np.ndarray:
    n = len(vectors)
    if n <= 1:
        return np.zeros((n, 2))
    centred = vectors - vectors.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    out = np.zeros((n, 2))
    out[:, : min(2, vt.shape[0])] = centred @ vt[:2].T
    return out
