"""Follow-ups keep their referent (issue 21, item 5): a follow-up about the paper the
conversation is on is searched and answered as a question about that paper, is "not stated"
about that paper when its abstract holds no answer, and a question whose "their" or "its"
points inside itself is no follow-up."""

from __future__ import annotations

import pytest

import rag
from rag.answer.not_stated import asked_phrase
from rag.answer.rewrite import leans_on_conversation, referent, resolved
from rag.retrieve.titles import TitleIndex

SHAPE = "icml2024-poster-34835"  # Make-A-Shape: a Ten-Million-scale 3D Shape Model
SHAPE_TITLE = "Make-A-Shape: a Ten-Million-scale 3D Shape Model"
ABOUT = "What is the Make-A-Shape paper about?"


@pytest.fixture(scope="module")
def conversation(seed_home):
    """The first turn of a conversation about Make-A-Shape, asked of the seeds."""
    settings = rag.Settings.load(home=str(seed_home), env={}, corpus="seeds")
    first = rag.ask(ABOUT, settings=settings)
    assert [c.paper_id for c in first.citations][:1] == [SHAPE]
    return settings, [(ABOUT, first.text)]


# -- through ask(): the three behaviours -------------------------------------------------------

def test_a_follow_up_is_searched_and_answered_as_a_question_about_the_paper(conversation):
    settings, history = conversation
    answer = rag.ask("How many shapes was it trained on?", history=history, settings=settings)
    assert answer.query == "How many shapes was Make-A-Shape trained on?"
    assert not answer.abstained and "10 million" in answer.text
    assert {c.paper_id for c in answer.citations} == {SHAPE}
    assert {p.paper_id for p in answer.passages} == {SHAPE}


def test_what_the_paper_does_not_state_is_not_stated_about_that_paper(conversation):
    settings, history = conversation
    answer = rag.ask("What GPU was it trained on?", history=history, settings=settings)
    assert answer.abstained
    assert answer.text == f"The abstract of *{SHAPE_TITLE}* [1] does not state the GPU."
    assert [c.paper_id for c in answer.citations] == [SHAPE]
    assert answer.citations[0].quote == ""


def test_their_pointing_at_the_conversation_is_still_a_follow_up(conversation):
    settings, history = conversation
    answer = rag.ask("What is their main result?", history=history, settings=settings)
    assert answer.query == "What is Make-A-Shape's main result?"
    assert answer.text.endswith("does not state the main result.") or not answer.abstained
    assert {c.paper_id for c in answer.citations} == {SHAPE}


@pytest.mark.parametrize("question", [
    "What do diffusion models learn about their training data?",
    "How do LLM agents update their beliefs?",
])
def test_their_pointing_inside_the_question_is_searched_as_asked(conversation, question):
    settings, history = conversation
    answer = rag.ask(question, history=history, settings=settings)
    assert answer.query == question
    assert {p.paper_id for p in answer.passages} != {SHAPE}


def test_the_referent_outlives_a_follow_up_that_names_nothing(conversation):
    settings, history = conversation
    second = rag.ask("What is their main result?", history=history, settings=settings)
    history = [*history, ("What is their main result?", second.text)]
    answer = rag.ask("What GPU was it trained on?", history=history, settings=settings)
    assert answer.query == "What GPU was Make-A-Shape trained on?"
    assert [c.paper_id for c in answer.citations] == [SHAPE]


def test_the_referent_can_come_from_the_previous_answer(conversation):
    settings, _ = conversation
    question = "Which paper trains a 3D generative model on millions of public shapes?"
    first = rag.ask(question, settings=settings)
    answer = rag.ask("How many shapes was it trained on?", history=[(question, first.text)],
                     settings=settings)
    assert "Make-A-Shape" in first.text
    assert answer.query == "How many shapes was Make-A-Shape trained on?"
    assert {c.paper_id for c in answer.citations} == {SHAPE}


# -- the rules ---------------------------------------------------------------------------------

@pytest.mark.parametrize("question", [
    "What do diffusion models learn about their training data?",
    "How do LLM agents update their beliefs?", "Can LLMs evaluate their own outputs?",
    "Does the model overfit its training set?", "How are LLMs trained on their data?",
    "Which papers show how LLM agents update their beliefs?",
])
def test_a_possessive_whose_subject_is_in_the_question_stands_alone(question):
    assert not leans_on_conversation(question)


@pytest.mark.parametrize("question", [
    "What is their main result?", "What are their main results?",
    "Can you explain its loss function?", "What is the main idea of its method?",
    "What are the main results of their method?", "Is its code available?",
    "How well does its method work?", "What does diffusion learn about their data?",
    "How do LLMs use its memory?",
])
def test_a_possessive_with_no_subject_to_agree_with_leans_on_the_conversation(question):
    assert leans_on_conversation(question)


@pytest.mark.parametrize("question, query", [
    ("How many parameters does it have?", "How many parameters does Genie have?"),
    ("What GPU was it trained on?", "What GPU was Genie trained on?"),
    ("What is their main result?", "What is Genie's main result?"),
    ("What data did they use?", "What data did Genie use?"),
    ("Who are the authors?", "Who are the authors of Genie?"),
    ("What does the paper say about its limitations?",
     "What does Genie say about Genie's limitations?"),
    ("Is it possible to scale it?", "Is it possible to scale Genie?"),
    ("Why?", "Why? (Genie)"),
])
def test_the_referring_words_become_the_papers_name(question, query):
    assert resolved(question, "Genie") == query


TITLES = TitleIndex({
    "genie": ("Genie: Generative Interactive Environments", "We introduce Genie, a world model."),
    "dsdm": ("DsDm: Model-Aware Dataset Selection with Datamodels", "We select data with DsDm."),
    "gp": ("Stationarity without mean reversion in improper Gaussian processes",
           "Non-positive kernels avoid mean reversion."),
})
GENIE_ANSWER = "We introduce Genie, a world model [1]."


@pytest.mark.parametrize("history, paper", [
    ([("What is the Genie paper about?", "")], "genie"),
    ([("Which paper learns a world model from videos?", GENIE_ANSWER)], "genie"),
    ([("What is the Genie paper about?", GENIE_ANSWER), ("What is their main result?", "")],
     "genie"),
    ([("What is the Genie paper about?", GENIE_ANSWER),
      ("Which kernels avoid mean reversion?", "Non-positive kernels [1].")], None),
    ([("How does Genie differ from DsDm?", "")], None),
    ([("Which papers select data?", "Genie [1] and DsDm [2] ...")], None),
    ([("Which kernels avoid mean reversion?",
       "stationarity without mean reversion in Gaussian processes [1].")], None),
    ([("Tell me about stationarity without mean reversion in improper Gaussian processes", "")],
     "gp"),
])
def test_the_referent_is_the_one_paper_the_conversation_last_named(history, paper):
    assert referent(history, TITLES) == paper


def test_a_paper_is_named_by_its_short_name_else_by_its_whole_title():
    assert TITLES.name("genie", "Genie: Generative Interactive Environments") == "Genie"
    gp = "Stationarity without mean reversion in improper Gaussian processes"
    assert TITLES.name("gp", gp) == gp


@pytest.mark.parametrize("question, phrase", [
    ("What is Make-A-Shape's main result?", "the main result"),
    ("What is their main result?", "the main result"),
    ("What is the Genie paper about?", "what was asked"),
])
def test_what_a_resolved_follow_up_asks_for_fits_does_not_state(question, phrase):
    assert asked_phrase(question) == phrase
