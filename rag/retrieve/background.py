"""A corpus's background: how similar its best passage is to a question it cannot answer.

The best query-passage cosine rises with corpus size (more papers, more near neighbours) and
with how much of a paper's wording the question reuses, so one cosine threshold cannot hold
for 90 papers and 2,634 alike. Instead each corpus measures its own background: the best dense
cosine for each of `PROBES` (everyday questions no research corpus answers), summarised as mean
and standard deviation. The answerability model reads the best cosine of a real question as a
z-score against it: "how far above what an unrelated question gets".

Measured once per index generation, when `rag.index_corpus` has built it (40 query embeddings
in one batch and 40 lookups, about a second; at the first question if the index was built
otherwise), and kept beside the snapshot, so every process and every later start reads the
file.
Example: seeds (90 papers) -> mean 0.169, std 0.041; a question scoring 0.58 is z = 10.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..index.files import write_json


PROBES = (
    "How do I bake sourdough bread at home?", "Who won the football world cup in 2018?",
    "What is the capital of Australia?", "How long should I boil an egg?",
    "What are the symptoms of the flu?", "Recommend a good hiking trail in the Alps.",
    "How do I change a flat tyre on a bicycle?", "What is the plot of Hamlet?",
    "How many moons does Jupiter have?", "What is the best way to learn the guitar?",
    "How do I file my taxes?", "What time zone is Tokyo in?", "How do I repot a houseplant?",
    "Who painted the Mona Lisa?", "What is the recipe for lasagna?",
    "How do vaccines get approved?", "What is the history of the Roman empire?",
    "How do I fix a leaking kitchen tap?", "What is the exchange rate between euro and dollar?",
    "Which wine goes with fish?", "How does a mortgage work?",
    "What are good exercises for back pain?", "How do I train my dog to sit?",
    "What causes earthquakes?", "What is the tallest building in the world?",
    "How do I make cold brew coffee?", "What is the rule of offside in football?",
    "How do solar panels work on a roof?", "Where should I travel in Portugal?",
    "How do I knit a scarf?", "What is the meaning of life?", "How can I improve my sleep?",
    "Which smartphone has the best camera?", "How do I write a cover letter?",
    "What is the population of Brazil?", "How are diamonds formed?",
    "What was the cause of World War I?", "How do I clean a cast iron pan?",
    "What is the speed of sound?", "What should I plant in my garden in spring?",
)


@dataclass(frozen=True)
class Background:
    mean: float
    std: float

    def z(self, cosine: float) -> float:
        return (cosine - self.mean) / max(self.std, 1e-3)


def measure(index) -> Background:
    """Best dense cosine of every probe against the index's collection."""
    best = []
    for vector in index.embedder.embed(list(PROBES)):  # one batch, then a lookup each
        hits = index.collection.query(vector, 1, None)
        best.append(hits[0].similarity if hits else 0.0)
    values = np.asarray(best, dtype=np.float64)
    return Background(float(values.mean()), float(values.std()))


def background(index) -> Background:
    """The index's background for its current generation: read from disk, else measured and
    saved (atomically; a directory that cannot be written only costs a re-measure)."""
    gen = str(index.generation)
    cached = getattr(index, "_background", None)
    if cached is not None and cached[0] == gen:
        return cached[1]
    path = Path(index.dir) / "background.json"
    found = None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("generation") == gen and data.get("probes") == len(PROBES):
            found = Background(float(data["mean"]), float(data["std"]))
    except (OSError, ValueError, KeyError, TypeError):
        found = None
    if found is None:
        found = measure(index)
        if gen and not gen.startswith("dirty"):
            _save(path, {"generation": gen, "probes": len(PROBES), "mean": found.mean,
                         "std": found.std})
    index._background = (gen, found)
    return found


def _save(path: Path, data: dict) -> None:
    try:
        write_json(path, data)
    except OSError:
        pass  # a cache: measured again next time
