"""An OpenAI-compatible chat API: `GET /v1/models` and `POST /v1/chat/completions`.

Served by `rag serve` beside the page (mounted on its app) and alone by `rag api`. One model per
generator this machine can run: `icml-rag` (the server's own choice, extractive unless an LLM
endpoint is set), `icml-rag-extractive`, and `icml-rag-local` / `icml-rag-openai` when those
can run. The last user message is the question, the earlier user/assistant messages its
history; system messages and sampling parameters are ignored.

The `content` is the answer with its `[n]` markers, then a numbered reference list, so any
client shows the sources; the message also carries `citations` (paper id, title, url, quoted
sentence) and `outcome`. Streaming sends the assistant role at once, then the checked answer
(a model's raw tokens are not sent: the citation check may renumber or replace them), and a
final chunk with `finish_reason` "stop" that carries the `citations` in its delta and at its
top level. An abstention is an ordinary answer. Errors are OpenAI's error objects: 400 bad JSON
or messages, 401 a missing login, 404 an unknown model, 413 a body over MAX_BODY bytes.

It is the only module that imports starlette.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, AsyncIterator

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route

import rag
from rag.answer.rewrite import normalise_history
from rag.errors import ConfigError, InputError, RagError
from rag.settings import Settings
from rag.types import Answer

from .asgi import Logins, RequireLogin
from .availability import generator_status
from .export import answer_with_references

MODEL = "icml-rag"
MAX_BODY = 1_000_000  # bytes of a request body; a question is at most a few thousand
OWNER = "icml-rag"


class ApiError(Exception):
    """An OpenAI-shaped error response."""

    def __init__(self, status: int, message: str, type_: str = "invalid_request_error",
                 param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.type, self.param, self.code = status, type_, param, code

    def body(self) -> dict[str, Any]:
        return {"error": {"message": str(self), "type": self.type, "param": self.param,
                          "code": self.code}}

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status)


def models(env: dict[str, str] | None = None) -> dict[str, str | None]:
    """Model id -> the generator it asks for (None: the server's own setting)."""
    out: dict[str, str | None] = {MODEL: None, f"{MODEL}-extractive": "extractive"}
    status = generator_status(env)
    for name in status:
        if name not in ("auto", "extractive") and status[name].available:
            out[f"{MODEL}-{name}"] = name
    return out


def _text(content: Any, where: str) -> str:
    """A message's content: a string, or a list of parts of which the text ones count."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content
                 if isinstance(p, dict) and p.get("type") == "text"]
        if all(isinstance(p, str) for p in parts):
            return "\n".join(parts)
    if content is None:
        return ""
    raise ApiError(400, f"{where}.content must be a string or a list of text parts",
                   param=where)


def parse_messages(messages: Any) -> tuple[str, list[tuple[str, str]]]:
    """(question, history) from chat messages: the last user message and the turns before."""
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "messages must be a non-empty list of {role, content} objects",
                       param="messages")
    plain = []
    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(m, dict) or m.get("role") not in ("system", "developer", "user",
                                                             "assistant", "tool"):
            raise ApiError(400, f"{where} must be an object with a role of system, developer, "
                                "user, assistant or tool", param=where)
        plain.append({"role": m["role"], "content": _text(m.get("content"), where)})
    turns = normalise_history(plain)  # the one history parser (rag.ask reads messages too)
    if messages[-1].get("role") != "user":
        raise ApiError(400, "the last message must be the user's question", param="messages")
    question = turns[-1][0]
    if not question.strip():
        raise ApiError(400, "the question is empty; type a question about the indexed papers",
                       param="messages")
    return question, turns[:-1]


async def _json_body(request: Request) -> dict[str, Any]:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BODY:
        raise ApiError(413, f"the request body is over {MAX_BODY} bytes", code="body_too_large")
    raw = bytearray()
    async for piece in request.stream():
        raw += piece
        if len(raw) > MAX_BODY:
            raise ApiError(413, f"the request body is over {MAX_BODY} bytes",
                           code="body_too_large")
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ApiError(400, f"the request body is not valid JSON ({exc})",
                       code="invalid_json") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object", code="invalid_json")
    return body


def citations(answer: Answer) -> list[dict[str, Any]]:
    """The answer's citations as its one view writes them (`Answer.to_dict`)."""
    return answer.to_dict()["citations"]


def _rag_error(exc: RagError) -> ApiError:
    if isinstance(exc, (InputError, ConfigError)):
        return ApiError(400, str(exc))
    return ApiError(503, str(exc), type_="server_error")


class ChatApi:
    """The routes' handlers, bound to the server's settings."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.models = models()

    async def list_models(self, request: Request) -> Response:
        created = int(time.time())
        return JSONResponse({"object": "list", "data": [
            {"id": name, "object": "model", "created": created, "owned_by": OWNER}
            for name in self.models]})

    async def not_found(self, request: Request) -> Response:
        routes = "this server has GET /v1/models and POST /v1/chat/completions"
        if request.path_params.get("path", "").strip("/") in ("models", "chat/completions"):
            return ApiError(405, f"{request.method} is not allowed on {request.url.path}; "
                                 f"{routes}", code="method_not_allowed").response()
        return ApiError(404, f"no route {request.method} {request.url.path}; {routes}",
                        code="unknown_url").response()

    async def chat(self, request: Request) -> Response:
        try:
            body = await _json_body(request)
            model = body.get("model")
            if not isinstance(model, str) or not model:
                raise ApiError(400, "model is required: GET /v1/models lists them",
                               param="model")
            if model not in self.models:
                raise ApiError(404, f"The model '{model}' does not exist; this server has "
                                    f"{', '.join(self.models)}", param="model",
                               code="model_not_found")
            question, history = parse_messages(body.get("messages"))
            stream = body.get("stream", False)
            if not isinstance(stream, bool):
                raise ApiError(400, "stream must be true or false", param="stream")
        except ApiError as exc:
            return exc.response()
        overrides = {} if self.models[model] is None else {"generator": self.models[model]}
        reply_id, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        if stream:
            return StreamingResponse(
                self._events(question, history, overrides, model, reply_id, created),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        try:
            answer = await self._ask(question, history, overrides)
        except ApiError as exc:
            return exc.response()
        found = citations(answer)
        return JSONResponse({
            "id": reply_id, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None, "message": {
                "role": "assistant", "content": answer_with_references(answer),
                "refusal": None, "citations": found, "outcome": answer.outcome,
                "decision": answer.decision,
                "notices": list(answer.notices)}}]},
            headers={"Server-Timing": f"ask;dur={answer.timings_ms.get('total', 0.0):.1f}"})

    async def _ask(self, question: str, history: list, overrides: dict) -> Answer:
        try:
            return await run_in_threadpool(rag.ask, question, history, self.settings,
                                           **overrides)
        except RagError as exc:
            raise _rag_error(exc) from None
        except Exception as exc:  # noqa: BLE001 - the client gets a line, never a traceback
            raise ApiError(500, f"internal error ({type(exc).__name__})",
                           type_="server_error") from None

    async def _events(self, question: str, history: list, overrides: dict, model: str,
                      reply_id: str, created: int) -> AsyncIterator[str]:
        def chunk(delta: dict, finish: str | None = None, **extra: Any) -> str:
            return "data: " + json.dumps({
                "id": reply_id, "object": "chat.completion.chunk", "created": created,
                "model": model, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                             "finish_reason": finish}], **extra},
                ensure_ascii=False) + "\n\n"

        yield chunk({"role": "assistant", "content": ""})
        try:
            answer = await self._ask(question, history, overrides)
        except ApiError as exc:
            yield "data: " + json.dumps(exc.body(), ensure_ascii=False) + "\n\n"
            yield "data: [DONE]\n\n"
            return
        for line in answer_with_references(answer).splitlines(keepends=True):
            yield chunk({"content": line})
        found = citations(answer)
        yield chunk({"citations": found, "outcome": answer.outcome,
                     "decision": answer.decision,
                     "notices": list(answer.notices)}, "stop", citations=found)
        yield "data: [DONE]\n\n"


def routes(settings: Settings, logins: Logins | None = None) -> list:
    """`/v1`, to mount on another app (`rag serve`'s)."""
    api = ChatApi(settings)
    inner = Starlette(routes=[
        Route("/models", api.list_models, methods=["GET"]),
        Route("/chat/completions", api.chat, methods=["POST"]),
        Route("/{path:path}", api.not_found,
              methods=["GET", "POST", "PUT", "PATCH", "DELETE"])])
    refusal = ApiError(401, "a login is required: use `user:password` of one of the server's "
                            "logins as the API key", code="invalid_api_key").body()
    return [Mount("/v1", app=RequireLogin(inner, logins, refusal))]


def app(settings: Settings, logins: Logins | None = None) -> Starlette:
    """The API alone (`rag api`)."""
    return Starlette(routes=routes(settings, logins))


def serve(host: str | None = None, port: int | None = None, corpus: str | None = None,
          auth: str | None = None, no_auth: bool = False) -> int:
    """`rag api`: the OpenAI-compatible API without the page."""
    from . import asgi, launch

    settings = Settings.load(**({"corpus": corpus} if corpus else {}))
    host, port = host or settings.ui_host, port or 8000
    logins = launch.resolve_auth(auth)
    launch.check_exposure(host, logins, no_auth)
    launch.ensure_index(settings)
    launch.warm_up(settings)
    print(f"rag api: http://{host}:{port}/v1 (corpus {settings.corpus}, models "
          f"{', '.join(models())}{', login required' if logins else ''})", flush=True)
    return asgi.run(app(settings, logins), host, port, "the OpenAI-compatible API")
