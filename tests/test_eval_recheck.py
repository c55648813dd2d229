"""Checking an earlier run's model answers again, and labelling them for the focus fit, read the
rows `rag eval` writes; neither asks a model."""

from __future__ import annotations

from rag.answer.prompts import NOTICE_FALLBACK
from rag.eval.fit_focus import labelled
from rag.eval.recheck import model_written, recheck
from rag.types import Paper

ASKED = Paper(id="p-asked", title="Decentralized Nonsmooth Nonconvex Stochastic Optimization",
              text="We give the first finite-time guarantee for decentralized nonsmooth "
                   "nonconvex stochastic optimization, with an algorithm called ME-DOL.")
OTHER = Paper(id="p-other", title="Faster Adaptive Decentralized Learning Algorithms",
              text="We propose AdaMDOS and AdaMDOF for decentralized nonconvex stochastic and "
                   "finite-sum optimization. AdaMDOF is the first adaptive decentralized "
                   "algorithm for nonconvex finite-sum optimization.")
BY_ID = {p.id: p for p in (ASKED, OTHER)}
QUESTION = ("Which algorithm gives the first finite-time guarantee for decentralized nonsmooth "
            "nonconvex stochastic optimization?")


def row(answer: str, cited: str, **extra) -> dict:
    return {"id": "q1", "question": QUESTION, "answerable": True, "gold": ["p-asked"],
            "generator": "local", "abstained": False, "notices": [], "answer": answer,
            "passages": ["p-other", "p-asked"],
            "citations": [{"n": 1, "paper_id": cited}],
            "sentences": [{"text": answer, "citations": [1], "supported": True}], **extra}


WRONG = row("The first finite-time guarantee for decentralized nonsmooth nonconvex stochastic "
            "optimization is given by AdaMDOF [1].", "p-other")
RIGHT = row("The first finite-time guarantee for decentralized nonsmooth nonconvex stochastic "
            "optimization is given by ME-DOL [1].", "p-asked")


def test_an_answer_from_the_wrong_paper_would_now_fall_back():
    assert recheck(WRONG, BY_ID, None) == ([WRONG["answer"]], True)
    assert recheck(RIGHT, BY_ID, None) == ([], False)


def test_only_answers_the_model_wrote_are_checked_again():
    assert model_written(RIGHT)
    fallback = NOTICE_FALLBACK.format(generator="local", reason="no citations")
    assert not model_written(row("x [1].", "p-asked", notices=[fallback]))
    assert not model_written(row("x [1].", "p-asked", generator="extractive"))
    assert not model_written(row("x [1].", "p-asked", abstained=True))


def test_sentences_are_labelled_by_whether_they_cite_the_gold_paper():
    (wrong, right) = labelled([WRONG, RIGHT], BY_ID, None)
    assert wrong[1] is False and right[1] is True
    assert wrong[0] < right[0] == 1.0
