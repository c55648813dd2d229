"""Prebuilt xllamacpp vs llama-cpp-python compiled for this CPU: prompt and generation speed.

Issue 17 item 1's measurement. The `local` backend runs llama.cpp from the prebuilt xllamacpp
wheel, whose CPU build stops at AVX2; llama-cpp-python built from source with
`CMAKE_ARGS="-DGGML_NATIVE=ON"` uses whatever this CPU has (AVX-512, VNNI, BF16). This script
loads one GGUF with one backend and answers the same fixed prompts with both, one at a time:

    .venv/bin/python bench/native_llama.py --model X.gguf --backend xllamacpp --threads 2
    /tmp/native-venv/bin/python bench/native_llama.py --model X.gguf --backend native --threads 2

Prompts (`--prompts N`, at most 10): a constant system prompt plus a user message of two whole
ICML 2024 abstracts from seeds/icml2024.jsonl (the first consecutive pairs, in file order, of
240-290 words together) and a question: 449-572 prompt tokens with the system prompt and the
chat template (Qwen2.5). Nothing is imported from `rag`.
Settings are the same for both: n_ctx 4096 (one sequence), `--threads` for prompt and
generation, n_batch 2048 / n_ubatch 512 (the server's defaults), flash attention on,
temperature 0, `--max-tokens` (64) generated, and no prefix reuse between prompts (xllamacpp:
`cache_prompt: false`; native: `Llama.reset()`).
One untimed warm-up request comes first. Only the requested backend is imported.

Measured per prompt, printed as one JSON line of medians (per-prompt lines go to stderr):
- prompt_tok_s, gen_tok_s: llama.cpp's own timings (xllamacpp: the server's `timings`;
  native: `llama_perf_context`), i.e. prompt tokens / prompt-eval time and generated tokens /
  generation time;
- ttft_s: wall time from the request to the first streamed content token (templating,
  tokenizing, prompt evaluation and the first token), and gen_tok_s_wall: (tokens - 1) / time
  from the first to the last streamed token.
The model may stop before `--max-tokens` (end of turn); gen_tokens reports the median count.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

SEEDS = Path(__file__).resolve().parent.parent / "seeds" / "icml2024.jsonl"
SYSTEM = ("You are a research assistant for the ICML 2024 conference. Answer the question using "
          "only the paper abstracts given by the user. Name the paper each statement comes from, "
          "say so when the abstracts do not contain the answer, and do not invent details.")
QUESTIONS = [
    "What problem does the first paper address, and how does its method work?",
    "Which of these papers proposes a new training algorithm, and what is its main idea?",
    "Compare the experimental evidence the papers give for their claims.",
    "What assumptions do these works make, and where might they fail in practice?",
    "Summarize the main contribution of each paper in one or two sentences.",
    "Which paper would be most useful for someone working on large language models, and why?",
    "What datasets or benchmarks are mentioned, and what results are reported on them?",
    "Explain the theoretical guarantees claimed in these abstracts.",
    "How do the approaches described here differ from prior work, according to the authors?",
    "What limitations or open questions do the authors acknowledge?",
]


def prompts(n: int) -> list[list[dict]]:
    """n chat prompts, deterministic: two whole abstracts each (240-290 words), in file order."""
    records = [json.loads(line) for line in SEEDS.read_text(encoding="utf-8").splitlines()
               if line.strip()]
    out, i = [], 0
    while len(out) < n:  # the next two consecutive abstracts of 240-290 words together
        a, b = records[i], records[i + 1]
        i += 1
        if not 240 <= len(a["abstract"].split()) + len(b["abstract"].split()) <= 290:
            continue
        i += 1
        parts = [f"[{k + 1}] {r['title']}\n{r['abstract']}" for k, r in enumerate((a, b))]
        user = ("Abstracts:\n\n" + "\n\n".join(parts) + f"\n\nQuestion: {QUESTIONS[len(out)]}")
        out.append([{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}])
    return out


class Xllamacpp:
    """llama.cpp's server in-process, as rag/models/llama_server.py runs it (one slot)."""

    def __init__(self, model: str, threads: int, n_ctx: int):
        import xllamacpp

        p = xllamacpp.CommonParams()
        p.model.path = model
        p.n_ctx, p.n_parallel, p.n_batch, p.n_ubatch = n_ctx, 1, 2048, 512
        p.flash_attn_type = xllamacpp.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_ENABLED
        p.cpuparams.n_threads = p.cpuparams_batch.n_threads = threads
        p.verbosity = 1
        self.server = xllamacpp.Server(p)
        self.info = {"version": xllamacpp.__version__, "system": xllamacpp.get_system_info()}

    def run(self, messages: list[dict], max_tokens: int) -> dict:
        stamps, last = [], {}

        def on_chunk(chunk) -> bool:
            for c in chunk.get("choices") or []:
                if (c.get("delta") or {}).get("content"):
                    stamps.append(time.perf_counter())
            if "timings" in chunk:
                last.update(chunk["timings"])
            return False  # keep streaming

        t0 = time.perf_counter()
        self.server.handle_chat_completions(
            {"messages": messages, "max_tokens": max_tokens, "temperature": 0, "stream": True,
             "cache_prompt": False, "stream_options": {"include_usage": True}}, on_chunk)
        return {"t0": t0, "stamps": stamps, "prompt_n": last["prompt_n"],
                "prompt_ms": last["prompt_ms"], "gen_n": last["predicted_n"],
                "gen_ms": last["predicted_ms"]}


class Native:
    """llama-cpp-python (built with GGML_NATIVE=ON), its chat completion, streamed."""

    def __init__(self, model: str, threads: int, n_ctx: int):
        import llama_cpp

        self.lib = llama_cpp
        self.llm = llama_cpp.Llama(model_path=model, n_ctx=n_ctx, n_batch=2048, n_ubatch=512,
                                   n_threads=threads, n_threads_batch=threads, flash_attn=True,
                                   verbose=False)
        system = llama_cpp.llama_print_system_info()
        self.info = {"version": llama_cpp.__version__,
                     "system": system.decode() if isinstance(system, bytes) else str(system)}

    def run(self, messages: list[dict], max_tokens: int) -> dict:
        ctx = self.llm._ctx.ctx
        self.llm.reset()  # no prefix reuse from the previous prompt
        self.lib.llama_perf_context_reset(ctx)
        stamps = []
        t0 = time.perf_counter()
        for chunk in self.llm.create_chat_completion(messages, max_tokens=max_tokens,
                                                     temperature=0.0, stream=True):
            if (chunk["choices"][0].get("delta") or {}).get("content"):
                stamps.append(time.perf_counter())
        perf = self.lib.llama_perf_context(ctx)
        return {"t0": t0, "stamps": stamps, "prompt_n": perf.n_p_eval,
                "prompt_ms": perf.t_p_eval_ms, "gen_n": perf.n_eval, "gen_ms": perf.t_eval_ms}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="the GGUF file")
    ap.add_argument("--backend", required=True, choices=["xllamacpp", "native"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompts", type=int, default=10, help="1-10")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--n-ctx", type=int, default=4096)
    args = ap.parse_args(argv)
    chats = prompts(max(1, min(args.prompts, len(QUESTIONS))))
    load = [os.getloadavg()[0]]
    t_load = time.perf_counter()
    engine = (Xllamacpp if args.backend == "xllamacpp" else Native)(args.model, args.threads,
                                                                   args.n_ctx)
    load_s = time.perf_counter() - t_load
    engine.run([{"role": "user", "content": "Say hi."}], 4)  # warm-up, untimed
    rows = []
    for i, chat in enumerate(chats):
        r = engine.run(chat, args.max_tokens)
        s = r["stamps"]
        row = {"i": i, "prompt_tokens": r["prompt_n"], "gen_tokens": r["gen_n"],
               "prompt_tok_s": r["prompt_n"] / r["prompt_ms"] * 1000,
               "gen_tok_s": r["gen_n"] / r["gen_ms"] * 1000 if r["gen_ms"] else None,
               "ttft_s": s[0] - r["t0"] if s else None,
               "gen_tok_s_wall": (len(s) - 1) / (s[-1] - s[0]) if len(s) > 1 else None,
               "load1": os.getloadavg()[0]}
        load.append(row["load1"])
        rows.append(row)
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}),
              file=sys.stderr, flush=True)

    def med(key):
        vals = [r[key] for r in rows if r[key] is not None]
        return round(statistics.median(vals), 3) if vals else None

    print(json.dumps({
        "backend": args.backend, "model": Path(args.model).name, "threads": args.threads,
        "n_ctx": args.n_ctx, "prompts": len(rows), "max_tokens": args.max_tokens,
        "prompt_tokens": med("prompt_tokens"), "gen_tokens": med("gen_tokens"),
        "prompt_tok_s": med("prompt_tok_s"), "gen_tok_s": med("gen_tok_s"),
        "ttft_s": med("ttft_s"), "gen_tok_s_wall": med("gen_tok_s_wall"),
        "load_s": round(load_s, 2), "load1_min": min(load), "load1_max": max(load),
        **engine.info}), flush=True)
    os._exit(0)  # skip freeing the xllamacpp server: freeing can block (see llama_server.py)


if __name__ == "__main__":
    sys.exit(main())
