"""Check the answers of an earlier `rag eval` run again with today's support check.

    python -m rag.eval.recheck RUN/rows.jsonl [--corpus icml2024]

A language model's answers cost minutes to regenerate; the check that judges them costs
milliseconds. For every answer the model wrote itself (not abstentions, not extractive
fallbacks), the answer text is checked again against the whole abstracts it cites, with the
question, the papers it was shown and the embedder, as `ask()` checks it (`check_support`,
focus and role checks included). The script lists the sentences
that were supported then and are not now, and the answers that would now fall back to the
extractive answer because none of their sentences is supported.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rag import papers
from rag.answer.prompts import NOTICE_FALLBACK
from rag.check.citations import check_citations
from rag.check.support import check_support
from rag.factory import embedder as embedder_for
from rag.factory import idf as idf_table
from rag.settings import Settings
from rag.types import Passage

_FALLBACK = NOTICE_FALLBACK.split("{")[0]


def model_written(row: dict) -> bool:
    return (row.get("generator") not in (None, "extractive", "metadata")
            and not row.get("abstained")
            and not any(n.startswith(_FALLBACK) for n in row.get("notices", [])))


def recheck(row: dict, by_id: dict, idf, embedder=None) -> tuple[list[str], bool]:
    """(sentences supported before and not now, whether the answer would now fall back)."""
    cited = [c["paper_id"] for c in sorted(row["citations"], key=lambda c: c["n"])]
    passages = [Passage(chunk_id=p, paper_id=p, title=by_id[p].title, text=by_id[p].text,
                        score=1.0, authors=by_id[p].authors) for p in cited if p in by_id]
    checked = check_citations(row["answer"], passages)
    shown = [Passage(chunk_id=p, paper_id=p, title=by_id[p].title, text=by_id[p].text, score=1.0)
             for p in row.get("passages", []) if p in by_id]
    check_support(checked, embedder, idf, row.get("query") or row["question"], shown)
    before = {s["text"]: s["supported"] for s in row.get("sentences", [])}
    newly = [s.text for s in checked.sentences if s.citations and not s.supported
             and before.get(s.text, False)]
    return newly, not any(s.supported for s in checked.sentences if s.citations)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rows", type=Path)
    parser.add_argument("--corpus", default="icml2024")
    args = parser.parse_args(argv)
    settings = Settings.load(corpus=args.corpus)
    by_id = {p.id: p for p in papers(args.corpus, settings)}
    idf, embedder = idf_table(settings), embedder_for(settings)  # as compose.finish checks
    rows = [json.loads(line) for line in args.rows.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    written = [r for r in rows if model_written(r)]
    falls = 0
    for row in written:
        newly, fall = recheck(row, by_id, idf, embedder)
        falls += fall
        for text in newly:
            print(f"{row['id']} ({'answerable' if row.get('answerable') else 'unanswerable'}"
                  f"{', falls back' if fall else ''}): {text}")
    print(f"{len(written)} answers written by the model; {falls} would now fall back")
    return 0


if __name__ == "__main__":
    sys.exit(main())
