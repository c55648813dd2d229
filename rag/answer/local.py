"""The `local` generator: Qwen2.5-Coder-1.5B-Instruct in-process with llama-cpp-python, offline.

The weights are assembled once from the `[local]` extra's packages (rag/models/llm_model.py); the
GGUF's own chat template formats the messages (`create_chat_completion`). On 2 CPU cores it
reads about 16 prompt tokens/s and writes about 6 tokens/s, so the pipeline gives it only
`settings.local_passages` passages, the prompt is budgeted to `settings.llm_context_tokens`,
and tokens are streamed as they come. Its prompt is the one every backend uses (`prompts.SYSTEM`).
One model is loaded per process and runs one request at a time (llama.cpp contexts are not
thread-safe); others wait their turn.

There is no timeout here: the model cannot stall the way a server can, it is only slow.
"""

from __future__ import annotations

import atexit
import os
import threading
from typing import Any, Iterator

from ..errors import GeneratorError, GeneratorUnavailableError
from ..models.llm_model import ensure_model
from ..settings import Settings
from ..types import Passage
from . import History
from .prompting import Prompt, build_messages, clean_rewrite, rewrite_messages

REWRITE_TOKENS = 48
_models: dict[tuple, Any] = {}
_load_lock = threading.Lock()
_run_lock = threading.Lock()


def _llama(settings: Settings):
    try:
        from llama_cpp import Llama
    except ImportError:
        raise GeneratorUnavailableError(
            "the local generator needs llama-cpp-python: `make install-local` or "
            "`CMAKE_ARGS=-DGGML_NATIVE=OFF pip install -e .[local]`") from None
    path = ensure_model(settings)
    threads = settings.local_threads or os.cpu_count() or 1
    key = (str(path), settings.llm_context_tokens, threads)
    with _load_lock:
        if key not in _models:
            try:
                _models[key] = Llama(model_path=str(path), n_ctx=settings.llm_context_tokens,
                                     n_threads=threads, n_threads_batch=threads, seed=0,
                                     verbose=False)
            except (ValueError, RuntimeError, OSError) as exc:
                raise GeneratorUnavailableError(f"cannot load the local model {path}: {exc}; "
                                                f"delete it to have it assembled again") from None
        return _models[key]


@atexit.register
def _close_models() -> None:
    # Closed before interpreter teardown: llama_cpp's own __del__ fails once its globals are gone.
    with _load_lock:
        for llama in _models.values():
            llama.close()
        _models.clear()


class LocalGenerator:
    name = "local"

    def __init__(self, settings: Settings):
        self.settings = settings
        self.llama = _llama(settings)

    def _stream(self, messages: list[dict], max_tokens: int) -> Iterator[str]:
        with _run_lock:
            try:
                chunks = self.llama.create_chat_completion(
                    messages=messages, max_tokens=max_tokens, temperature=0.0, stream=True)
                for chunk in chunks:
                    piece = chunk["choices"][0]["delta"].get("content") or ""
                    if piece:
                        yield piece
            except (ValueError, RuntimeError, KeyError, IndexError) as exc:
                raise GeneratorError(f"the local model failed: {exc}") from None

    def generate(self, question: str, passages: list[Passage],
                 history: History = ()) -> Iterator[str | Prompt]:
        prompt = build_messages(question, passages, history, self.settings.llm_context_tokens,
                                self.settings.answer_tokens)
        yield prompt  # tells the pipeline which passages fit and what to tell the user
        yield from self._stream(prompt.messages, self.settings.answer_tokens)

    def rewrite(self, question: str, history: History) -> str | None:
        """`question` as a standalone query, or None when the model's reply is unusable."""
        reply = "".join(self._stream(rewrite_messages(question, history), REWRITE_TOKENS))
        return clean_rewrite(reply, question)
