"""Questions about people, titles, lists and comparisons, answered end to end on the real seed
index (issue 13): a person's papers come from the metadata as a cited list, a named title is
ranked first, a list is one cited line per relevant paper up to a limit, noisy phrasing searches
the same topic as plain phrasing, and a standalone question is never glued to the last one."""

from __future__ import annotations

import re

import pytest

import rag
from rag.ui import render

DANGEL = {"Can We Remove the Square-Root in Adaptive Gradient Methods? A Second-Order Perspective",
          "Revisiting Scalable Hessian Diagonal Approximations for Applications in Reinforcement "
          "Learning"}
LINE = re.compile(r"^- (?P<title>.+) \(with (?P<others>.+); (?P<url>https://\S+)\): (?P<claim>.+ "
                  r"\[(?P<n>\d+)\][.!?]?)$")


@pytest.mark.parametrize("question", [
    "Which papers did Felix Dangel publish at ICML 2024?", "papers by f. dangel",
    "What did Dangel present?", "Show me Felix Dangel's papers", "Felix Dangel papers",
])
def test_a_person_gets_every_paper_of_theirs_as_a_cited_line(seed_settings, question):
    answer = rag.ask(question, settings=seed_settings)
    assert not answer.abstained and answer.generator == "metadata"
    assert answer.query == "author: Felix Dangel"
    head, *lines = answer.text.split("\n")
    assert head == "Felix Dangel has 2 papers in this corpus:"
    assert len(lines) == 2 and {c.passage.title for c in answer.citations} == DANGEL
    for n, line in enumerate(lines, start=1):
        m = LINE.match(line)
        assert m, line
        cited = answer.citations[int(m["n"]) - 1]
        assert int(m["n"]) == n and m["title"] == cited.passage.title
        assert m["url"] == cited.passage.url and "Felix Dangel" not in m["others"]
        assert cited.quote and cited.quote in cited.passage.text  # the claim is quoted
    assert all(s.supported for s in answer.sentences if s.citations)
    html = render.answer_html(answer, turn=0)
    assert "Searched as</summary><code>author: Felix Dangel</code>" in html


def test_a_topic_restricts_the_persons_papers(seed_settings):
    answer = rag.ask("Bowen Jing's work on DNA sequence design", settings=seed_settings)
    assert [c.passage.title for c in answer.citations] == [
        "Dirichlet Flow Matching with Applications to DNA Sequence Design"]
    assert answer.text.startswith("Bowen Jing has 1 paper on DNA sequence design in this "
                                  "corpus (2 in all):")


def test_a_name_in_no_author_list_gets_no_paper_and_no_unrelated_papers(seed_settings):
    answer = rag.ask("papers by Geoffrey Hinton", settings=seed_settings)
    assert answer.abstained and answer.text == "No paper by Geoffrey Hinton in this corpus."
    assert answer.citations == [] and answer.passages == []
    html = render.answer_html(answer, turn=0)
    assert "No paper by Geoffrey Hinton in this corpus." in html and "rag-card" not in html


def test_an_ambiguous_name_lists_the_candidates(seed_settings):
    answer = rag.ask("What did Li present at ICML?", settings=seed_settings)
    assert answer.abstained and answer.citations == []
    assert answer.text.startswith("15 authors match \u201cLi\u201d: ")
    assert "Pan Li (1 paper)" in answer.text and answer.text.endswith(
        "; and 7 more. Ask again with one of these names.")


def test_person_answers_bypass_the_answerability_gate(seed_settings):
    answer = rag.ask("papers by Felix Dangel", settings=seed_settings, abstain_threshold=0.99)
    assert not answer.abstained and len(answer.citations) == 2


@pytest.mark.parametrize("question, title", [
    ("What is the WMDP benchmark paper about?", "The WMDP Benchmark: Measuring and Reducing "
     "Malicious Use with Unlearning"),
    ("what does ugrid do", "UGrid: An Efficient-And-Rigorous Neural Multigrid Solver for Linear "
     "PDEs"),
    ("summarize stationarity without mean reversion in improper gaussian processes",
     "Stationarity without mean reversion in improper Gaussian processes"),
])
def test_a_question_naming_a_paper_ranks_it_first_and_answers_from_it(seed_settings, question,
                                                                      title):
    answer = rag.ask(question, settings=seed_settings)
    assert answer.passages[0].title == title and answer.passages[0].rank == 1
    assert not answer.abstained and answer.citations[0].passage.title == title


def test_a_list_shaped_question_about_a_named_paper_is_about_that_paper(seed_settings):
    answer = rag.ask("Which methods does UGrid build on?", settings=seed_settings)
    assert answer.query == "Which methods does UGrid build on?"
    assert answer.passages[0].title.startswith("UGrid: ")


def test_a_comparison_gets_one_cited_line_per_named_paper(seed_settings):
    answer = rag.ask("How does UGrid differ from DiffDA?", settings=seed_settings)
    lines = answer.text.split("\n")
    assert [c.passage.title.split(":")[0] for c in answer.citations] == ["UGrid", "DiffDA"]
    assert len(lines) == 2 and lines[0].startswith("- UGrid: ") and lines[0].endswith("[1].")
    assert lines[1].startswith("- DiffDA: ") and lines[1].endswith("[2].")


def test_a_list_has_one_cited_line_per_paper_up_to_the_limit_and_says_how_many_more(
        seed_settings):
    full = rag.ask("Which papers study diffusion models?", settings=seed_settings, list_limit=40)
    short = rag.ask("Which papers study diffusion models?", settings=seed_settings, list_limit=2)
    lines = full.text.split("\n")
    assert full.query == "diffusion models" and len(lines) == len(full.passages) >= 4
    for n, (line, p) in enumerate(zip(lines, full.passages), start=1):
        assert line.startswith(f"- {p.title}: ") and line.endswith(f"[{n}].")
    more = len(full.passages) - 2
    assert short.text.split("\n") == lines[:2] and full.notices == []
    assert short.notices == [f"{more} more relevant papers are not listed: raise list_limit (now "
                             "2; \u201cPapers in a list answer\u201d in the chat's Settings, "
                             "--list-limit for rag ask) to see them."]
    assert all(s.supported and s.citations for s in full.sentences)


def test_the_topic_searched_is_shown_as_searched_as_and_not_as_a_follow_up(seed_settings):
    answer = rag.ask("What are the best papers on diffusion models at ICML 2024?",
                     settings=seed_settings)
    html = render.answer_html(answer, turn=0)
    assert "Searched as</summary><code>diffusion models</code>" in html


@pytest.mark.parametrize("noisy", [
    "What are the best papers on diffusion models at ICML 2024?",
    "any recent work on diffusion models at icml?",
    "I'm looking for the most interesting diffusion models papers from ICML 2024",
])
def test_request_and_conference_words_do_not_change_what_a_list_finds(seed_settings, noisy):
    plain = rag.ask("Which papers study diffusion models?", settings=seed_settings)
    answer = rag.ask(noisy, settings=seed_settings)
    assert answer.query == plain.query == "diffusion models"
    assert [p.paper_id for p in answer.passages] == [p.paper_id for p in plain.passages]


def test_a_list_with_nothing_relevant_abstains(seed_settings):
    answer = rag.ask("Which papers study medieval poetry?", settings=seed_settings)
    assert answer.abstained and answer.citations == []


def test_a_standalone_question_mid_conversation_is_searched_alone(seed_settings):
    history = [("Which kernels avoid mean reversion?", "Non-positive kernels [1].")]
    answer = rag.ask("Which papers propose methods that reduce memory?", history=history,
                     settings=seed_settings)
    assert "kernels" not in answer.query
    follow = rag.ask("What data did they use?", history=history, settings=seed_settings)
    assert follow.query.startswith("Which kernels avoid mean reversion?")
