"""The writer lock of a Chroma server, kept in the server itself: a lease record.

Processes on several machines that write to one Chroma server cannot share a file lock, so the
lock is a record in the server's `rag-locks` collection: owner (host:pid), a random token, since
and expires (Unix times). Taking it: drop the record if it has expired (only that record: the
delete is conditional on its token and expiry), add ours if absent (Chroma ignores an `add` of
an existing id), then read it back: ours, or whoever won. While held, a thread renews the expiry
every third of `ttl`, so a writer that is killed blocks the others for at most `ttl` seconds.

Example: machine A indexes; machine B's `rag index` stops at once with "another writer
(a-host:4242) has been writing to the Chroma server http://db:8000 since 2026-12-04 08:51:02
UTC; wait for it to finish, then run the command again".

A writer that stalled for longer than `ttl` finds its lease `lost` and stops at its next batch
(`check`). Not handled: clocks that disagree by more than `ttl` between machines (the expiry
is the writer's clock).
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid

from ..errors import IndexLockedError, RagError
from .store import Store

LOCKS = "rag-locks"
TTL_SECONDS = 30.0


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


def locked_message(meta: dict, where: str) -> str:
    return (f"another writer ({meta.get('owner', '?')}) has been writing to the Chroma server "
            f"{where} since {_when(float(meta.get('since', 0)))}; wait for it to finish, then "
            f"run the command again")


class Lease:
    """An exclusive, expiring lease on a Chroma server, renewed while held."""

    def __init__(self, store: Store, name: str = "writer", ttl: float = TTL_SECONDS):
        self.store, self.name, self.ttl = store, name, ttl
        self.owner = f"{socket.gethostname()}:{os.getpid()}"
        self.token = uuid.uuid4().hex
        self.lost = False  # set when a renewal found the lease taken over
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _col(self):
        return self.store.open(LOCKS, create_meta={"purpose": "rag writer leases"})

    def holder(self) -> dict | None:
        """The metadata of the lease now held (by anyone), or None."""
        col = self.store.open(LOCKS)
        found = col.records([self.name]) if col is not None else []
        if found and float(found[0][1].get("expires", 0)) > time.time():
            return found[0][1]
        return None

    def __enter__(self) -> "Lease":
        col = self._col()
        found = col.records([self.name])
        if found:
            meta = found[0][1]
            if float(meta.get("expires", 0)) > time.time():
                raise IndexLockedError(locked_message(meta, self.store.location))
            # Expired (its writer was killed): drop exactly that record, not a renewed one.
            col.delete([self.name], where={"$and": [{"token": meta.get("token", "")},
                                                     {"expires": meta.get("expires", 0)}]})
        now = time.time()
        col.add_new(self.name, [1.0], self.owner, {"owner": self.owner, "token": self.token,
                                                   "since": now, "expires": now + self.ttl})
        found = col.records([self.name])
        meta = found[0][1] if found else {}
        if meta.get("token") != self.token:
            raise IndexLockedError(locked_message(meta, self.store.location))
        self._since = now
        self._thread = threading.Thread(target=self._renew, args=(col,), daemon=True,
                                        name="rag-lease")
        self._thread.start()
        return self

    def check(self) -> None:
        """IndexLockedError if the lease was lost (this writer stalled longer than `ttl` and
        another took over): a writer calls this between batches and stops writing."""
        if self.lost:
            raise IndexLockedError(f"this writer's lock on the Chroma server "
                                   f"{self.store.location} ran out while it was stalled and "
                                   f"another writer may have taken over; run the command again")

    def _renew(self, col) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                found = col.records([self.name])
                if not found or found[0][1].get("token") != self.token:
                    self.lost = True
                    return
                col.update_meta(self.name, {**found[0][1], "expires": time.time() + self.ttl})
            except RagError:
                pass  # the server is away: the writer's own calls fail and say so

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        try:
            self._col().delete([self.name], where={"token": self.token})
        except RagError:
            pass  # unreachable: the lease expires by itself
