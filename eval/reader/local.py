"""Questions written by the local model, one sentence at a time, resumably.

    python -m rag.eval.reader local [--per-paper 3] [--limit N]

For each training paper (batches from the last one backwards, so the hand-written batches,
taken from the first one forwards, meet them only at the end), up to `per_paper` of its
sentences are chosen (those with a number first, then the longest; never the first sentence,
which usually states the field's background), and Qwen2.5-Coder-1.5B-Instruct, through the
in-process llama.cpp server, is asked for one question that the sentence answers, with the
answer copied from it. llama.cpp's JSON-schema constraint makes the reply parse; the row is
kept only when its span is in the sentence (rows.problems).

Resumable: a row is appended to eval/datasets/reader/local/batch-NNN.jsonl as soon as it is
written, and every (paper, sentence) tried, kept or not, to work/local-tried.txt; a new run
skips both. Stop it any time (Ctrl-C, or the session ending): at most one call is lost.
Progress goes to stderr as "batch 055: 12/40 papers, 31 rows kept, 8.4 s a call".
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

from rag.errors import RagError
from rag.settings import Settings

from .papers import DATASETS, WORK, eligible
from .rows import KINDS, problems

OUT = DATASETS / "reader" / "local"
TRIED = WORK / "local-tried.txt"
WRITER = "local:qwen2.5-coder-1.5b-instruct"
BATCH = 40  # papers per batch: the batching of `python -m rag.eval.reader papers`

SYSTEM = ("You write questions for a reading-comprehension test about machine-learning papers. "
          "Given a paper's title and ONE sentence of its abstract, write one specific question "
          "that this sentence answers, naming the paper's method or topic so the paper can be "
          "found, and copy the short answer (a few words) exactly from the sentence.")
SCHEMA = {
    "type": "object",
    "properties": {
        "question": {"type": "string", "maxLength": 200},
        "answer": {"type": "string", "maxLength": 120},
        "kind": {"type": "string", "enum": list(KINDS[:-1])},
    },
    "required": ["question", "answer", "kind"],
}


def chosen(sentences: list[str], per_paper: int) -> list[int]:
    """Which sentences to ask about: numbers first, then the longest; never sentence 0.

    Example: ["Intro.", "We get 9% more.", "A long method sentence here.", "Ok."], 2 -> [1, 2]
    """
    candidates = [i for i in range(1, len(sentences)) if len(sentences[i].split()) >= 6]
    candidates.sort(key=lambda i: (not re.search(r"\d", sentences[i]), -len(sentences[i]), i))
    return sorted(candidates[:per_paper])


def _client(settings: Settings):
    from rag.models.llama_server import serve
    from rag.models.llm_model import ensure_model
    from rag.models.openai_api import ChatClient

    served = serve(ensure_model(settings), "reader-writer", 2048, settings.local_threads,
                   warm=SYSTEM)
    return ChatClient(settings, model=served.alias, base_url=served.url, api_key=served.key,
                      retries=0)


def ask_model(client, title: str, sentence: str) -> dict:
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"Title: {title}\nSentence: {sentence}"}]
    text = client.complete(messages, 160, 0.0, response_format={
        "type": "json_schema", "json_schema": {"name": "question", "schema": SCHEMA}})
    return json.loads(text)


def as_row(paper: dict, index: int, reply: dict) -> dict:
    """The reply as a training row; a span the model changed in case is taken as written."""
    sentence = paper["sentences"][index]
    span = str(reply.get("answer", "")).strip().strip(".")
    if span and span not in sentence:
        span = aligned(span, sentence) or span
    question = str(reply.get("question", "")).strip()
    return {"paper_id": paper["paper_id"], "question": question, "kind": reply.get("kind"),
            "answerable": True, "sentences": [index], "span": span, "writer": WRITER}


def aligned(span: str, sentence: str, least: float = 0.8) -> str | None:
    """The stretch of `sentence` the model meant by `span` when it did not copy it exactly:
    the window of words that holds at least `least` of the span's words, best first.

    Example: "optimize a loss", "We Optimize a loss here." -> "Optimize a loss"
    """
    words = [(m.start(), m.end(), m.group().lower().strip(".,;:()")) for m in
             re.finditer(r"\S+", sentence)]
    wanted = [w.lower().strip(".,;:()") for w in span.split()]
    best, found = 0.0, None
    for size in range(max(1, len(wanted) - 2), len(wanted) + 3):
        for i in range(0, len(words) - size + 1):
            window = words[i : i + size]
            have = [w for _, _, w in window]
            hit = sum(1 for w in wanted if w in have) / len(wanted)
            score = hit - 0.01 * abs(size - len(wanted))
            if hit >= least and score > best:
                best, found = score, sentence[window[0][0] : window[-1][1]].rstrip(".,;:")
    return found


def _tried() -> set[str]:
    done = set(TRIED.read_text(encoding="utf-8").split()) if TRIED.exists() else set()
    for path in OUT.glob("batch-*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                done.add(f"{row['paper_id']}:{row['sentences'][0]}")
    return done


def run(per_paper: int = 3, limit: int | None = None, out=sys.stderr) -> int:
    """Write rows until every chosen sentence was tried (or `limit` calls); rows kept."""
    papers = eligible()
    batches = [papers[i : i + BATCH] for i in range(0, len(papers), BATCH)]
    tried, client, kept, calls, spent = _tried(), None, 0, 0, 0.0
    OUT.mkdir(parents=True, exist_ok=True)
    WORK.mkdir(parents=True, exist_ok=True)
    for number in range(len(batches) - 1, -1, -1):
        target = OUT / f"batch-{number:03d}.jsonl"
        for p_no, paper in enumerate(batches[number], start=1):
            for index in chosen(paper["sentences"], per_paper):
                key = f"{paper['paper_id']}:{index}"
                if key in tried:
                    continue
                if limit is not None and calls >= limit:
                    return kept
                client = client or _client(Settings.load())
                t0 = time.perf_counter()
                try:
                    row = as_row(paper, index, ask_model(client, paper["title"],
                                                         paper["sentences"][index]))
                except (RagError, json.JSONDecodeError) as exc:
                    row = None
                    print(f"{key}: no row ({str(exc)[:120]})", file=out, flush=True)
                calls += 1
                spent += time.perf_counter() - t0
                found = problems(row, paper) if row is not None else ["no reply"]
                if not found:
                    with target.open("a", encoding="utf-8") as f:
                        f.write(json.dumps(row, ensure_ascii=False) + "\n")
                    kept += 1
                elif row is not None:
                    print(f"{key}: dropped ({'; '.join(found)}): {row['question']!r} / "
                          f"{row['span']!r}", file=out, flush=True)
                with TRIED.open("a", encoding="utf-8") as f:
                    f.write(key + "\n")
                tried.add(key)
                print(f"batch {number:03d}: {p_no}/{len(batches[number])} papers, {kept} rows "
                      f"kept, {spent / calls:.1f} s a call", file=out, flush=True)
    return kept
