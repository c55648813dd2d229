"""The focus check: a sentence that restates the question must cite a paper that speaks of what
was asked, or it is unsupported however many of its words the cited abstract has."""

from __future__ import annotations

import numpy as np

from rag.check.citations import check_citations
from rag.check.focus import MIN_FOCUS, asked_terms, focus, off_focus
from rag.check.reply import output_problem
from rag.check.support import check_support
from rag.answer.prompts import REASON_UNSUPPORTED
from rag.text import content_terms
from rag.types import Passage

QUESTION = ("What's the name of the algorithm giving the first finite-time guarantee for "
            "decentralized nonsmooth nonconvex stochastic optimization?")
ASKED = Passage(  # the paper the question was written from (ICML 2024, poster 34120)
    chunk_id="a", paper_id="asked", score=1.0,
    title="An Online Optimization Perspective on First-Order and Zero-Order Decentralized "
          "Nonsmooth Nonconvex Stochastic Optimization",
    text="We present a novel algorithm, called Multi Epoch Decentralized Online Learning "
         "(ME-DOL), for which we establish the sample complexity in various settings. We "
         "establish the sample complexity of O(1/(delta eps^3)), which to the best of our "
         "knowledge is the first finite-time guarantee for decentralized nonsmooth nonconvex "
         "stochastic optimization in the first-order setting.")
NEIGHBOUR = Passage(  # retrieved beside it, about smooth problems (poster 34606)
    chunk_id="n", paper_id="neighbour", score=0.9,
    title="Faster Adaptive Decentralized Learning Algorithms",
    text="We propose a class of faster adaptive decentralized algorithms (i.e., AdaMDOS and "
         "AdaMDOF) for distributed nonconvex stochastic and finite-sum optimization, "
         "respectively. To the best of our knowledge, our AdaMDOF algorithm is the first "
         "adaptive decentralized algorithm for nonconvex finite-sum optimization.")
WRONG = ("The algorithm giving the first finite-time guarantee for decentralized nonsmooth "
         "nonconvex stochastic optimization is AdaMDOS and AdaMDOF [1].")


SHOWN = [NEIGHBOUR, ASKED]  # the passages the model was given
# Word weights as an index gives them: the asked topic's rare words weigh most.
_RARE = {"nonsmooth": 3.0, "guarante": 3.0, "adamdof": 3.0, "adamdo": 3.0, "me": 3.0}
_WORDS = sorted(content_terms(" ".join([QUESTION, ASKED.title, ASKED.text, NEIGHBOUR.title,
                                        NEIGHBOUR.text])))
IDF = ({w: i for i, w in enumerate(_WORDS)}, np.array([_RARE.get(w, 1.0) for w in _WORDS]))


def _supported(answer: str, cited: list[Passage], question: str = QUESTION) -> list[bool]:
    checked = check_citations(answer, cited)
    check_support(checked, idf=IDF, question=question, shown=SHOWN)
    return [s.supported for s in checked.sentences]


def test_a_restated_question_citing_a_paper_about_something_else_is_unsupported():
    assert _supported(WRONG, [NEIGHBOUR], question="") == [True]  # what word overlap alone says
    assert _supported(WRONG, [NEIGHBOUR]) == [False]
    assert output_problem(WRONG, SHOWN, idf=IDF, question=QUESTION) == REASON_UNSUPPORTED


def test_the_same_sentence_citing_the_paper_that_speaks_of_it_is_supported():
    answer = ("The algorithm giving the first finite-time guarantee for decentralized nonsmooth "
              "nonconvex stochastic optimization is ME-DOL [1].")
    assert _supported(answer, [ASKED]) == [True]
    assert _supported(answer.replace("[1]", "[2]"), SHOWN) == [True]


def test_what_was_asked_is_the_topic_the_best_matching_paper_shares_with_the_question():
    asked = asked_terms(QUESTION, SHOWN, IDF)
    assert {"nonsmooth", "guarante", "decentr", "finit"} <= asked
    assert not {"name", "what"} & asked  # how it asks, not what about
    assert asked_terms("How large were the biggest models?", [ASKED]) == frozenset()
    assert focus(WRONG, asked, [NEIGHBOUR.text], IDF) < MIN_FOCUS
    assert focus(WRONG, asked, [ASKED.text], IDF) == 1.0


def test_a_sentence_repeating_too_little_of_what_was_asked_is_left_to_the_support_check():
    asked = asked_terms(QUESTION, SHOWN, IDF)
    assert focus("It is ME-DOL.", asked, [NEIGHBOUR.text]) is None
    assert not off_focus("AdaMDOF is an adaptive algorithm.", asked, [NEIGHBOUR.text])
