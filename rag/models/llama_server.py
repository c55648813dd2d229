"""The one module that imports `xllamacpp`: llama.cpp's OpenAI-compatible server, in-process.

xllamacpp is a prebuilt wheel (no compiler needed) of llama.cpp with its C++ HTTP server inside.
`serve(gguf, ...)` starts one server per (model file, settings) per process, lazily and under a
lock, on 127.0.0.1 and a port the server picks itself (no race for a "free" port), with a random
API key, and keeps it for the life of the process: `rag serve` starts it on the first question
and reuses it for every later one. Generators talk to it with the same OpenAI-compatible client
as to any other server (`openai_api.ChatClient`), so the local and openai backends share one
code path.

- Two slots (`n_parallel = 2`, not unified): each keeps its own evaluated prefix, so the answer
  prompt and another prompt (a rewrite, a verdict) do not evict each other's cached system
  prompt. Each slot has `n_ctx` tokens (the server is given `SLOTS * n_ctx`).
- One warm-up request right after the start evaluates `warm` (the constant system prompt) into
  the cache; it also matters for safety: freeing a server that never answered can hang.
- There is no stop method: the server stops when the last reference goes, here at exit.
- Every start failure of the library is the same RuntimeError, with the cause only on stderr, so
  the file is checked here first (exists, size, the b"GGUF" magic) and the error says what to do.

`python -m rag.models.llama_server --model X.gguf [--port 0] [--alias NAME] [--api-key KEY]`
serves a model as a separate process (the real-server tests use it): it prints the base URL
(`http://127.0.0.1:PORT/v1`) as its first stdout line and serves until SIGTERM/SIGINT.

It does not download models, pick GPU layers, or expose the server beyond 127.0.0.1 in-process.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import GeneratorUnavailableError

SLOTS = 2
HOST = "127.0.0.1"
INSTALL_HINT = "install xllamacpp: `make install-local` or `pip install -e .[local]`"
_servers: dict[tuple, "Served"] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class Served:
    """A running server: its OpenAI base URL, the model name it answers to, its API key."""

    url: str
    alias: str
    key: str | None
    handle: Any = None  # the xllamacpp.Server; dropping the last reference stops it


def check_gguf(path: Path) -> None:
    """GeneratorUnavailableError unless `path` is a readable, non-trivial GGUF file."""
    if not path.is_file():
        raise GeneratorUnavailableError(f"the model file {path} does not exist")
    size = path.stat().st_size
    with open(path, "rb") as f:
        magic = f.read(4)
    if size < 1024 or magic != b"GGUF":
        raise GeneratorUnavailableError(f"{path} is not a GGUF model ({size:,} bytes, header "
                                        f"{magic!r}); delete it to have it assembled again")


def _params(path: Path, alias: str, n_ctx: int, threads: int, port: int, host: str,
            key: str | None):
    try:
        import xllamacpp
    except ImportError:
        raise GeneratorUnavailableError(f"the local model needs llama.cpp; {INSTALL_HINT}") from None
    p = xllamacpp.CommonParams()
    p.model.path = str(path)
    p.model_alias = {alias}
    p.n_ctx = n_ctx * SLOTS
    p.n_parallel = SLOTS
    p.kv_unified = False
    p.cpuparams.n_threads = threads
    p.cpuparams_batch.n_threads = threads
    p.hostnames = [host]
    p.port = port
    p.verbosity = 1  # errors only, to stderr
    if key:
        p.api_keys = [key]
    return xllamacpp, p


def start(path: Path, alias: str, n_ctx: int, threads: int, port: int = 0, host: str = HOST,
          key: str | None = None, warm: str = "") -> Served:
    """A new server for the GGUF at `path` (blocks while the model loads), warmed up."""
    path = Path(path)
    check_gguf(path)
    xllamacpp, params = _params(path, alias, n_ctx, threads, port, host, key)
    try:
        server = xllamacpp.Server(params)
    except RuntimeError:
        raise GeneratorUnavailableError(
            f"llama.cpp could not load {path} (n_ctx={n_ctx}, threads={threads}): see its "
            f"message on stderr; a damaged file can be deleted to have it assembled again, "
            f"and a lower RAG_LLM_CONTEXT_TOKENS needs less memory") from None
    messages = ([{"role": "system", "content": warm}] if warm else []) + [
        {"role": "user", "content": "hi"}]
    reply = server.handle_chat_completions({"messages": messages, "max_tokens": 1})
    if not isinstance(reply, dict) or "choices" not in reply:
        raise GeneratorUnavailableError(f"llama.cpp loaded {path} but its first request failed:"
                                        f" {str(reply)[:300]}")
    return Served(url=server.listening_address.rstrip("/") + "/v1", alias=alias, key=key,
                  handle=server)


def serve(path: Path, alias: str, n_ctx: int, threads: int = 0, warm: str = "") -> Served:
    """The process's server for these settings, started on first use (see module doc)."""
    threads = threads or os.cpu_count() or 1
    cache_key = (str(Path(path).resolve()), alias, n_ctx, threads, warm)
    with _lock:
        found = _servers.get(cache_key)
        if found is None:
            found = _servers[cache_key] = start(Path(path), alias, n_ctx, threads,
                                                key=secrets.token_urlsafe(24), warm=warm)
        return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag.models.llama_server",
                                     description="Serve a GGUF model over the OpenAI API.")
    parser.add_argument("--model", required=True, type=Path, help="the GGUF file")
    parser.add_argument("--host", default=HOST)
    parser.add_argument("--port", type=int, default=0, help="0: a free port, printed")
    parser.add_argument("--alias", default="local", help="the model name clients send")
    parser.add_argument("--n-ctx", type=int, default=2048, help="context tokens per slot")
    parser.add_argument("--threads", type=int, default=0, help="0: all cores")
    parser.add_argument("--api-key", default=os.environ.get("LLAMA_API_KEY") or None)
    args = parser.parse_args(argv)
    try:
        served = start(args.model, args.alias, args.n_ctx, args.threads or os.cpu_count() or 1,
                       args.port, args.host, args.api_key)
    except GeneratorUnavailableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(served.url, flush=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    os._exit(0)  # skip freeing the server: the process ends anyway, and freeing can block


if __name__ == "__main__":
    sys.exit(main())
