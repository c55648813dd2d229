"""The row cache: a question's record is reused when nothing that could change it has changed.

The key of a configuration is a hash of every setting that affects answers (not the data
directory or UI ports), the index generation (it changes whenever the indexed chunks do), a
hash of the `rag/` source and fitted files and of `eval/observe.py` (a code change, a refitted
gate or retrained weights invalidate everything), the
LLM endpoint for LLM generators, and whether answers and the judge were requested. Records live
in `<RAG_HOME>/eval-cache/<key>.jsonl`, one line per question (keyed by its text), appended as
they are computed so an interrupted run keeps its work. Metrics are not cached: they are
recomputed from records on every run.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from rag.settings import Settings

IGNORED = ("home", "ui_host", "ui_port", "ui_concurrency")
FITTED = (".py", ".json", ".safetensors")  # source, and what a refit or retraining changes


@functools.lru_cache(maxsize=1)
def code_hash() -> str:
    """A hash of what produces records: the library's source and fitted files (gates, the
    reader model's weights; without the UI, evals and benchmarks, which an installed package
    holds inside it) and eval/observe.py."""
    import rag

    library = Path(rag.__file__).resolve().parent
    edges = [library / name for name in ("ui", "eval", "bench", "seeds")]
    files = sorted(p for p in library.rglob("*") if p.suffix in FITTED and p.is_file()
                   and not any(e in p.parents for e in edges))
    h = hashlib.sha1()
    for path in files:
        h.update(str(path.relative_to(library)).encode())
        h.update(path.read_bytes())
    observe = Path(__file__).resolve().parent / "observe.py"
    h.update(b"observe.py" + observe.read_bytes())
    return h.hexdigest()[:12]


def config_key(settings: Settings, generation: str, generator: str, with_answer: bool,
               judge: str = "") -> str:
    values = {k: v for k, v in dataclasses.asdict(settings).items() if k not in IGNORED}
    parts = {"settings": values, "generation": generation, "code": code_hash(),
             "generator": generator, "answers": with_answer, "judge": judge,
             "endpoint": os.environ.get("OPENAI_BASE_URL", "") if generator != "extractive"
             else ""}
    return hashlib.sha1(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def question_key(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:16]


class RowCache:
    """Records of one configuration, loaded once and appended to as questions are run."""

    def __init__(self, folder: Path | None, key: str):
        self.path = folder / f"{key}.jsonl" if folder else None
        self.records: dict[str, dict[str, Any]] = {}
        if self.path and self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    item = json.loads(line)
                    self.records[item["q"]] = item["record"]
                except (ValueError, KeyError, TypeError):
                    continue  # a torn last line from an interrupted run: recompute it

    def get(self, question: str) -> dict[str, Any] | None:
        return self.records.get(question_key(question))

    def put(self, question: str, record: dict[str, Any]) -> None:
        key = question_key(question)
        self.records[key] = record
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"q": key, "record": record}, ensure_ascii=False) + "\n")
