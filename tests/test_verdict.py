"""The language model's second opinion: its P(YES) that the evidence states the answer can turn
the gate's "answer" into an abstention, never the reverse, and costs one token.

The model here is tests/fault_server.py speaking the OpenAI protocol with chosen
log-probabilities; the real local model's log-probabilities are checked in test_local_llm.py.
"""

from __future__ import annotations

import json

import pytest

from fault_server import MODEL, FaultServer
from rag.answer import verdict
from rag.answer.verdict import USER_VERDICT, Combination, p_yes, second_opinion
from rag.pipeline import ask
from rag.retrieve.answerability import ABSTAIN, ANSWER, Logistic, Verdict
from rag.retrieve.signals import Signals

QUESTION = "Which kernels avoid mean reversion in Gaussian process regression?"
# P(answer) = P(YES) itself: the gate's probability has no weight, the threshold is one half.
EQUAL = {"mean": [0.0, 0.0], "scale": [1.0, 1.0], "coef": [0.0, 1.0], "bias": 0.0}


@pytest.fixture
def fitted(tmp_path, monkeypatch):
    """A combination file fitted for the fault server's model."""
    path = tmp_path / "verdict.json"
    path.write_text(json.dumps({"model": MODEL, "features": list(verdict.FEATURES),
                                "combination": EQUAL, "threshold": 0.5}))
    monkeypatch.setattr(verdict, "MODEL_FILE", path)
    verdict.load_combination.cache_clear()
    yield path
    verdict.load_combination.cache_clear()


@pytest.fixture
def model(monkeypatch):
    servers = []

    def start(yes: float | None) -> FaultServer:
        srv = FaultServer(yes=yes).__enter__()
        servers.append(srv)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-verdict")
        return srv

    yield start
    for srv in servers:
        srv.__exit__()


@pytest.fixture
def settings(seed_settings):
    return seed_settings.replace(generator="openai", openai_model=MODEL, llm_timeout=5.0)


def test_a_combination_fitted_on_other_features_is_refused(tmp_path):
    path = tmp_path / "verdict.json"
    path.write_text(json.dumps({"model": MODEL, "features": ["p_yes"], "combination": EQUAL,
                                "threshold": 0.5}))
    with pytest.raises(ValueError, match="fit_verdict"):
        verdict.load_combination(str(path))


def test_p_yes_reads_every_spelling_of_the_two_words():
    assert p_yes({"YES": 0.6, " yes": 0.1, "No": 0.1, "The": 0.2}) == pytest.approx(0.7 / 0.8)
    assert p_yes({"The": 0.9, "Answer": 0.1}) is None


def test_the_model_can_veto_an_answer_but_not_bring_one_back():
    gate = Verdict(ANSWER, 0.9, 0.2, Signals({"title_cover": 0.0, "rarest_present": 1.0}))
    combo = Combination(MODEL, Logistic.from_dict(EQUAL), 0.5)
    assert second_opinion(gate, 0.9, combo).decision == ANSWER
    vetoed = second_opinion(gate, 0.1, combo)
    assert vetoed.decision == ABSTAIN and vetoed.llm_yes == 0.1
    assert vetoed.answerable == pytest.approx(0.1)
    assert second_opinion(gate, None, combo) == Verdict(ANSWER, 0.9, 0.2, gate.signals)


def test_a_confident_no_turns_the_answer_into_an_abstention(model, fitted, settings):
    server = model(yes=0.03)
    answer = ask(QUESTION, settings=settings)
    assert answer.abstained and not answer.citations
    (request,) = server.chat_requests()  # the verdict only: no answer was written
    body = request["body"]
    assert body["max_tokens"] == 1 and body["logprobs"] is True
    assert body["messages"][-1]["content"].endswith(USER_VERDICT.rsplit("\n", 2)[-2] + "\nReply:")
    assert answer.timings_ms["verdict"] > 0


def test_a_confident_yes_lets_the_model_answer_from_the_same_prompt(model, fitted, settings):
    server = model(yes=0.97)
    answer = ask(QUESTION, settings=settings)
    assert not answer.abstained and answer.generator == "openai"
    asked, wrote = server.chat_requests()
    question_line = f"Question: {QUESTION}\n"
    for body in (asked["body"], wrote["body"]):  # one prefix: llama.cpp re-reads only the end
        assert body["messages"][0] == wrote["body"]["messages"][0]
    prefix = wrote["body"]["messages"][-1]["content"].rsplit(question_line, 1)[0]
    assert asked["body"]["messages"][-1]["content"].startswith(prefix + question_line)


@pytest.mark.parametrize("yes, setting", [(None, True), (0.03, False)])
def test_without_log_probabilities_or_with_the_setting_off_the_gate_decides(
        model, fitted, settings, yes, setting):
    server = model(yes=yes)
    answer = ask(QUESTION, settings=settings.replace(llm_verdict=setting))
    assert not answer.abstained and answer.generator == "openai"
    assert len(server.chat_requests()) == (2 if setting else 1)


def test_a_model_without_a_fitted_combination_is_not_asked(model, fitted, settings):
    server = model(yes=0.03)
    answer = ask(QUESTION, settings=settings.replace(openai_model="another-model"))
    assert all(not r["body"].get("logprobs") for r in server.chat_requests())
    assert "verdict" not in answer.timings_ms
