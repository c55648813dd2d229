"""The map's layout measured on the 2,634 ICML 2024 papers: time, peak memory, quality.

    python -m rag.bench.map_layouts [--home DIR] [--compare]

Quality is `rag.index.layout.neighbour_preservation`: the share of each paper's 10 nearest
papers on the map that are also among its 10 nearest by cosine of the whole-abstract vectors,
next to a random layout's. Time is wall-clock and CPU time of the layout alone (the vectors
are read first; openTSNE's import is timed apart); peak memory is this process's peak RSS.
The clusters and their labels are drawn too and counted.

`--compare` also runs the other two candidates the choice was made against, with their
libraries' documented defaults and cosine metric: UMAP (umap-learn) and PaCMAP. They are not
project dependencies (`pip install umap-learn pacmap faiss-cpu` to compare); each is imported
here only, for this measurement. Their time includes numba's first compilation, as a first
run of the map would.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time

import numpy as np


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def _umap(vectors):
    import umap

    return umap.UMAP(n_neighbors=15, min_dist=0.1, metric="cosine",
                     random_state=0).fit_transform(vectors)


def _pacmap(vectors):
    import pacmap

    return pacmap.PaCMAP(n_components=2, n_neighbors=10, random_state=0).fit_transform(
        vectors, init="pca")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag.bench.map_layouts")
    parser.add_argument("--home", help="a data directory holding the icml2024 index")
    parser.add_argument("--compare", action="store_true", help="also run UMAP and PaCMAP")
    args = parser.parse_args(argv)
    if args.home:
        os.environ["RAG_HOME"] = args.home
    from rag import factory
    from rag.index import clusters, layout
    from rag.index.vectors import paper_vectors
    from rag.settings import Settings

    settings = Settings.load(corpus="icml2024")
    index = factory.index(settings)
    found = paper_vectors(index)
    vectors = found.vectors[[i for i, o in enumerate(found.origins) if o != "upload"]]
    before = peak_mb()
    _, imported, _ = timed(lambda: __import__("openTSNE"))
    positions, wall, cpu = timed(lambda: layout.fit(vectors))
    assigned, cwall, _ = timed(lambda: clusters.assign(positions))
    k = int(assigned.max()) + 1
    papers = {p.id: p for p in index.papers()}
    ids = [pid for pid, o in zip(found.ids, found.origins) if o != "upload"]
    names, lwall, _ = timed(lambda: clusters.labels(
        [f"{papers[p].title}. {papers[p].text}" for p in ids], assigned, k))
    rows = [{"layout": "openTSNE (the map's)", "papers": len(vectors),
             "seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
             "import_seconds": round(imported, 1),
             "quality": round(layout.neighbour_preservation(vectors, positions), 3),
             "peak_rss_mb": round(peak_mb()), "rss_before_mb": round(before),
             "clusters": k, "cluster_seconds": round(cwall + lwall, 1)}]
    rng = np.random.default_rng(0)
    rows.append({"layout": "random", "quality": round(layout.neighbour_preservation(
        vectors, rng.normal(size=(len(vectors), 2))), 3)})
    if args.compare:
        for name, fn in (("UMAP", _umap), ("PaCMAP", _pacmap)):
            try:
                pos, wall, cpu = timed(lambda: fn(vectors))
            except ImportError as exc:
                rows.append({"layout": name, "skipped": str(exc)})
                continue
            rows.append({"layout": name, "seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
                         "quality": round(layout.neighbour_preservation(vectors, pos), 3),
                         "peak_rss_mb": round(peak_mb())})
    for row in rows:
        print(json.dumps(row))
    print(json.dumps({"labels": names[:10], "load_average": os.getloadavg()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
