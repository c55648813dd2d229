"""A name the cited abstract gives only as others' work (a baseline, prior methods) is not the
paper's own: an answer that states it as the paper's is in the wrong role."""

from __future__ import annotations

import pytest

from rag.check.contrast import set_against
from rag.check.roles import roles_unbacked

VITS = ("To circumvent this issue, approximate inference techniques can be used and provide "
        "samples with distribution close to the posteriors. However, current approximate "
        "techniques yield to either poor estimation (Laplace approximation) or can be "
        "computationally expensive (MCMC methods, Ensemble sampling...). In this paper, we "
        "propose VITS, a new algorithm based on Gaussian Variational Inference.")
ASKED = "What kind of approximate inference does VITS use?"


@pytest.mark.parametrize("claim, wrong", [
    ("VITS uses approximate inference such as the Laplace approximation.", ["Laplace"]),
    ("VITS relies on Ensemble sampling.", ["Ensemble"]),
    ("VITS uses Gaussian Variational Inference.", []),       # its own method
    ("VITS avoids the poor estimates of the Laplace approximation.", []),   # says it is not
    ("Unlike the Laplace approximation, VITS uses Variational Inference.", []),
])
def test_a_baseline_stated_as_the_papers_own_is_in_the_wrong_role(claim, wrong):
    assert set_against(claim, [VITS], ASKED) == wrong
    assert roles_unbacked(claim, [VITS], asked=ASKED) == wrong


@pytest.mark.parametrize("evidence, claim, wrong", [
    ("Our model outperforms Llama and GPT-4 on MMLU.", "The model is GPT-4.", ["GPT-4"]),
    ("It is 3x faster than FlashAttention.", "It is built on FlashAttention.", ["FlashAttention"]),
    ("Existing methods such as LoRA need many adapters. We propose DoRA.", "DoRA is LoRA.",
     ["LoRA"]),
    # a name the abstract also gives as its own is its own
    ("Existing methods such as LoRA are slow. We speed up LoRA with Ranks.", "It uses LoRA.", []),
    # a sentence that is about the paper's own work is not others' work, wherever "than" is
    ("We evaluate on ImageNet, and our model trains faster than before.",
     "It is evaluated on ImageNet.", []),
])
def test_others_work_is_what_an_opening_or_a_comparison_sets_against(evidence, claim, wrong):
    assert set_against(claim, [evidence]) == wrong


def test_a_question_about_the_baseline_may_be_answered_with_it():
    evidence = "We prove a tighter upper bound than the one proved by Ghazi et al."
    assert set_against("The bound of Ghazi et al.", [evidence]) == ["Ghazi"]
    assert set_against("The bound of Ghazi et al.", [evidence],
                       "Whose bound does the paper tighten?") == []


def test_the_paper_asked_about_is_never_its_own_baseline():
    evidence = "Graph models scale poorly, unlike MambaNet on sequences."
    assert set_against("MambaNet handles graphs.", [evidence]) == ["MambaNet"]
    assert set_against("MambaNet handles graphs.", [evidence], "What does MambaNet do?") == []
