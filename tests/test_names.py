"""Authors and titles are found as people type them: any case, without accents, by initial or
surname when that is unambiguous, by a paper's short name or a loose title (issue 13)."""

from __future__ import annotations

import pytest

from rag.retrieve.authors import AuthorIndex, name_key
from rag.retrieve.titles import TitleIndex

AUTHORS = AuthorIndex({
    "p1": "Sergey Levine, Chelsea Finn",
    "p2": "Aviral Kumar, Sergey Levine",
    "p3": "Bernhard Schölkopf, Yu Li",
    "p4": "Pan Li, Michael I. Jordan, Jia (Kevin) Liu",
    "p5": "Christopher A. Choquette Choo, Sam Levine",
    "p6": "Yixuan Zhang", "p7": "Yixuan Zhang", "p8": "YIXUAN ZHANG",
})
PAPERS = {"Sergey Levine": {"p1", "p2"}, "Bernhard Schölkopf": {"p3"}, "Michael I. Jordan": {"p4"},
          "Jia (Kevin) Liu": {"p4"}, "Chelsea Finn": {"p1"}, "Sam Levine": {"p5"},
          "Christopher A. Choquette Choo": {"p5"}}


@pytest.mark.parametrize("written, name", [
    ("Sergey Levine", "Sergey Levine"), ("sergey levine", "Sergey Levine"),
    ("SERGEY LEVINE", "Sergey Levine"), ("C. Finn", "Chelsea Finn"),
    ("Bernhard Scholkopf", "Bernhard Schölkopf"), ("Schölkopf", "Bernhard Schölkopf"),
    ("scholkopf", "Bernhard Schölkopf"), ("Michael Jordan", "Michael I. Jordan"),
    ("Jia Liu", "Jia (Kevin) Liu"), ("Finn", "Chelsea Finn"),
    ("Choquette Choo", "Christopher A. Choquette Choo"), ("Sam Levine", "Sam Levine"),
])
def test_a_name_is_found_in_any_case_without_accents_by_initial_or_surname(written, name):
    match = AUTHORS.lookup(written)
    assert (match.status, match.names) == ("found", (name,))
    assert set(match.papers) == PAPERS[name]




def test_spellings_of_one_name_are_one_author_shown_as_the_commonest():
    match = AUTHORS.lookup("yixuan zhang")
    assert (match.status, match.names, set(match.papers)) == ("found", ("Yixuan Zhang",),
                                                              {"p6", "p7", "p8"})


@pytest.mark.parametrize("written, names", [
    ("Levine", ("Sergey Levine", "Sam Levine")),  # most papers first
    ("Li", ("Pan Li", "Yu Li")), ("S Levine", ("Sergey Levine", "Sam Levine")),
])
def test_an_ambiguous_name_lists_its_candidates(written, names):
    match = AUTHORS.lookup(written)
    assert (match.status, match.names, match.papers) == ("ambiguous", names, ())
    assert len(match.counts) == len(names) and list(match.counts) == sorted(match.counts)[::-1]


@pytest.mark.parametrize("written", ["Geoffrey Hinton", "Hinton", "G. Levine", "Sergei Levin"])
def test_a_name_in_no_author_list_is_missing(written):
    assert AUTHORS.lookup(written).status == "missing"


def test_name_keys_drop_case_accents_punctuation_and_nicknames():
    assert name_key("Bernhard Schölkopf") == ("bernhard", "scholkopf")
    assert name_key("S. Levine") == ("s", "levine")
    assert name_key("Jia (Kevin) Liu") == ("jia", "liu")
    assert name_key("Pierluca D'Oro") == ("pierluca", "doro")


TITLES = TitleIndex({
    "genie": ("Genie: Generative Interactive Environments",
              "We introduce Genie, the first generative interactive environment."),
    "icll": ("In-Context Language Learning: Architectures and Algorithms",
             "Large-scale neural language models exhibit a remarkable capacity for in-context "
             "learning."),
    "pos1": ("Position: Intent-aligned AI Systems Must Optimize for Agency Preservation",
             "A position on agency."),
    "pos2": ("Position: Is machine learning good or bad for the natural sciences?",
             "A position on science."),
    "gp": ("Stationarity without mean reversion in improper Gaussian processes",
           "The behavior of a GP regression depends on the choice of covariance function."),
    "moe": ("Mixture: A Study", "Mixture models everywhere."),
    "moe2": ("Mixtures of experts", "Mixture of experts."),
    "moe3": ("Sparse experts", "A mixture of sparse experts."),
    "moe4": ("Dense experts", "A mixture of dense experts."),
})


@pytest.mark.parametrize("question, paper", [
    ("What is the Genie paper about?", "genie"),
    ("what does genie do", "genie"),
    ("Tell me about the paper \"Genie: Generative Interactive Environments\"", "genie"),
    ("summarize in context language learning architectures and algorithms", "icll"),
    ("What is the paper \"Stationarity without mean reversion in improper Gaussian processes\" "
     "about?", "gp"),
    ("What does 'stationarity without mean reversion in Gaussian processes' show?", "gp"),
])
def test_a_question_naming_a_title_even_loosely_finds_that_paper(question, paper):
    assert TITLES.match(question)[:1] == [paper]


@pytest.mark.parametrize("question", [
    "What is the position of the authors on agency?",  # "Position" starts several titles
    "Which papers use a mixture model?",  # "Mixture" is mentioned by four papers
    "Which kernels avoid mean reversion?",  # too little of a title
])
def test_a_common_short_name_or_a_few_title_words_name_no_paper(question):
    assert TITLES.match(question) == []
