"""Writing an index safely: one writer at a time, and disk space kept for a failed write.

One writer at a time where the data lives: a file lock in the data directory for the embedded
store, a lease record in the Chroma server itself in server mode (`lease.py`), so writers on
several machines sharing one server are kept apart too."""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import time
from pathlib import Path
from typing import Callable

from ..errors import IndexLockedError, RagError, StoreUnavailableError
from .lease import Lease
from .store import Store, store_for


class WriteLock:
    """An exclusive lock on the data directory, failing fast with a clear message naming the
    holder (host:pid) and since when, which the holder writes beside the lock file. The system
    drops the lock of a killed process; its note is overwritten by the next holder."""

    def __init__(self, home: Path):
        from filelock import FileLock

        home.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(str(home / "index.lock"))
        self._home = home
        self._note = home / "index.lock.owner"

    def __enter__(self):
        from filelock import Timeout

        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            raise IndexLockedError(f"another `rag index` {self._holder()}is writing "
                                   f"{self._home}; wait for it to finish, then run the command "
                                   f"again") from None
        try:
            self._note.write_text(json.dumps({"owner": f"{socket.gethostname()}:{os.getpid()}",
                                              "since": time.time()}), encoding="utf-8")
        except OSError:
            pass  # the note only names the holder in the message of a second writer
        return self

    def _holder(self) -> str:
        """"(host:pid, since ... UTC) " from the holder's note (which a holder that took the
        lock a moment ago may still be writing: waited for up to a second), or ""."""
        for _ in range(20):
            try:
                note = json.loads(self._note.read_text(encoding="utf-8"))
                when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(note["since"])))
                return f"({note['owner']}, since {when}) "
            except (OSError, ValueError, KeyError, TypeError):
                time.sleep(0.05)
        return ""

    def __exit__(self, *exc):
        self._note.unlink(missing_ok=True)
        self._lock.release()

    def check(self) -> None:
        """A file lock cannot be lost while held (`Lease.check` can)."""


def writer_lock(settings) -> "WriteLock | Lease":
    """The lock every writer of the settings' store takes: the server's lease, or the file."""
    if settings.chroma_url:
        return Lease(store_for(settings), ttl=settings.lease_seconds)
    return WriteLock(settings.home_path)


def guarded(progress: Callable[[int, int], None] | None, lock) -> Callable[[int, int], None]:
    """`progress`, checking first that the writer still holds its lock (a lease can run out)."""
    def step(done: int, total: int) -> None:
        lock.check()
        if progress:
            progress(done, total)
    return step


SPACE_RESERVE_BYTES = 16 * 2**20


class SpaceReserve:
    """Disk space set aside while an embedded index is written, given back if the write fails.

    Chroma applies its write log to the index files on the next read, which needs room: after
    a write stopped by a full disk, even questions would fail. Holding 16 MB in a file while
    writing, and deleting it on failure, leaves that room. If the reserve itself does not fit,
    indexing stops before writing anything."""

    def __init__(self, home: Path, store: Store):
        self.path = None if store.url else home / ".space-reserve"
        if self.path is None:
            return
        try:
            with open(self.path, "wb") as f:
                os.posix_fallocate(f.fileno(), 0, SPACE_RESERVE_BYTES)
        except OSError as exc:
            self.release()
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                self.path = None  # no fallocate on this file system: go on without a reserve
                return
            free = shutil.disk_usage(home).free / 2**20
            raise StoreUnavailableError(
                f"cannot index into {home}: the disk is full ({free:.1f} MB free; indexing keeps "
                f"{SPACE_RESERVE_BYTES // 2**20} MB in reserve while it writes): free some "
                f"space, then run `rag index` again; nothing was written") from None

    def release(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def writer_running(settings) -> bool:
    """Whether a `rag index` holds the lock now (a dirty index is then being written, not
    abandoned)."""
    from filelock import FileLock, Timeout

    if settings.chroma_url:
        try:
            return Lease(store_for(settings)).holder() is not None
        except RagError:
            return False
    lock = FileLock(str(settings.home_path / "index.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    lock.release()
    return False
