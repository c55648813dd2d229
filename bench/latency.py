"""Query latency, p50/p95 over at least 200 questions: retrieval alone (dense, bm25, hybrid)
and a whole extractive `ask()` with each sentence scorer (`reader=rules`, and `reader=model`:
the reader model scoring the top abstract's sentences), at three scales: the seeds (90 papers), the ICML 2024 corpus
(2,634) and a synthetic corpus of 50,000 passages (`--scale50k`).

Questions: the 104 of eval/datasets/seeds.jsonl plus 120 ICML 2024 titles (a fixed sample), the
same 224 at every scale; the first 10 are asked once untimed (warm-up). Each timing includes
embedding the question, as a real request does.

The synthetic corpus recombines real abstract sentences: each passage takes the sentences of
two random ICML 2024 chunks, up to 190 tokens. Its vector is, by default (`mix`), the
normalised length-weighted mean of those two chunks' real MiniLM vectors (taken from the ICML
index, so no model time); `--synthetic-vectors model` embeds every passage with MiniLM instead
(hours on 2 cores, cached and resumable in bench/results/cache/). Either way the vectors are
computed once and cached, and the index is built by the real `build_index`.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np

from .measure import BENCH_HOME, RESULTS, Report, Row, latencies_ms

CACHE = RESULTS / "cache"
SYNTHETIC = CACHE / "synthetic-50k.jsonl"
# ask: gate + reader; rules (issue 16), the reader model scoring the top abstract (issue 21)
GOALS = {"icml2024": {"retrieval": "< 50", "ask rules": "< 100", "ask model": "< 150"},
         str(SYNTHETIC): {"retrieval": "< 150"}, "seeds": {"retrieval": ""}}
READERS = ("rules", "model")


def questions(n_titles: int = 120) -> list[str]:
    from importlib.resources import files

    seed_questions = files("rag.eval") / "datasets" / "seeds.jsonl"
    rows = [json.loads(line) for line in
            seed_questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    titles = [json.loads(line)["title"] for line in
              (files("rag.seeds") / "icml2024.jsonl").read_text(encoding="utf-8").splitlines()]
    return [r["question"] for r in rows] + random.Random(0).sample(titles, n_titles)


def run_scale(report: Report, corpus: str, label: str, qs: list[str]) -> None:
    import rag
    from rag import factory
    from rag.settings import Settings

    settings = Settings.load(home=str(BENCH_HOME), corpus=corpus, generator="extractive",
                             env={})
    factory.index(settings).snapshot()  # opened and loaded: this is warm latency
    chunks = factory.index(settings).collection.count()
    details = {}
    for name in ("dense", "bm25", "hybrid"):
        stats = latencies_ms(lambda q: factory.retriever(settings, name).retrieve(
            q, settings.k, settings.max_per_paper), qs)
        details[name] = stats
        report.add(Row("latency", f"{label}: {name} retrieval p95 (p50 {stats['p50']:.1f})",
                       stats["p95"], "ms", goal=GOALS[corpus]["retrieval"] if name == "hybrid"
                       else "", note=f"{stats['n']} questions, {chunks} chunks"))
    for reader in READERS:  # the sentence scorers side by side, in one run
        asked = settings.replace(reader=reader)
        stats = latencies_ms(lambda q: rag.ask(q, settings=asked), qs)
        details[f"ask reader={reader}"] = stats
        report.add(Row("latency", f"{label}: extractive ask() reader={reader} p95 "
                       f"(p50 {stats['p50']:.1f})", stats["p95"], "ms",
                       goal=GOALS[corpus].get(f"ask {reader}", ""),
                       note=f"p99 {stats['p99']:.0f} ms, after warm-up"))
    report.details.setdefault("latency", {})[label] = details


# -- the synthetic 50,000-passage corpus ----------------------------------------------------


def build_synthetic(n: int = 50_000, vectors: str = "mix") -> Path:
    """Write the synthetic corpus (JSONL) and its cached vectors; index it in the bench home."""
    from rag.ingest import tokens
    from rag.models.embedders import MiniLM
    from rag.index.build import build_index
    from rag.index.naming import collection_name
    from rag.index.store import store_for
    from rag.settings import Settings
    from rag.index.store import Store
    from rag.index.schema import indexed_text

    CACHE.mkdir(parents=True, exist_ok=True)
    settings = Settings.load(home=str(BENCH_HOME), env={})
    model = MiniLM()
    store = Store(path=BENCH_HOME / "chroma")
    source = store.open(collection_name("icml2024", model))
    if source is None:
        raise SystemExit("the synthetic corpus is made from the icml2024 index: run the "
                         "reindex section first (it builds it)")
    rows = list(source.iter_all(include=("documents", "metadatas", "embeddings")))
    cache_file = CACHE / f"synthetic-50k-{vectors}.npz"
    if not SYNTHETIC.exists() or not cache_file.exists():
        rng = random.Random(50_000)
        out, texts, vecs = [], [], []
        for i in range(n):
            a, b = rng.sample(range(len(rows)), 2)
            sents = []
            for j in (a, b):
                cid, doc, meta, vec = rows[j]
                start = int(meta.get("start", 0))
                sents += [(doc[s - start : e - start], j) for s, e in json.loads(meta["sents"])]
            rng.shuffle(sents)
            picked, used = [], 0
            for sent, j in sents:
                t = tokens.count(sent)
                if used + t > 190:
                    continue
                picked.append((sent, j))
                used += t
            if not picked:
                picked = [(tokens.truncate(sents[0][0], 190), sents[0][1])]
            text = " ".join(s for s, _ in picked).strip()
            weight = {}
            for s, j in picked:
                weight[j] = weight.get(j, 0) + len(s)
            v = sum(w * rows[j][3] for j, w in weight.items())
            vecs.append(v / max(np.linalg.norm(v), 1e-12))
            texts.append(text)
            out.append(json.dumps({"id": f"synth-{i:05d}", "title": f"Synthetic passage {i}",
                                   "abstract": text}))
        SYNTHETIC.write_text("\n".join(out) + "\n", encoding="utf-8")
        if vectors == "model":
            vecs = list(_model_vectors(model, texts))
        np.savez(cache_file, texts=np.array(texts, dtype=object), vectors=np.stack(vecs))
    data = np.load(cache_file, allow_pickle=True)
    # Keyed by what build_index embeds: the title, then the (single) chunk.
    cached = {indexed_text(f"Synthetic passage {i}", t): v
              for i, (t, v) in enumerate(zip(data["texts"].tolist(), data["vectors"]))}
    build_index(settings, _Cached(model, cached), store_for(settings), str(SYNTHETIC))
    return SYNTHETIC


def _model_vectors(model, texts: list[str], step: int = 512):
    """MiniLM vectors of `texts`, saved every `step` so an interrupted run resumes."""
    part = CACHE / "synthetic-50k-model-partial.npy"
    done = np.load(part) if part.exists() else np.zeros((0, model.dim), np.float32)
    for i in range(len(done), len(texts), step):
        done = np.concatenate([done, model.embed(texts[i : i + step])])
        np.save(part, done)
        print(f"  synthetic vectors: {len(done)}/{len(texts)}", flush=True)
    return done


class _Cached:
    """MiniLM with the synthetic corpus's vectors precomputed (the real model for the rest)."""

    def __init__(self, model, vectors: dict):
        self.model, self.vectors = model, vectors
        self.name, self.dim = model.name, model.dim

    def embed(self, texts):
        missing = [t for t in texts if t not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, self.model.embed(missing)))
        return np.stack([self.vectors[t] for t in texts])


def run(report: Report, scales: tuple[str, ...] = ("seeds", "icml2024"),
        synthetic_vectors: str = "mix") -> None:
    from .ingest import ensure_bench_index

    qs = questions()
    for corpus in scales:
        if corpus == "50k":
            path = build_synthetic(vectors=synthetic_vectors)
            run_scale(report, str(path), f"50k ({synthetic_vectors} vectors)", qs)
        else:
            ensure_bench_index(corpus)
            run_scale(report, corpus, corpus, qs)
