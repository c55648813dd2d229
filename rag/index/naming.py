"""Names and places of an index.

A collection is named after its corpus and embedder (`collection_name`); what is derived from it
(the manifest, the BM25 snapshot) lives in a folder per store and collection (`index_dir`).

Layout under the data directory (`RAG_HOME`):
    chroma/                        the embedded Chroma store
    indexes/<store>/<collection>/  manifest.json, snapshot-<generation>/ (chunks.json, bm25/)
    uploads/<corpus>/              documents users added to a corpus (`ingest.corpus.uploads_dir`)
    index.lock                     held while an index is written (`locks.py`)
"""

from __future__ import annotations

from pathlib import Path

from ..ingest.corpus import corpus_key
from ..models.embedders import Embedder
from ..settings import Settings
from ..text import slug


def collection_name(corpus: str, embedder: Embedder) -> str:
    return f"{corpus_key(corpus)}--{slug(embedder.name)}"[:200]


def index_dir(settings: Settings, name: str) -> Path:
    where = "local" if not settings.chroma_url else slug(settings.chroma_url)
    return settings.home_path / "indexes" / where / name
