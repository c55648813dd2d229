"""The optional LLM judge (`rag eval --judge`): is an answer correct against the reference?

Uses the configured OpenAI-compatible endpoint through `rag.models.openai_api` (imported
lazily, so the offline evals never need it). The judge is skipped, with a reason, when no endpoint is
configured or the client cannot be imported; when the endpoint fails, that question gets no
verdict and, after `MAX_FAILURES` failures in a row, the judge stops for the rest of the run.
Only answerable questions with a reference answer are judged; abstention is measured offline.

Not handled: judge bias and variance. A verdict is one sample at temperature 0 from whatever
model is configured; report the model with the numbers.
"""

from __future__ import annotations

import re
from typing import Any

from rag.settings import Settings

JUDGE_SYSTEM = (
    "You grade answers to questions about machine-learning papers. Compare the candidate answer "
    "with the reference answer. The candidate is CORRECT if it states the facts the reference "
    "states (wording may differ, extra true detail is fine) and does not contradict it; "
    "otherwise it is INCORRECT. A candidate that declines to answer is INCORRECT. Reply with "
    "one word, CORRECT or INCORRECT, then one short sentence of reason."
)
JUDGE_USER = "Question: {question}\n\nReference answer: {reference}\n\nCandidate answer: {answer}"
MAX_FAILURES = 3
_VERDICT = re.compile(r"\b(INCORRECT|CORRECT)\b", re.I)


def parse_verdict(reply: str) -> bool | None:
    """True for CORRECT, False for INCORRECT (the first one said wins), None otherwise."""
    m = _VERDICT.search(reply)
    return None if m is None else m.group(1).upper() == "CORRECT"


class Judge:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.model = settings.openai_model
        self.failures = 0
        self.reason = ""
        self._chat = None
        from rag.factory import llm_configured

        if not llm_configured():
            self.reason = "no LLM endpoint configured (set OPENAI_BASE_URL or OPENAI_API_KEY)"
            return
        try:
            from rag.models.openai_api import ChatClient
        except ImportError as exc:
            self.reason = f"the OpenAI client is unavailable ({exc})"
            return
        self._chat = ChatClient(settings)

    @property
    def available(self) -> bool:
        return self._chat is not None and self.failures < MAX_FAILURES

    def __call__(self, question: str, reference: str, answer: str) -> dict[str, Any] | None:
        """{"correct": bool | None, "reply": str, "model": str}, or None when not judged."""
        from rag.errors import RagError

        if not self.available or not reference:
            return None
        messages = [{"role": "system", "content": JUDGE_SYSTEM},
                    {"role": "user", "content": JUDGE_USER.format(
                        question=question, reference=reference, answer=answer)}]
        try:
            reply = self._chat.complete(messages, max_tokens=60)
        except RagError as exc:
            self.failures += 1
            if self.failures >= MAX_FAILURES:
                self.reason = f"stopped after {self.failures} failures in a row: {exc}"
            return None
        self.failures = 0
        return {"correct": parse_verdict(reply), "reply": reply.strip()[:300],
                "model": self.model}
