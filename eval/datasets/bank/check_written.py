"""Check a file of new bank questions before it joins the bank:

    python eval/datasets/bank/check_written.py eval/datasets/bank/written-dev.jsonl dev

Every question must be about papers the bank already holds in SPLIT (dev or test: papers the
reader model never trains on), so adding it moves no paper between splits. Prints one line per
bad row and a count of what the split gains: twins (a single-gold answerable question whose key
facts can be cut from its abstract, `eval.twins.make_twin`), near-misses, and paraphrases (a
`paraphrase` question sharing at most two content words, `rag.text.content_terms`, with the
sentences that hold its key facts). Exit 1 when any row is bad.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from split import anchor, split_of  # noqa: E402  (this folder's split.py)

from rag.eval.twins import contains_fact, make_twin, normalise
from rag.ingest.chunking import split_sentences
from rag.text import content_terms

HERE = Path(__file__).resolve().parent
TYPES = ("fact", "paraphrase", "title", "multi", "near_miss")


def split_papers(split: str) -> set[str]:
    out: set[str] = set()
    for line in (HERE.parent / f"icml2024-{split}.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            out.update(q.get("gold") or [])
            if q.get("near_paper"):
                out.add(q["near_paper"])
    return out


def corpus() -> dict[str, dict]:
    path = HERE.parents[2] / "seeds" / "icml2024.jsonl"
    return {p["id"]: p for p in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def answer_sentences(paper: dict, facts: list[str]) -> list[str]:
    text = paper["abstract"]
    return [text[s:e] for s, e in split_sentences(text) if contains_fact(text[s:e], facts)]


def problems(q: dict, split: str, papers: dict, allowed: set[str]) -> list[str]:
    out = []
    for f in ("id", "question", "type", "gold", "answerable", "reference_answer", "key_facts",
              "near_paper"):
        if f not in q:
            out.append(f"missing {f}")
    if out:
        return out
    if q["type"] not in TYPES:
        out.append(f"type must be one of {TYPES}")
    if not q["question"].strip().endswith("?") and q["type"] != "near_miss":
        out.append("question should end with '?'")
    if q["answerable"]:
        if not q["gold"] or not set(q["gold"]) <= allowed:
            out.append(f"gold must be papers of the {split} split")
        if not q["key_facts"]:
            out.append("an answerable question needs key facts")
        texts = [normalise(papers[g]["title"] + " " + papers[g]["abstract"]) for g in q["gold"]
                 if g in papers]
        for fact in q["key_facts"]:
            if not any(normalise(fact) in t for t in texts):
                out.append(f"key fact {fact!r} is not verbatim in a gold abstract")
        if q["near_paper"] is not None:
            out.append("an answerable question has near_paper null")
    else:
        if q["gold"] or q["key_facts"]:
            out.append("an unanswerable question has no gold and no key facts")
        if q["near_paper"] not in allowed:
            out.append(f"near_paper must be a paper of the {split} split")
    if not out and split_of(anchor(q)) != split:
        out.append(f"this question would land in {split_of(anchor(q))}, not {split}")
    return out


def main(argv: list[str]) -> int:
    path, split = argv
    papers, allowed = corpus(), split_papers(split)
    old_ids = {json.loads(l)["id"] for src in ("answerable", "unanswerable", "metadata")
               for l in (HERE / f"{src}.jsonl").read_text(encoding="utf-8").splitlines()
               if l.strip()}
    seen: set[str] = set()
    bad = twins = near = para = total = 0
    for no, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        total += 1
        try:
            q = json.loads(line)
        except json.JSONDecodeError as exc:
            print(f"line {no}: not JSON ({exc})")
            bad += 1
            continue
        found = problems(q, split, papers, allowed)
        if q.get("id") in seen or q.get("id") in old_ids:
            found.append(f"id {q.get('id')} is used already")
        seen.add(q.get("id"))
        if found:
            bad += 1
            print(f"line {no}: {'; '.join(found)}")
            continue
        near += q["type"] == "near_miss"
        if q["answerable"] and len(q["gold"]) == 1:
            p = papers[q["gold"][0]]
            twins += make_twin(p["title"], p["abstract"], q["key_facts"]) is not None
            if q["type"] == "paraphrase":
                shared = content_terms(q["question"]) & content_terms(
                    " ".join(answer_sentences(p, q["key_facts"])))
                if len(shared) <= 2:
                    para += 1
                else:
                    print(f"line {no}: paraphrase shares {len(shared)} content words with its "
                          f"answer ({', '.join(sorted(shared))}); at most 2 count")
    print(f"{total} rows, {bad} bad; gains {twins} twins, {near} near-misses, "
          f"{para} paraphrases (<=2 shared words)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
