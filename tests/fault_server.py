"""A misbehaving OpenAI-compatible server for the fault-injection tests.

A stdlib `ThreadingHTTPServer` on 127.0.0.1 (a free port, a daemon thread) that speaks enough
of the protocol for the `openai` client: `POST /v1/chat/completions` (streamed as SSE or as one
JSON body), `GET /v1/models` and `POST /v1/embeddings`. Each chat request takes the next
behaviour from `plan` (then `default`):

    ok         the answer from `answer(body)`, streamed word by word when asked to stream
    500 / 503  an HTTP error with an OpenAI-style JSON body
    429        rate-limited, with `Retry-After: 0.2`
    401        wrong key; the body echoes the key it was sent, as some servers do
    404        unknown model
    stall      streams two words, then sends nothing until the server stops
    stall_head accepts the request and never answers (not even headers)
    malformed  streams two words, then a chunk that is not JSON (a non-streamed body: not JSON)
    drop       streams two words, then closes the connection without `[DONE]`

Every request is recorded (`requests`: path, headers, parsed body) so tests can read the
prompts that were sent. Embeddings are deterministic hashed bags of words: texts that share
words get similar vectors, so they behave like (poor) real embeddings.

Example:
    with FaultServer(plan=["500", "ok"]) as server:
        os.environ["OPENAI_BASE_URL"] = server.url   # http://127.0.0.1:PORT/v1
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

ABSTRACT = re.compile(r'<abstract n="(\d+)" title="([^"]*)">\n(.*?)\n</abstract>', re.S)
MODEL = "fault-model"


def passages_in(body: dict) -> list[tuple[int, str, str]]:
    """(n, title, text) of every delimited passage in the request's last user message."""
    user = [m for m in body.get("messages", []) if m.get("role") == "user"][-1]["content"]
    return [(int(n), t, x) for n, t, x in ABSTRACT.findall(user)]


def quote_first_passage(body: dict) -> str:
    """A faithful answer: the first sentence of passage [1], cited."""
    found = passages_in(body)
    if not found:
        return "No passages were given."
    first = re.split(r"(?<=[.!?])\s+", found[0][2].strip())[0].rstrip(".")
    return f"{first} [1]."


class FaultServer:
    def __init__(self, plan: list[str] | None = None, default: str = "ok",
                 answer: Callable[[dict], str] | str = quote_first_passage,
                 rewrite: str = "", models: tuple[str, ...] = (MODEL,),
                 yes: float | None = None, delay: float = 0.0):
        self.plan = list(plan or [])
        self.default = default
        self.answer = answer
        self.rewrite = rewrite  # reply to non-streamed requests when set (the query rewrite)
        self.models = models
        self.yes = yes  # P(YES) given as the first token's log-probabilities, when asked for
        self.delay = delay  # seconds before each streamed word: a slow model
        self.requests: list[dict] = []
        self.stop_event = threading.Event()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> "FaultServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop_event.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def chat_requests(self) -> list[dict]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def next_behaviour(self) -> str:
        with self._lock:
            return self.plan.pop(0) if self.plan else self.default

    def reply_text(self, body: dict) -> str:
        if self.rewrite and not body.get("stream"):
            return self.rewrite
        return self.answer(body) if callable(self.answer) else self.answer


def _handler(server: FaultServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # the body ends when the connection closes

        def log_message(self, *args) -> None:  # keep test output clean
            pass

        def _record(self, body: dict | None) -> None:
            with server._lock:
                headers = {k.lower(): v for k, v in self.headers.items()}
                server.requests.append({"path": self.path, "headers": headers, "body": body})

        def _json(self, status: int, payload: dict, headers: dict | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str, code: str, headers: dict | None = None):
            self._json(status, {"error": {"message": message, "type": code, "code": code}},
                       headers)

        def do_GET(self) -> None:
            self._record(None)
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [
                    {"id": m, "object": "model", "owned_by": "tests"} for m in server.models]})
            else:
                self._error(404, f"no route {self.path}", "not_found")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"unparsed": raw.decode("utf-8", "replace")}
            self._record(body)
            if self.path.endswith("/embeddings"):
                return self._embeddings(body)
            if not self.path.endswith("/chat/completions"):
                return self._error(404, f"no route {self.path}", "not_found")
            self._chat(body, server.next_behaviour())

        def _embeddings(self, body: dict) -> None:
            texts = body.get("input", [])
            texts = [texts] if isinstance(texts, str) else texts
            self._json(200, {"object": "list", "model": body.get("model"), "data": [
                {"object": "embedding", "index": i, "embedding": hashed_vector(t)}
                for i, t in enumerate(texts)]})

        def _chat(self, body: dict, behaviour: str) -> None:
            if behaviour in ("500", "503"):
                return self._error(int(behaviour), "The server had an error", "server_error")
            if behaviour == "429":
                return self._error(429, "Rate limit reached", "rate_limit_exceeded",
                                   {"Retry-After": "0.2"})
            if behaviour == "401":
                sent = self.headers.get("Authorization", "").removeprefix("Bearer ")
                return self._error(401, f"Incorrect API key provided: {sent}.",
                                   "invalid_api_key")
            if behaviour == "404":
                return self._error(404, f"The model `{body.get('model')}` does not exist",
                                   "model_not_found")
            if behaviour == "stall_head":
                server.stop_event.wait(60)
                return
            text = server.reply_text(body)
            if not body.get("stream"):
                if behaviour == "malformed":
                    return self._raw(200, b'{"id": "x", "choices": [{"message": {"conte')
                if behaviour == "stall":
                    server.stop_event.wait(60)
                    return
                reply = completion(text, body.get("model"))
                if body.get("logprobs") and server.yes is not None:
                    reply["choices"][0]["logprobs"] = yes_no_logprobs(server.yes)
                return self._json(200, reply)
            self._stream(text, behaviour, body.get("model"))

        def _raw(self, status: int, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, text: str, behaviour: str, model: str | None) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()

            def event(payload: str) -> None:
                self.wfile.write(f"data: {payload}\n\n".encode())
                self.wfile.flush()

            event(json.dumps(chunk({"role": "assistant", "content": ""}, model)))
            words = re.findall(r"\S+\s*", text)
            for i, word in enumerate(words):
                if i == 2 and behaviour in ("stall", "malformed", "drop"):
                    if behaviour == "stall":
                        server.stop_event.wait(60)
                    elif behaviour == "malformed":
                        event('{"id": "chatcmpl-x", "choices": [{"delta": {"content": "oops')
                        time.sleep(0.05)
                    # "drop": return without [DONE]; the connection closes
                    return
                server.stop_event.wait(server.delay)
                event(json.dumps(chunk({"content": word}, model)))
            event(json.dumps(chunk({}, model, finish="stop")))
            event("[DONE]")

    return Handler


def chunk(delta: dict, model: str | None, finish: str | None = None) -> dict:
    return {"id": "chatcmpl-fault", "object": "chat.completion.chunk", "created": 0,
            "model": model or MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def completion(text: str, model: str | None) -> dict:
    return {"id": "chatcmpl-fault", "object": "chat.completion", "created": 0,
            "model": model or MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}


def yes_no_logprobs(yes: float) -> dict:
    """The `logprobs` of a one-token reply: YES with probability `yes`, NO with the rest."""
    top = [{"token": t, "logprob": math.log(max(p, 1e-12)), "bytes": None}
           for t, p in (("YES", yes), ("NO", 1 - yes))]
    best = max(top, key=lambda t: t["logprob"])
    return {"content": [{**best, "top_logprobs": top}]}


def hashed_vector(text: str, dim: int = 64) -> list[float]:
    """A bag of hashed lower-cased words: shared words, similar vectors."""
    vec = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        h = int(hashlib.md5(word.encode()).hexdigest(), 16)
        vec[h % dim] += 1.0 if (h >> 8) % 2 else -1.0
    return vec
