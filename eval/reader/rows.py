"""A reader-training row, and the checks every row passes before it is kept.

A row is one question about one training paper:

    {"paper_id": "icml2024-poster-1", "question": "How many tasks does Spider handle?",
     "kind": "number", "answerable": true, "sentences": [2], "span": "8 different",
     "writer": "team:writer-3"}

`sentences` numbers the abstract's sentences that state the answer (the numbering of
`papers.sentences`), `span` is the short answer, copied exactly from one of them. A near-miss
row (`answerable: false`) asks something plausible about the paper that its abstract does not
state: no sentences, no span. `writer` says who wrote it: `team:...` (written by hand) or
`local:<model>` (the local model).

`problems(row, paper)` lists what is wrong with a row, as the question bank's validators do;
an empty list keeps it.
"""

from __future__ import annotations

from rag.text import content_terms

PARAPHRASE_MAX_SHARED = 2  # a paraphrase shares at most this many content words with its answer

KINDS = ("number", "result", "method", "dataset", "setting", "comparison", "paraphrase",
         "definition", "purpose", "other")
FIELDS = ("paper_id", "question", "kind", "answerable", "sentences", "span", "writer")


def problems(row: dict, paper: dict | None) -> list[str]:
    """What keeps `row` out of the data; `paper` is its batch row (None: unknown paper)."""
    out = [f"missing {f}" for f in FIELDS if f not in row]
    if out:
        return out
    if paper is None:
        return [f"paper {row['paper_id']} is not a training paper"]
    q = row["question"]
    if not isinstance(q, str) or len(q.split()) < 4 or not q.rstrip().endswith("?"):
        out.append("question must be a sentence of 4+ words ending in '?'")
    if row["kind"] not in KINDS:
        out.append(f"kind {row['kind']!r} is not one of {', '.join(KINDS)}")
    if not str(row["writer"]).startswith(("team:", "local:")):
        out.append("writer must start with 'team:' or 'local:'")
    n = len(paper["sentences"])
    if row["answerable"] is True:
        idx = row["sentences"]
        if not idx or not all(isinstance(i, int) and 0 <= i < n for i in idx):
            out.append(f"sentences must be 1+ numbers in 0..{n - 1}")
        elif not row["span"] or not any(row["span"] in paper["sentences"][i] for i in idx):
            out.append("span must be copied exactly from one of its sentences")
        elif len(row["span"]) > 160:
            out.append("span must be short (at most 160 characters)")
    elif row["answerable"] is False:
        if row["sentences"] or row["span"]:
            out.append("a near-miss row has no sentences and no span")
    else:
        out.append("answerable must be true or false")
    return out


def shared_terms(row: dict, paper: dict) -> int:
    """How many content words (`rag.text.content_terms`: stemmed, stopwords out) an answerable
    row's question shares with the sentence(s) that answer it.
    Example: "How large is WMDP?" vs "WMDP has 3,668 questions." -> 1 ("wmdp")."""
    answer = " ".join(paper["sentences"][i] for i in row["sentences"])
    return len(content_terms(row["question"]) & content_terms(answer))


def is_paraphrase(row: dict, paper: dict) -> bool:
    """An answerable row worded away from its answer: at most two shared content words (the
    test issue 28 sets; a row's `kind` says what the writer meant, this says what it is)."""
    return row["answerable"] is True and shared_terms(row, paper) <= PARAPHRASE_MAX_SHARED
