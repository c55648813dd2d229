"""Split the question bank once into train / dev / test, by paper.

    python eval/datasets/bank/split.py     # bank/*.jsonl -> eval/datasets/icml2024-{train,dev,test}.jsonl

Each question is anchored to one key: its paper (the near-miss paper, or the gold paper of a
one-paper question; for a several-paper question the gold paper whose hash is smallest), the
person of an author question, or its own id for an off-topic one. The key's SHA-1 decides the
split (50% train, 20% dev, 30% test), so all questions about one paper land in the same split,
and adding questions never moves old ones. A list question with noisy variants keeps its
variants in its own split (they share its anchor).

Fit and tune on train, choose on dev, report test (eval/README.md).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = ("answerable.jsonl", "unanswerable.jsonl", "metadata.jsonl", "written-dev.jsonl",
           "written-test.jsonl")  # written-*: questions added on the held-out papers (issue 28)
SPLITS = (("train", 50), ("dev", 20), ("test", 30))


def _h(key: str) -> int:
    return int(hashlib.sha1(key.encode("utf-8")).hexdigest(), 16)


def anchor(q: dict) -> str:
    if q.get("person"):
        return "person:" + q["person"]
    if q.get("topic") and q["type"] == "list":
        return "topic:" + q["topic"]
    if q.get("near_paper"):
        return q["near_paper"]
    if q.get("gold"):
        return min(q["gold"], key=_h)
    return "question:" + q["id"]


def split_of(key: str) -> str:
    bucket = _h(key) % 100
    for name, share in SPLITS:
        if bucket < share:
            return name
        bucket -= share
    raise AssertionError("shares must add up to 100")


def main() -> None:
    out: dict[str, list[dict]] = {name: [] for name, _ in SPLITS}
    for source in SOURCES:
        path = HERE / source
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                out[split_of(anchor(q))].append(q)
    for name, questions in out.items():
        target = HERE.parent / f"icml2024-{name}.jsonl"
        target.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions),
                          encoding="utf-8")
        kinds: dict[str, int] = {}
        for q in questions:
            kinds[q["type"]] = kinds.get(q["type"], 0) + 1
        print(f"{target.name}: {len(questions)} questions {kinds}")


if __name__ == "__main__":
    main()
