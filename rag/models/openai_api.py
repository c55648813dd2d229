"""The one module that imports `openai`: the client, its errors explained, and chat completions
against any OpenAI-compatible endpoint (OpenAI itself, vLLM, Ollama, a llama.cpp server).
Embeddings from such an endpoint are in `openai_embedder.py`, on the same client.

The endpoint comes from `OPENAI_BASE_URL` (default: OpenAI's), the key from `OPENAI_API_KEY`
(servers that need none get a placeholder). Both are read here, when a client is made, and never
stored in settings, logged or put in a message: every error text passes through `_scrub`.

- `ChatClient.stream(messages)` yields text pieces. The SDK itself retries a request
  `settings.llm_retries` times (`max_retries`) when it fails before the first token: 408, 409,
  429, 5xx, a refused connection or a timeout, with exponential backoff that honours
  `Retry-After`. After the first token a failure is raised, never retried, so no text is
  repeated. `settings.llm_timeout` (the SDK's `timeout`) bounds connecting and every wait for the
  next bytes of each attempt, so a stalled stream ends in a GeneratorError instead of a hang; a
  server that never answers costs at most (llm_retries + 1) attempts of llm_timeout each.
- Every failure becomes a `GeneratorError` whose message says what to change: a refused key, an
  unknown model (with the models the endpoint does serve), a refused connection, a timeout.

It does not handle tool calls, images, or the async client.
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
from typing import Any, Iterator, Sequence

import openai

from ..errors import GeneratorError, RagError
from ..settings import Settings

DEFAULT_BASE_URL = "https://api.openai.com/v1"
NO_KEY = "no-key-required"  # llama.cpp, vLLM and Ollama accept any key; the SDK wants one

_clients: dict[tuple, "openai.OpenAI"] = {}
_clients_lock = threading.Lock()


def endpoint() -> str:
    """The base URL requests go to (for messages; it never carries the key)."""
    return (os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def _api_key() -> str:
    return os.environ.get("OPENAI_API_KEY") or NO_KEY


def _scrub(text: str) -> str:
    """`text` with the API key (and any long fragment of it) replaced by '***'."""
    key = os.environ.get("OPENAI_API_KEY") or ""
    if len(key) >= 4:
        text = text.replace(key, "***")
        # Servers often echo a key partly masked ("sk-ab...wxyz"); hide long fragments too.
        for size in range(min(len(key) - 1, 12), 7, -1):
            for i in range(0, len(key) - size + 1):
                frag = key[i:i + size]
                if frag in text:
                    text = text.replace(frag, "***")
    return text


def openai_client(settings: Settings, base_url: str | None = None, api_key: str | None = None,
                  retries: int | None = None) -> "openai.OpenAI":
    """A shared client for the configured endpoint, or for `base_url` (an in-process server)."""
    base, key = base_url or endpoint(), api_key or _api_key()
    retries = settings.llm_retries if retries is None else retries
    cache_key = (base, hashlib.sha256(key.encode()).hexdigest(), settings.llm_timeout, retries)
    with _clients_lock:
        client = _clients.get(cache_key)
        if client is None:
            client = openai.OpenAI(base_url=base, api_key=key, timeout=settings.llm_timeout,
                                   max_retries=retries)
            _clients[cache_key] = client
        return client


def _server_message(exc: "openai.APIStatusError") -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return _scrub(str(message))[:300]
    return ""


def _attempts(exc: Exception) -> int:
    """How many requests the SDK sent before giving up (it numbers its retries in a header)."""
    request = getattr(exc, "request", None)
    try:
        return int(request.headers.get("x-stainless-retry-count", 0)) + 1
    except (AttributeError, RuntimeError, TypeError, ValueError):
        return 1


def explain(exc: Exception, settings: Settings, model: str,
            what: str = "chat model", base: str | None = None) -> GeneratorError:
    """A GeneratorError saying, in one line, what went wrong with the endpoint and what to do."""
    base = base or endpoint()
    attempts = _attempts(exc)
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    if isinstance(exc, openai.APITimeoutError):
        msg = (f"{base} sent nothing for {settings.llm_timeout:g} s{tries}; the server is stalled "
               f"or too slow (raise RAG_LLM_TIMEOUT)")
    elif isinstance(exc, openai.APIConnectionError):
        msg = (f"cannot connect to {base}; is the server running? Check OPENAI_BASE_URL "
               f"(e.g. http://127.0.0.1:8000/v1)")
    elif isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        msg = (f"{base} refused the API key (HTTP {exc.status_code}); set OPENAI_API_KEY to a "
               f"valid key for this endpoint")
    elif isinstance(exc, openai.NotFoundError):
        served = available_models(settings)
        hint = f" It serves: {', '.join(served[:8])}." if served else ""
        msg = (f"{base} has no {what} {model!r} (HTTP 404); set "
               f"{'RAG_EMBED_MODEL' if what.startswith('embedding') else 'RAG_OPENAI_MODEL'} "
               f"to a model it serves, and check that OPENAI_BASE_URL ends in /v1.{hint}")
    elif isinstance(exc, openai.RateLimitError):
        msg = f"{base} is rate-limiting requests (HTTP 429){tries}; try again later"
    elif isinstance(exc, openai.APIStatusError):
        detail = _server_message(exc)
        msg = (f"{base} answered HTTP {exc.status_code}{tries}" + (f": {detail}" if detail else ""))
    elif isinstance(exc, (ValueError, KeyError, TypeError, AttributeError, IndexError)):
        msg = f"{base} sent a malformed response ({type(exc).__name__})"
    else:
        msg = f"{base} failed: {type(exc).__name__}: {exc}"
    return GeneratorError(_scrub(msg))


def available_models(settings: Settings) -> list[str]:
    """The model ids the endpoint lists, or [] when it cannot say."""
    try:
        return sorted(m.id for m in openai_client(settings).models.list())
    except Exception:  # only a hint for an error message: never mask the original error
        return []


def request(settings: Settings, model: str, call, what: str = "chat model",
            error: type[RagError] = GeneratorError, base: str | None = None):
    """`call()`'s result. The SDK has already retried what is safe to repeat, so any failure
    here is final: it becomes `error` with `explain`'s one-line message."""
    try:
        return call()
    except (openai.OpenAIError, ValueError, TypeError) as exc:  # Value/TypeError: a bad JSON body
        raise error(str(explain(exc, settings, model, what, base))) from None


class ChatClient:
    """Chat completions from `settings.openai_model` at the configured endpoint, or from
    `model` at `base_url` with `api_key` (the local backend's in-process llama.cpp server)."""

    def __init__(self, settings: Settings, model: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, retries: int | None = None):
        self.settings = settings
        self.model = model or settings.openai_model
        self.base_url, self._key, self._retries = base_url, api_key, retries

    def _client(self) -> "openai.OpenAI":
        return openai_client(self.settings, self.base_url, self._key, self._retries)

    def _explain(self, exc: Exception) -> GeneratorError:
        return explain(exc, self.settings, self.model, base=self.base_url)

    def _create(self, messages: Sequence[dict], max_tokens: int, temperature: float, **extra):
        """One chat-completions request (a stream when `stream=True`), failures explained."""
        client = self._client()
        return request(self.settings, self.model, lambda: client.chat.completions.create(
            model=self.model, messages=list(messages), max_tokens=max_tokens,
            temperature=temperature, **extra), base=self.base_url)

    def stream(self, messages: Sequence[dict], max_tokens: int,
               temperature: float = 0.0) -> Iterator[str]:
        """The reply, piece by piece, as the server streams it."""
        stream = self._create(messages, max_tokens, temperature, stream=True)
        finished = False
        try:
            for chunk in stream:
                piece, done = _delta_text(chunk)
                finished = finished or done
                if piece:
                    yield piece
            if not finished:
                raise GeneratorError(f"{self.base_url or endpoint()} closed the stream before "
                                     f"the answer was complete")
        except openai.OpenAIError as exc:
            raise self._explain(exc) from None
        except (ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
            raise self._explain(exc) from None
        finally:
            stream.close()

    def complete(self, messages: Sequence[dict], max_tokens: int,
                 temperature: float = 0.0, **extra) -> str:
        """The whole reply of one non-streamed request; `extra` goes to the request as is
        (e.g. `response_format` with a JSON schema, which llama.cpp's server enforces)."""
        reply = self._create(messages, max_tokens, temperature, **extra)
        try:
            content = reply.choices[0].message.content
        except (AttributeError, IndexError, TypeError) as exc:
            raise self._explain(exc) from None
        if content is not None and not isinstance(content, str):
            raise self._explain(TypeError("content is not text"))
        return content or ""

    def first_token(self, messages: Sequence[dict], top: int = 10) -> dict[str, float]:
        """The probability of each of the `top` likeliest first tokens of the reply (one token
        generated, `logprobs` from the server), keyed by the token's text. Empty when the
        server does not return log-probabilities."""
        reply = self._create(messages, 1, 0.0, logprobs=True, top_logprobs=top)
        try:
            content = (reply.choices[0].logprobs.content or [None])[0]
            if content is None:
                return {}
            return {str(t.token): math.exp(float(t.logprob)) for t in content.top_logprobs}
        except (AttributeError, IndexError, TypeError, ValueError):
            return {}


def _delta_text(chunk: Any) -> tuple[str, bool]:
    """(text, whether the choice finished) of one streamed chunk."""
    choices = chunk.choices
    if not choices:  # usage-only chunks
        return "", False
    if not isinstance(choices, list):
        raise TypeError("choices is not a list")
    choice = choices[0]
    delta = choice.delta
    content = getattr(delta, "content", None) if delta is not None else None
    if content is not None and not isinstance(content, str):
        raise TypeError("delta content is not text")
    return content or "", bool(getattr(choice, "finish_reason", None))
