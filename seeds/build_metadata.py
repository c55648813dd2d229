"""Build `seeds/metadata.jsonl`: the title, authors and link of every seed abstract.

The seed documents hold abstracts only. Each paragraph is matched to its ICML 2024 poster in
`seeds/icml2024.jsonl` (a copy of `shared/data/icml2024.jsonl`) after lowercasing and collapsing
every run of non-alphanumeric characters, which matches all 93 paragraphs.

Run from the repository root: `python seeds/build_metadata.py`. The result is committed.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def _paragraphs(path: Path) -> list[str]:
    body = path.read_text(encoding="utf-8").split("\n", 1)[1]
    return [p.strip() for p in re.split(r"\n\s*\n", body) if p.strip()]


def main() -> int:
    posters = {}
    with open(HERE / "icml2024.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            posters[_norm(rec["abstract"])] = rec
    rows, missing = [], 0
    for path in sorted(HERE.glob("*.txt")):
        for i, para in enumerate(_paragraphs(path)):
            rec = posters.get(_norm(para))
            if rec is None:
                missing += 1
                print(f"unmatched: {path.name} paragraph {i + 1}", file=sys.stderr)
                continue
            rows.append({"file": path.name, "paragraph": i + 1, "id": rec["id"],
                         "title": rec["title"], "authors": rec["authors"], "url": rec["url"]})
    with open(HERE / "metadata.jsonl", "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"matched {len(rows)} paragraphs, {len({r['id'] for r in rows})} distinct papers, "
          f"{missing} unmatched")
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
