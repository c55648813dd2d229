"""Reading a table's cells: for each paper (a row) and each asked attribute (a column), the
sentence of its abstract that states the value, or none.

A column becomes one question asked of every paper (`column_question`: "What memory reduction
does this paper report?"); the setting `reader`'s sentence scorer (`sentences.py`) scores every
sentence of every row's abstract for it, in one batch per column, plus a weight of the rules'
overlap with the column's words; the best sentence is the cell's evidence when its score
clears the cell gate (`cells.json`, chosen on the cell benchmark's dev split by `python -m
rag.eval.tables fit`), else the cell is "not stated". The same rule as single answers: a cell
never quotes a sentence that does not state its value.

A scorer with no fitted cell threshold (a registered one) uses the rules' overlap floor: the
sentence must hold one of the column's words.

Example:
    read_cells(["memory reduction"], [kv_paper], scorer)
    -> [[Reading(column="memory reduction", sentence=3, score=0.91, stated=True)]]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..lexicon import COLUMN_QUESTIONS
from ..text import content_terms
from ..types import Passage
from .sentences import RulesScorer, SentenceScorer

CELL_GATE_FILE = Path(__file__).with_name("cells.json")  # fitted by rag.eval.tables fit
TEMPLATE = "What is the {column} of this work?"  # chosen on dev among eval/tables.TEMPLATES


@dataclass(frozen=True)
class Reading:
    """One cell as read: the best sentence (its position in `sentence_texts()`, -1 when the
    abstract has none), its score, and whether it clears the gate."""

    column: str
    sentence: int
    score: float
    stated: bool


@dataclass(frozen=True)
class CellGate:
    """How cells are read for one scorer: the column question's template, the weight of the
    rules' overlap with the column's words beside the scorer's score, and the threshold that
    score must clear (None: no gate fitted; the sentence must then hold a column word)."""

    template: str = TEMPLATE
    rules_weight: float = 0.0
    threshold: float | None = None


def cell_gate(reader: str) -> CellGate:
    """The cell gate fitted for the scorer `reader` (cells.json), or the unfitted default."""
    if CELL_GATE_FILE.is_file():
        fitted = json.loads(CELL_GATE_FILE.read_text(encoding="utf-8")).get(reader)
        if fitted:
            return CellGate(fitted["template"], float(fitted["rules_weight"]),
                            float(fitted["threshold"]))
    return CellGate()


def column_question(column: str, template: str = TEMPLATE) -> str:
    """The question a column asks of each paper: the lexicon's for the attributes compared
    most (`COLUMN_QUESTIONS`), else the template. Examples: "benchmarks" -> "Which benchmarks is
    it evaluated on?"; "privacy budget" -> "What is the privacy budget of this work?"."""
    words = set(column.lower().replace("-", " ").split())
    for key, question in COLUMN_QUESTIONS:
        if all(any(w.startswith(k) for w in words) for k in key.split()):
            return question
    return template.format(column=column.strip())


def cell_scores(column: str, papers: list[Passage], scorer: SentenceScorer,
                gate: CellGate) -> list[list[float]]:
    """Each sentence's score for the column: the scorer's for the column question, plus the
    rules' overlap with the column's own words times `gate.rules_weight`."""
    scores = scorer.score(column_question(column, gate.template), papers)
    if gate.rules_weight:
        overlap = RulesScorer(None).score(column, papers)
        scores = [[a + gate.rules_weight * b for a, b in zip(s, o)]
                  for s, o in zip(scores, overlap)]
    return scores


def read_cells(columns: list[str], papers: list[Passage], scorer: SentenceScorer,
               gate: CellGate = CellGate()) -> list[list[Reading]]:
    """One row per paper, one `Reading` per column, in order (module doc)."""
    rows: list[list[Reading]] = [[] for _ in papers]
    for column in columns:
        words = content_terms(column)
        for i, scores in enumerate(cell_scores(column, papers, scorer, gate)):
            sentences = papers[i].sentence_texts()
            if not scores:
                rows[i].append(Reading(column, -1, 0.0, False))
                continue
            best = max(range(len(scores)), key=lambda j: (scores[j], -j))
            if gate.threshold is None:  # no fitted gate: the sentence must hold a column word
                stated = bool(words & content_terms(sentences[best][2]))
            else:
                stated = scores[best] >= gate.threshold
            rows[i].append(Reading(column, best, float(scores[best]), stated))
    return rows
