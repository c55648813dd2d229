"""After a load run on a shared Chroma server: what a fresh machine finds in the store.

Every paper of the corpus exactly once and complete (no orphan chunk, no paper outside the
corpus), the uploads the writer left present and those it removed absent, the index not left
half-written, and the BM25 side agreeing with Chroma: the one rebuilt here from the store, and
the snapshot each `rag serve` saved for the final generation. `lost` lists every problem.

Example: check_store(url, "seeds", work, homes, ["doc-1a2b"], ["doc-9f8e"])["lost"] -> []
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path


def check_store(url: str, corpus: str, work: Path, homes: list[Path], uploads: list[str],
                removed: list[str]) -> dict:
    """What a fresh machine finds in the store after the run; `lost` lists every problem."""
    from rag import factory
    from rag.index.naming import index_dir
    from rag.index.snapshot import load_snapshot
    from rag.index.sources import UPLOAD, origin
    from rag.ingest.corpus import load_corpus
    from rag.settings import Settings

    settings = Settings.load(home=str(work / "check"), chroma_url=url, corpus=corpus, env={})
    index = factory.index(settings, corpus)
    rows = list(index.collection.iter_all(include=("documents", "metadatas")))
    per = Counter(m.get("paper_id") for _, _, m, _ in rows)
    lost = [f"{cid}: chunk of an incomplete or duplicated paper" for cid, _, m, _ in rows
            if per[m.get("paper_id")] != m.get("n_chunks")
            or cid != f"{m.get('paper_id')}#{m.get('chunk')}"]
    stored_corpus = {m["paper_id"] for _, _, m, _ in rows if origin(m) != UPLOAD}
    stored_uploads = {m["paper_id"] for _, _, m, _ in rows if origin(m) == UPLOAD}
    wanted = {p.id for p in load_corpus(corpus).papers}
    lost += [f"corpus paper {pid} missing" for pid in sorted(wanted - stored_corpus)]
    lost += [f"{pid} stored but not in the corpus" for pid in sorted(stored_corpus - wanted)]
    lost += [f"upload {pid} missing" for pid in uploads if pid not in stored_uploads]
    lost += [f"removed upload {pid} is back" for pid in removed if pid in stored_uploads]
    lost += [f"upload {pid} unexpected" for pid in sorted(stored_uploads - set(uploads))]
    store = sorted((cid, doc) for cid, doc, _, _ in rows)
    snap = index.snapshot()
    if sorted(zip(snap.ids, snap.texts)) != store:
        lost.append("the BM25 side rebuilt from the store disagrees with Chroma")
    if index.generation.startswith("dirty"):
        lost.append(f"the index was left half-written ({index.generation})")
    saved = 0
    for home in homes:
        s = Settings.load(home=str(home), chroma_url=url, corpus=corpus, env={})
        old = load_snapshot(index_dir(s, index.name), index.generation)
        if old is not None:
            saved += 1
            if sorted(zip(old.ids, old.texts)) != store:
                lost.append(f"the BM25 snapshot saved under {home} disagrees with Chroma")
    return {"papers": len(per), "chunks": len(rows), "corpus_papers": len(stored_corpus),
            "uploads": sorted(stored_uploads), "server_snapshots_checked": saved, "lost": lost}
