"""Check a file of written rows against its batch: `python -m rag.eval.reader.check_file OUT BATCH`.

Prints one line per bad row (line number and problems) and a count, with how many answerable
rows are paraphrases by `rows.is_paraphrase` (at most two content words shared with the answering
sentence); exit 1 when any is bad."""

from __future__ import annotations

import json
import sys

from .rows import is_paraphrase, problems


def main(argv: list[str]) -> int:
    out_path, batch_path = argv
    papers = {}
    for line in open(batch_path, encoding="utf-8"):
        if line.strip():
            p = json.loads(line)
            papers[p["paper_id"]] = p
    bad = total = answerable = paraphrases = near = 0
    per_paper: dict[str, int] = {}
    for no, line in enumerate(open(out_path, encoding="utf-8"), start=1):
        if not line.strip():
            continue
        total += 1
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            print(f"line {no}: not JSON ({exc})")
            bad += 1
            continue
        found = problems(row, papers.get(row.get("paper_id")))
        if found:
            bad += 1
            print(f"line {no}: {'; '.join(found)}")
        else:
            per_paper[row["paper_id"]] = per_paper.get(row["paper_id"], 0) + 1
            paper = papers[row["paper_id"]]
            answerable += row["answerable"] is True
            near += row["answerable"] is False
            paraphrases += is_paraphrase(row, paper)
    print(f"{total} rows, {bad} bad; {len(per_paper)} of {len(papers)} papers covered; "
          f"{answerable} answerable, {near} near-miss; {paraphrases} paraphrases by the "
          f"shared-word test ({paraphrases / max(total - bad, 1):.0%} of good rows)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
