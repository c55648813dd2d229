"""What a question asks for is read before retrieval: a list, a person, a comparison or a fact,
and the query searched keeps the topic only (issue 13). Follow-ups are only the questions that
lean on the conversation."""

from __future__ import annotations

import pytest

from rag.answer.rewrite import is_follow_up, leans_on_conversation, rewrite_query
from rag.retrieve.route import compared, person_in, topic_of, understand, without_conference


@pytest.mark.parametrize("question, topic", [
    ("Which papers use mixture of experts?", "mixture of experts"),
    ("What are the best papers on mixture of experts at ICML 2024?", "mixture of experts"),
    ("I'm looking for the most interesting mixture of experts papers from ICML 2024",
     "mixture of experts"),
    ("Show me some ICML 2024 papers about speculative decoding", "speculative decoding"),
    ("any recent work on speculative decoding at icml?", "speculative decoding"),
    ("papers about conformal prediction", "conformal prediction"),
    ("Which papers study best arm identification?", "best arm identification"),
    ("Which papers propose methods that reduce memory?", "methods that reduce memory"),
    ("List all papers on model merging from this year's conference", "model merging"),
    ("Are there any papers here on Kolmogorov-Arnold Networks?", "Kolmogorov-Arnold Networks"),
    ("What methods reduce memory in transformers?", "methods reduce memory in transformers"),
    ("Which studies look at tokenization?", "tokenization"),
])
def test_a_list_question_searches_its_topic_without_request_or_conference_words(question, topic):
    intent = understand(question)
    assert intent.kind == "list"
    assert intent.query == topic == topic_of(question)


@pytest.mark.parametrize("question, name, topic", [
    ("Which papers did Sergey Levine publish at ICML 2024?", "Sergey Levine", ""),
    ("papers by Geoffrey Hinton", "Geoffrey Hinton", ""),
    ("What did Michael Bronstein present at ICML?", "Michael Bronstein", ""),
    ("What did jason lee present at ICML?", "jason lee", ""),
    ("Show me L. Yin's papers", "L. Yin", ""),
    ("list the work of H. Tong at ICML 2024", "H. Tong", ""),
    ("what has Kawaguchi got at icml 2024", "Kawaguchi", ""),
    ("Which ICML 2024 papers is Bernhard Scholkopf an author of?", "Bernhard Scholkopf", ""),
    ("Sergey Levine's work on offline reinforcement learning", "Sergey Levine",
     "offline reinforcement learning"),
    ("papers by Volkan Cevher about robustness", "Volkan Cevher", "robustness"),
    ("What papers has Chelsea Finn written?", "Chelsea Finn", ""),
    ("Which papers have Chelsea Finn as an author?", "Chelsea Finn", ""),
    ("show me everything by Chelsea Finn", "Chelsea Finn", ""),
    ("Did Chelsea Finn publish anything on robotics?", "Chelsea Finn", "robotics"),
    ("Any papers from Bernhard Schölkopf?", "Bernhard Schölkopf", ""),
    ("List Sergey Levine's papers on offline RL", "Sergey Levine", "offline RL"),
    # issue 22: was read as the person "have Sergey Levine"
    ("Show me the papers that have Sergey Levine as a co-author.", "Sergey Levine", ""),
    ("Which papers which list Chelsea Finn as an author?", "Chelsea Finn", ""),
])
def test_a_person_question_names_the_person_and_any_topic(question, name, topic):
    intent = understand(question)
    assert (intent.kind, intent.person, intent.topic) == ("person", name, topic)


@pytest.mark.parametrize("question", [
    "What did the authors present?", "What did they use?", "Which papers did this work cite?",
    "Has the model been published?", "Did the authors publish code?",
    "Which kernels avoid mean reversion in Gaussian process regression?",
])
def test_pronouns_and_generic_words_are_not_people(question):
    assert person_in(question) is None


@pytest.mark.parametrize("question, pair", [
    ("How does Genie differ from DsDm?", ("Genie", "DsDm")),
    ("What is the difference between the LLaGA paper and Genie?", ("LLaGA", "Genie")),
    ("compare RankSEG with REMEDI", ("RankSEG", "REMEDI")),
    ("Genie vs. DsDm", ("Genie", "DsDm")),
])
def test_a_comparison_names_both_sides(question, pair):
    assert compared(question) == pair
    assert understand(question).kind == "compare"


@pytest.mark.parametrize("question", [
    "How many seconds does hierarchical IPM take on 1,000 samples compared to Wasserstein over "
    "Wasserstein?",
    "What nRMSE does VCNeF report on the 1D Burgers equation from PDEBench compared with FNO?",
    "What linear-probe accuracy does SupBYOL reach on ImageNet-100 compared to SupCon?",
])
def test_a_question_about_a_result_against_a_baseline_is_not_a_comparison_of_papers(question):
    assert compared(question) is None


@pytest.mark.parametrize("question", [
    "Which paper studies speculative decoding?", "Which methods does RankSEG compare against?",
    "Is there an online RL method for budgets that works whether rewards are random or not?",
    "which language models did ObProp analyse, GPT-2 or Pythia?",
    # issue 22: "works" is the verb here, not "works" the papers; it was listed, ungated
    "What works best for offline RL with small datasets?",
    "What works well for long-context retrieval?",
])
def test_a_question_about_one_paper_is_not_a_list(question):
    assert understand(question).kind == "fact"


@pytest.mark.parametrize("question, describe", [
    ("What is the Genie paper about?", True), ("what does RankSEG do", True),
    ("summarize in context language learning architectures and algorithms", True),
    ("Which kernels avoid mean reversion in Gaussian process regression?", False),
])
def test_a_fact_question_keeps_its_words_but_not_the_conference(question, describe):
    intent = understand(question)
    assert intent.kind == "fact" and intent.describe == describe
    assert understand(question + " at ICML 2024").query == without_conference(question)


# -- follow-ups: both kinds, at least ten of each ------------------------------------------

FOLLOW_UPS = [
    "What data did they use?", "How does it compare to the baseline?",
    "What dataset does the paper use?", "Who are the authors?", "and the second one?",
    "What about diffusion models?", "Why?", "Tell me more about that.",
    "Does this method scale to large graphs?", "What are their main results?",
    "Is the code of these papers available?", "How do those approaches differ?",
    "Can you explain its loss function?", "And for images?", "What does this mean?",
    "Which of them uses transformers?", "How does that compare?", "What do they resemble?",
    "What is the main idea of the second paper?", "Is that true?",
]
STANDALONE = [
    "Which papers propose methods that reduce memory?",
    "Which kernels avoid mean reversion in Gaussian process regression?",
    "What is the Genie paper about?", "Which papers use LoRA?", "papers by Sergey Levine",
    "Show me papers that study watermarking", "What did Michael Bronstein present at ICML?",
    "How does Genie differ from DsDm?",
    "Is it possible to train spiking neural networks with backpropagation?",
    "What methods show that transformers can learn in context?",
    "Which paper introduces the WMDP benchmark?", "speculative decoding",
    "Which model compression methods keep accuracy?",
    "Which papers show that pruning helps?", "Is there a paper that is about watermarking?",
]
HISTORY = [("Which kernels avoid mean reversion in Gaussian process regression?", "...")]


@pytest.mark.parametrize("question", FOLLOW_UPS)
def test_a_question_that_leans_on_the_conversation_is_rewritten(question):
    assert leans_on_conversation(question)
    assert rewrite_query(question, HISTORY) == f"{HISTORY[0][0]} {question}"


@pytest.mark.parametrize("question", STANDALONE)
def test_a_standalone_question_is_searched_as_asked_even_mid_conversation(question):
    assert not leans_on_conversation(question)
    assert rewrite_query(question, HISTORY) == question


def test_nothing_is_a_follow_up_before_the_conversation_starts():
    assert not is_follow_up("What data did they use?", [])


def test_the_two_misreadings_of_issue_22_are_routed_right_on_the_whole_corpus(full_home):
    """Asked of the whole ICML 2024 index as a new user would: the co-author question lists the
    person's papers, and "what works best" is a gated fact question, not a list of papers on
    "best for offline RL"."""
    import rag

    settings = rag.Settings.load(home=str(full_home), env={}, corpus="icml2024")
    person = rag.ask("Show me the papers that have Sergey Levine as a co-author.",
                     settings=settings)
    assert person.generator == "metadata" and not person.abstained
    assert person.text.startswith("Sergey Levine has ") and person.citations
    assert "have Sergey Levine" not in person.text
    best = rag.ask("What works best for offline RL with small datasets?", settings=settings)
    assert best.query == "What works best for offline RL with small datasets?"
    assert not best.text.startswith("- ")  # not a list answer
