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
from rag.types import Paper, Passage

_FALLBACK = NOTICE_FALLBACK.split("{")[0]


def read_rows(paths: list[Path]) -> list[dict]:
    """The rows of `rag eval` runs (their rows.jsonl files), in order."""
    return [json.loads(line) for path in paths
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def model_written(row: dict) -> bool:
    """An answer the language model wrote: not an abstention, not an extractive fallback."""
    return (row.get("generator") not in (None, "extractive", "metadata")
            and not row.get("abstained")
            and not any(n.startswith(_FALLBACK) for n in row.get("notices", [])))


def as_passage(paper: Paper) -> Passage:
    """A whole abstract as the passage an answer cites or the model was shown."""
    return Passage(chunk_id=paper.id, paper_id=paper.id, title=paper.title, text=paper.text,
                   score=1.0, authors=paper.authors)


def recheck(row: dict, by_id: dict, idf, embedder=None) -> tuple[list[str], bool]:
    """(sentences supported before and not now, whether the answer would now fall back)."""
    cited = [c["paper_id"] for c in sorted(row["citations"], key=lambda c: c["n"])]
    checked = check_citations(row["answer"], [as_passage(by_id[p]) for p in cited if p in by_id])
    shown = [as_passage(by_id[p]) for p in row.get("passages", []) if p in by_id]
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
    idf, embedder = idf_table(settings), embedder_for(settings)  # as the engine checks
    rows = read_rows([args.rows])
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
