"""The `openai` generator: an answer streamed from any OpenAI-compatible chat endpoint.

The prompt comes from `prompting.build_messages` (each paper's evidence sentences, not its
whole abstract); the HTTP side (timeouts, retries, clear errors) lives in
`rag/models/openai_api.py`, the only module that imports the `openai` package. The `local`
generator is this one pointed at an in-process llama.cpp server (`answer/local.py`).
The stream starts with the `Prompt` sent (passages that fit, notices such as a truncated
question), then text pieces.
"""

from __future__ import annotations

from typing import Iterator

from ..models.openai_api import ChatClient
from ..settings import Settings
from ..text import Idf
from ..types import Passage
from . import Generator, History
from .prompting import Prompt, build_messages, clean_rewrite, rewrite_messages
from .verdict import p_yes, verdict_messages

REWRITE_TOKENS = 64


class OpenAIGenerator(Generator):
    name = "openai"

    def __init__(self, settings: Settings, idf: Idf | None = None,
                 chat: ChatClient | None = None):
        self.settings = settings
        self.idf = idf  # an IDF table for calls that pass none (the engine passes the turn's)
        self.chat = chat or ChatClient(settings)

    @property
    def model(self) -> str:
        """The served model's name (a fitted `verdict.json` is for one model)."""
        return self.chat.model

    def generate(self, question: str, passages: list[Passage], history: History = (),
                 idf: Idf | None = None) -> Iterator[str | Prompt]:
        prompt = build_messages(question, passages, history, self.settings.llm_context_tokens,
                                self.settings.answer_tokens, idf=idf or self.idf)
        yield prompt  # tells the engine which passages fit and what to tell the user
        yield from self.chat.stream(prompt.messages, max_tokens=self.settings.answer_tokens)

    def verdict(self, question: str, passages: list[Passage], history: History = (),
                idf: Idf | None = None) -> float | None:
        """The model's P(YES) that `passages` state the answer (`verdict.py`); None when the
        server gives no log-probabilities or neither word is likely."""
        messages = verdict_messages(question, passages, history, self.settings.llm_context_tokens,
                                    self.settings.answer_tokens, idf or self.idf)
        return p_yes(self.chat.first_token(messages))

    def rewrite(self, question: str, history: History) -> str | None:
        """`question` as a standalone query, or None when the model's reply is unusable."""
        reply = self.chat.complete(rewrite_messages(question, history), max_tokens=REWRITE_TOKENS)
        return clean_rewrite(reply, question)
