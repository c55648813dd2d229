"""`rag map --png FILE`: the whole map of the conference as a static picture, with its labels.

Every paper a dot coloured by its cluster (the Map tab's colours), each cluster's label at its
centre, uploads as black stars. matplotlib's Agg backend: no display needed.
Example: write_png(rag.paper_map(), Path("docs/map.png")) -> a 2400 x 1800 px PNG.
"""

from __future__ import annotations

from pathlib import Path

from rag.types import PaperMap

from .map_view import PALETTE, UPLOAD_COLOR


def write_png(pmap: PaperMap, path: Path, title: str = "", dpi: int = 150) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    base = [p for p in pmap.points if not p.upload]
    mine = [p for p in pmap.points if p.upload]
    fig, ax = plt.subplots(figsize=(16, 12), dpi=dpi)
    size = min(40.0, max(7.0, 12_000 / max(len(base), 1)))  # dots a few papers can see
    ax.scatter([p.x for p in base], [p.y for p in base], s=size, linewidths=0, alpha=0.75,
               c=[PALETTE[p.cluster % len(PALETTE)] for p in base])
    if mine:
        ax.scatter([p.x for p in mine], [p.y for p in mine], s=160, marker="*",
                   c=UPLOAD_COLOR, edgecolors="white", linewidths=0.8, label="your documents")
        ax.legend(loc="lower right", frameon=False)
    for c in pmap.clusters:
        ax.annotate(c.label, (c.x, c.y), ha="center", va="center", fontsize=8.5,
                    color="#1f2937", bbox={"boxstyle": "round,pad=0.2", "fc": "white",
                                           "ec": "none", "alpha": 0.8})
    ax.set_axis_off()
    ax.set_aspect("equal", adjustable="datalim")
    if title:
        ax.set_title(title, fontsize=13)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
