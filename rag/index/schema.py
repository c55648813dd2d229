"""What each chunk record in Chroma carries, and how it becomes a `Passage` again.

Every chunk's metadata holds its paper's id, content hash (`paper_hash`, which covers the chunk
settings and the embedded text's format) and chunk count, so `build_index` can tell complete,
changed and removed papers apart; its character span and sentence spans (JSON), so a citation can quote the exact
sentences; and the paper's title, authors, URL and source for display.

What is embedded and BM25-indexed for a chunk is `indexed_text(title, text)`, the title and the
chunk, so naming a paper finds it; Chroma's document stays the chunk text alone, so every
offset and citation is into the abstract itself.
"""

from __future__ import annotations

import hashlib
import json

from ..errors import EmbedderMismatchError
from ..models.embedders import Embedder
from ..settings import Settings
from ..types import Chunk, Paper, Passage
from .collection import Collection

SCHEMA = 1
# The format of `indexed_text`, part of every paper's hash: an index built with another format
# (1 was the chunk text alone) sees every paper as changed and re-embeds it, once.
EMBED_FORMAT = 2


def indexed_text(title: str, text: str) -> str:
    """The text embedded and BM25-indexed for a chunk: its paper's title, then the chunk.

    Example: ("Genie: Generative Interactive Environments", "We introduce Genie, ...") ->
    "Genie: Generative Interactive Environments. We introduce Genie, ..."; ("", "x") -> "x"."""
    return f"{title}. {text}" if title else text


def paper_hash(paper: Paper, settings: Settings) -> str:
    key = json.dumps([paper.title, paper.authors, paper.url, paper.source, paper.text,
                      settings.chunk_tokens, settings.chunk_overlap, EMBED_FORMAT],
                     ensure_ascii=False)
    return hashlib.sha1(key.encode()).hexdigest()


def chunk_meta(paper: Paper, chunk: Chunk, digest: str, n: int, origin: str = "corpus") -> dict:
    """`origin`: "corpus" or "upload" (`sources.py`: re-indexing a corpus keeps uploads)."""
    return {"paper_id": paper.id, "origin": origin, "paper_hash": digest, "n_chunks": n,
            "chunk": chunk.index,
            "start": chunk.start, "end": chunk.end, "sents": json.dumps(chunk.sentences),
            "title": paper.title, "authors": paper.authors, "url": paper.url,
            "source": paper.source}


def passage_from(cid: str, text: str, meta: dict, score: float) -> Passage:
    sents = meta.get("sents")
    return Passage(chunk_id=cid, paper_id=meta.get("paper_id", cid), title=meta.get("title", ""),
                   text=text, score=score, start=int(meta.get("start", 0)),
                   end=int(meta.get("end", len(text))),
                   sentences=tuple(tuple(s) for s in json.loads(sents)) if sents else (),
                   authors=meta.get("authors", ""), url=meta.get("url", ""),
                   source=meta.get("source", ""))


def check_embedder(col: Collection, embedder: Embedder, name: str) -> None:
    meta = col.meta
    if meta.get("embedder") != embedder.name or int(meta.get("dim", -1)) != embedder.dim:
        raise EmbedderMismatchError(
            f"index {name!r} holds vectors of {meta.get('embedder')} ({meta.get('dim')} dims), "
            f"not of the configured {embedder.name} ({embedder.dim} dims); rebuild it with "
            f"`rag index --rebuild` or configure the embedder it was built with")
