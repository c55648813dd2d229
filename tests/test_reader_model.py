"""The reader model, as committed: it reads, and its weights give the figures its manifest claims.

The manifest (rag/models/reader/manifest.json) was written by `python -m rag.eval.reader train`
with figures measured through the serving code; here they are measured again from the committed
fp16 weights, on the bank's dev split, and must agree. The data it was trained on names no paper
of the bank's dev or test split."""

from __future__ import annotations

import json

import pytest

from rag.models.reader import WEIGHTS, ReaderModel, pair_text


@pytest.fixture(scope="module")
def model() -> ReaderModel:
    return ReaderModel()


@pytest.fixture(scope="module")
def manifest() -> dict:
    return json.loads((WEIGHTS / "manifest.json").read_text(encoding="utf-8"))


def test_the_weights_are_small_enough_to_commit():
    assert (WEIGHTS / "model.safetensors").stat().st_size < 50 * 1024 * 1024


def test_the_manifest_says_where_the_model_came_from(manifest):
    assert len(manifest["data_hash"]) == 64
    assert len(manifest["commit"]) == 40
    assert manifest["questions"] >= 3000
    assert {"twin_auroc", "near_miss_auroc"} <= set(manifest["dev"])


@pytest.mark.slow
def test_the_committed_weights_give_the_committed_dev_figures(model, manifest):
    from rag.eval.reader.figures import figures

    # on the dev questions the manifest was measured on (before issue 28 added paraphrase-
    # heavy ones, on which the same weights read worse: docs/reader-model.md)
    measured = figures(model.score, "dev", original=True)
    assert measured["twins"] == manifest["dev"]["twins"]
    for name in ("twin_auroc", "near_miss_auroc"):
        assert measured[name] == pytest.approx(manifest["dev"][name], abs=0.005), name


TITLE = "Spider: A Unified Framework for Context-dependent Concept Segmentation"
SENTENCES = ["We propose Spider, a unified model for context-dependent segmentation tasks.",
             "Spider outperforms specialist models on 8 different segmentation tasks.",
             "The source code will be publicly available."]
ASKED = "On how many segmentation tasks does Spider beat the specialist models?"


def _scores(model, question):
    return model.score(question, [pair_text(TITLE, SENTENCES, i) for i in range(3)])


def test_it_prefers_the_sentence_that_states_the_answer_over_one_that_only_shares_its_words(
        model, manifest):
    scores = _scores(model, ASKED)
    assert scores.argmax() == 1
    assert scores[1] > manifest["answer_threshold"]["threshold"] > scores[2]


def test_a_question_the_abstract_does_not_answer_scores_below_one_it_answers(model):
    unanswered = _scores(model, "Which GPUs were used to train Spider?")
    assert unanswered.max() < _scores(model, ASKED)[1]


def test_missing_weights_are_a_one_line_error_that_says_how_to_rebuild_them(tmp_path):
    from rag.errors import RagError

    with pytest.raises(RagError, match="python -m rag.eval.reader train"):
        ReaderModel(tmp_path)
