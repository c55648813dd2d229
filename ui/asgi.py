"""Serving the protocol endpoints (`rag mcp --http`, `rag api`): uvicorn, behind the login rule.

The rule is `rag serve`'s (launch.py): 127.0.0.1 by default; another address needs a login
(`--auth` or RAG_UI_AUTH) unless `--no-auth` says otherwise. With logins, every request must
carry `Authorization: Bearer user:password` of one of them, the API key an OpenAI client sends
and the header an MCP client's config sets. Without logins nothing is asked.

Example: bearer_ok("Bearer ann:s3cret", [("ann", "s3cret")]) -> True
"""

from __future__ import annotations

import hmac
import json
from typing import Any, Callable

from rag.errors import ConfigError

Logins = list[tuple[str, str]]


def bearer_ok(header: str | None, logins: Logins | None) -> bool:
    """Whether an Authorization header passes: anything when there are no logins."""
    if not logins:
        return True
    scheme, _, token = (header or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return False
    given = token.strip().encode("utf-8")
    # Every login is compared (no early exit), so timing does not tell which one was close.
    ok = [hmac.compare_digest(given, f"{u}:{p}".encode("utf-8")) for u, p in logins]
    return any(ok)


def _header(scope: dict, name: bytes) -> str | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return value.decode("latin-1")
    return None


class RequireLogin:
    """ASGI middleware: HTTP requests without a valid bearer login get `refusal`'s 401."""

    def __init__(self, app: Callable, logins: Logins | None,
                 refusal: dict[str, Any] | None = None):
        self.app, self.logins = app, logins
        self.refusal = refusal or {"error": "a login is required: send the header "
                                            "'Authorization: Bearer user:password'"}

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http" and not bearer_ok(_header(scope, b"authorization"),
                                                     self.logins):
            body = json.dumps(self.refusal).encode("utf-8")
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"www-authenticate", b"Bearer")]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def run(app: Callable, host: str, port: int, what: str) -> int:
    """Serve `app` on host:port until interrupted (uvicorn); a taken port is a ConfigError."""
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="auto")
    server = uvicorn.Server(config)
    try:
        server.run()
    except (OSError, SystemExit):  # uvicorn exits on a port it cannot bind
        if server.started:
            raise
        raise ConfigError(f"cannot serve {what} on {host}:{port} (the address is taken or not "
                          f"this machine's); choose another with --port") from None
    return 0
