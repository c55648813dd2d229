"""Safe start-up for `rag serve`: where to bind, who may log in, an index to serve.

- Binds 127.0.0.1 by default. A host that is not a loopback address needs a login, unless
  `--no-auth` says otherwise explicitly.
- A login is `user:password`, or a file holding one `user:password` per line (`#` comments),
  given by `--auth` or the RAG_UI_AUTH environment variable (a secret: read here, never stored
  in Settings or printed).
- `ensure_index()` builds the corpus's index when it is missing or unfinished, with a progress
  bar in the terminal; an existing index is reused as it is, so a second start takes seconds.

Example: parse_auth("ann:s3cret") -> [("ann", "s3cret")]; is_loopback("0.0.0.0") -> False
"""

from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path
from typing import Mapping, TextIO

from rag.errors import ConfigError, IndexCorruptError, IndexNotFoundError
from rag.progress import ProgressBar
from rag.settings import Settings

AUTH_ENV = "RAG_UI_AUTH"


def is_loopback(host: str) -> bool:
    host = (host or "").strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _pair(line: str, where: str) -> tuple[str, str]:
    user, sep, password = line.strip().partition(":")
    if not sep or not user.strip() or not password:
        raise ConfigError(f"{where}: a login must look like user:password")
    return user.strip(), password


def parse_auth(value: str | None) -> list[tuple[str, str]] | None:
    """Logins from `user:password` or from a file of such lines; None when not given."""
    if value is None or not str(value).strip():
        return None
    value = str(value).strip()
    path = Path(value).expanduser()
    if path.is_file():
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read the login file {path}: {exc}") from None
        pairs = [_pair(ln, f"{path}:{i}") for i, ln in enumerate(lines, 1)
                 if ln.strip() and not ln.lstrip().startswith("#")]
        if not pairs:
            raise ConfigError(f"the login file {path} holds no user:password line")
        return pairs
    if ":" not in value:
        raise ConfigError(f"--auth / {AUTH_ENV}: {value!r} is neither user:password nor an "
                          f"existing file")
    return [_pair(value, f"--auth / {AUTH_ENV}")]


def resolve_auth(cli_value: str | None, env: Mapping[str, str] | None = None
                 ) -> list[tuple[str, str]] | None:
    env = os.environ if env is None else env
    return parse_auth(cli_value if cli_value else env.get(AUTH_ENV))


def check_exposure(host: str, logins: list | None, no_auth: bool) -> None:
    """Refuse to serve a non-loopback address without a login, unless told so explicitly."""
    if not is_loopback(host) and not logins and not no_auth:
        raise ConfigError(f"refusing to serve on {host} without a login: anyone on the network "
                          f"could use it. Set {AUTH_ENV}=user:password (or --auth FILE), or "
                          f"pass --no-auth if you really mean it")


def ensure_index(settings: Settings, out: TextIO = sys.stderr) -> bool:
    """Open the corpus's index, building it first if it is missing; True when it was built."""
    from rag import factory
    from rag.documents import reindex

    try:
        factory.index(settings)
        return False
    except (IndexNotFoundError, IndexCorruptError):
        pass
    print(f"rag serve: building the index of corpus {settings.corpus!r} (once; later starts "
          f"reuse it) ...", file=out, flush=True)
    with ProgressBar("embedding", file=out) as bar:  # closed on an error too: its own line
        report = reindex(settings, settings.corpus, progress=bar)
    print(f"rag serve: {report.summary()}", file=out, flush=True)
    factory.index(settings)
    return True


def warm_up(settings: Settings) -> None:
    """Load the embedding model and the BM25 side now, not on the first question; draw the
    map of the corpus now (once per index: kept beside it), not when the Map tab opens."""
    import rag
    from rag import factory

    factory.embedder(settings).embed(["warm up"])
    factory.index(settings).snapshot()
    rag.paper_map(settings.corpus, settings)
