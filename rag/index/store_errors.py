"""What a failed Chroma call means for the user: a full disk, an unreachable server, or a
store that cannot be read, each as a RagError saying what to do next."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..errors import IndexCorruptError, StoreUnavailableError

# Everything a chromadb call may raise becomes a RagError: any Exception, and also the Rust
# side's pyo3 PanicException, a BaseException (a damaged file can make chroma's Rust code panic).
PASS_THROUGH = (KeyboardInterrupt, SystemExit, GeneratorExit)


def unavailable(exc: BaseException, url: str, path: Path | None) -> Exception:
    full = _disk_full(exc, path)
    if full:
        return StoreUnavailableError(
            f"cannot write the index under {path}: {full} ({type(exc).__name__}: "
            f"{str(exc)[:160]}); free some space, then run `rag index` again")
    if url:
        return StoreUnavailableError(
            f"the Chroma server at {url} cannot be reached or failed ({type(exc).__name__}: "
            f"{str(exc)[:200]}); check that it is running, or unset RAG_CHROMA_URL")
    err = IndexCorruptError(
        f"the index under {path or 'the data directory'} cannot be read ({type(exc).__name__}: "
        f"{str(exc)[:200]}); rebuild it with `rag index --rebuild`")
    # SQLite's own verdicts on a damaged file: `rag index --rebuild` then sets the store aside.
    err.unreadable = any(m in str(exc) for m in ("malformed", "not a database", "(code: 11)",
                                                  "(code: 26)"))
    return err


LOW_SPACE_BYTES = 64 * 2**20


def _disk_full(exc: BaseException, path: Path | None) -> str:
    """Why a failed write probably failed for lack of space ('' if it did not). Chroma reports
    a full disk in many ways (sqlite's 'database or disk is full', a failed compaction), so the
    free space left is checked as well."""
    seen: BaseException | None = exc
    while seen is not None:
        text = str(seen).lower()
        if getattr(seen, "errno", None) == 28 or "no space left" in text or "disk is full" in text:
            return "the disk is full"
        seen = seen.__cause__ or seen.__context__
    if path is None:
        return ""
    try:
        usage = shutil.disk_usage(path)
    except OSError:
        return ""
    if usage.free < min(LOW_SPACE_BYTES, usage.total * 0.05) or usage.free < 2**20:
        return f"the disk is full ({usage.free / 2**20:.1f} MB free)"
    return ""
