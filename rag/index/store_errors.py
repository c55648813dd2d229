"""What a failed Chroma call means for the user, as a RagError that says what to do next.

Only evidence of real damage suggests `rag index --rebuild` (which sets the old store aside):
SQLite's own verdicts on the file ("database disk image is malformed", "file is not a
database", codes 11 and 26), a missing table, or a store file that has gone missing. Everything
else says what failed and leaves the index alone:

- a full disk: free some space, then run `rag index` again;
- a programming error (`TypeError`, `AttributeError`, ...: chromadb's API changed under us):
  "chromadb raised TypeError: ... in Collection.upsert; this is a bug or an incompatible
  chromadb version (1.5.9), not a damaged index";
- a Chroma server that cannot be reached or failed: check that it is running;
- any other failure of the embedded store: what chromadb said, in which call.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ..errors import IndexCorruptError, RagError, StoreUnavailableError

# Everything a chromadb call may raise becomes a RagError: any Exception, and also the Rust
# side's pyo3 PanicException, a BaseException. These are left alone:
PASS_THROUGH = (KeyboardInterrupt, SystemExit, GeneratorExit)
# SQLite's words for a damaged file (SQLITE_CORRUPT is code 11, SQLITE_NOTADB code 26).
DAMAGE_MARKERS = ("database disk image is malformed", "file is not a database", "(code: 11)",
                  "(code: 26)", "no such table")
# Errors in the calling code, not in the data: an API that changed, a missing attribute.
BUG_TYPES = (TypeError, AttributeError, NameError, ImportError, NotImplementedError)
REBUILD = "rebuild it with `rag index --rebuild` (the damaged store is kept aside)"


def store_error(exc: BaseException, url: str, path: Path | None,
                operation: str = "") -> Exception:
    """The RagError to raise for `exc`, raised by chromadb during `operation`."""
    what = f"{type(exc).__name__}: {str(exc)[:200]}"
    where = f"the index under {path or 'the data directory'}"
    op = operation or _chroma_call(exc)
    if isinstance(exc, BUG_TYPES):
        return RagError(f"chromadb raised {what} in {op}; this is a bug or an incompatible "
                        f"chromadb version ({_chroma_version()}), not a damaged index: {where} "
                        f"was left as it is")
    full = _disk_full(exc, path)
    if full:
        return StoreUnavailableError(f"cannot write {where}: {full} ({what}); free some space, "
                                     f"then run `rag index` again")
    if _damaged(exc, path):
        if url:
            return StoreUnavailableError(f"the Chroma server at {url} reports a damaged "
                                         f"database ({what}) in {op}; repair or rebuild it there")
        err = IndexCorruptError(f"{where} is damaged ({what}); {REBUILD}")
        err.unreadable = True  # `rag index --rebuild` may set this store aside
        return err
    if url:
        return StoreUnavailableError(f"the Chroma server at {url} cannot be reached or failed "
                                     f"({what}) in {op}; check that it is running, or unset "
                                     f"RAG_CHROMA_URL")
    return StoreUnavailableError(f"chromadb failed in {op} on {where} ({what}); the index was "
                                 f"left as it is")


unavailable = store_error  # the name `collection.py` imports


def damaged(path: Path, reason: str) -> IndexCorruptError:
    """The error for a store file that is damaged beyond doubt (e.g. shorter than its header)."""
    err = IndexCorruptError(f"the index under {path} is damaged ({reason}); {REBUILD}")
    err.unreadable = True
    return err


def _damaged(exc: BaseException, path: Path | None) -> bool:
    text = str(exc).lower()
    if any(marker in text for marker in DAMAGE_MARKERS):
        return True
    # A store file that has gone missing (a segment deleted by hand, a half-copied directory):
    # Python names the file; chromadb's Rust side puts the path in its message.
    if path is None:
        return False
    missing = getattr(exc, "filename", None)
    if isinstance(exc, FileNotFoundError) and missing:
        return Path(str(missing)).resolve().is_relative_to(path.resolve())
    return "no such file or directory" in text and str(path).lower() in text


def _chroma_call(exc: BaseException) -> str:
    """The chromadb method the error came out of ("Collection.upsert"), or a generic name."""
    tb, name = exc.__traceback__, ""
    while tb is not None:
        code = tb.tb_frame.f_code
        if "chromadb" in Path(code.co_filename).parts and "<" not in code.co_qualname:
            name = name or code.co_qualname  # the outermost chromadb frame: the API we called
        tb = tb.tb_next
    return name or "a chromadb call"


def _chroma_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"chromadb {version('chromadb')}"
    except PackageNotFoundError:
        return "chromadb not installed"


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
