"""One writer per store: the lock a server holds on its project's store.

Two servers on one project (two editors, an editor and a script) must never
both write ``.remora/remora.db``: they would mint different ids for the same
nodes and race each other's migrations and start-up recovery. The server that
owns the store holds an exclusive ``flock`` on ``.remora/owner.lock`` for its
whole life and writes who it is into the file (pid, host, start time); a
second server finds the lock taken, reads who holds it and serves read-only.

``flock`` locks belong to the open file, so the operating system releases
this one when the owner's process ends, however it ends (even ``SIGKILL``):
there is never a stale lock to clean up. The file descriptor is not
inheritable, so no child process (workers, the local model) keeps it alive.

A lock file deleted under a running owner (``rm -rf .remora``) no longer
protects anything: :meth:`StoreLock.still_held` tells, and the owner takes a
new one before it rebuilds its store (``store/rebuild.py``).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock (see claim())
    # no fcntl on Windows: claim() checks for None
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
"""``os.O_NOFOLLOW`` where there is one (not on Windows)."""
LOCK_NAME = "owner.lock"


@dataclass(frozen=True)
class OwnerInfo:
    """Who holds a store's lock, as far as its lock file says."""

    pid: int | None = None
    host: str | None = None
    started_at: float | None = None

    def describe(self) -> str:
        """``pid 1234`` (with the host when it is another machine)."""
        if self.pid is None:
            return "another process"
        where = (
            f" on {self.host}"
            if self.host and self.host != socket.gethostname()
            else ""
        )
        return f"pid {self.pid}{where}"

    @classmethod
    def read(cls, path: Path) -> OwnerInfo:
        """What the lock file at ``path`` says (empty if unreadable)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        if not isinstance(data, dict):
            return cls()
        pid, host, started = data.get("pid"), data.get("host"), data.get("started_at")
        return cls(
            pid=pid if isinstance(pid, int) else None,
            host=host if isinstance(host, str) else None,
            started_at=started if isinstance(started, int | float) else None,
        )


class StoreLock:
    """An exclusive lock held on ``.remora/owner.lock`` (see the module doc)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd
        stat = os.fstat(fd)
        self._identity = (stat.st_dev, stat.st_ino)

    @classmethod
    def claim(cls, directory: Path) -> StoreLock | OwnerInfo | None:
        """Take the lock of the store in ``directory``.

        The held lock; or who holds it when another process does; or None when
        no lock can be taken here (the directory is not writable and has no
        lock file, or the platform has no ``flock``) — then nobody can be
        writing either, or we cannot tell, and the caller decides.
        """
        if fcntl is None:
            log.warning("no flock on this platform: one writer per store unchecked")
            return None
        path = directory / LOCK_NAME
        try:
            # Never through a link (store/folder.py refuses one before).
            fd = os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o644)
        except OSError:
            try:  # a read-only store may still carry the lock file
                fd = os.open(path, os.O_RDONLY | NOFOLLOW)
            except OSError:
                return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return OwnerInfo.read(path)
        except OSError as error:  # a filesystem without locks
            os.close(fd)
            log.warning("cannot lock %s (%s)", path, error)
            return None
        lock = cls(path, fd)
        lock._write_owner()
        return lock

    def _write_owner(self) -> None:
        """Say who we are in the lock file (best effort: a read-only file stays)."""
        assert self._fd is not None
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started_at": time.time(),
        }
        try:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, json.dumps(info).encode("utf-8"), 0)
        except OSError:
            pass

    def still_held(self) -> bool:
        """Whether the lock file at :attr:`path` is still the one we hold (it
        was not deleted or replaced under us).
        """
        try:
            stat = os.stat(self.path)
        except OSError:
            return False
        return self._fd is not None and (stat.st_dev, stat.st_ino) == self._identity

    def release(self) -> None:
        """Let another server take the store (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the file drops its flock


def held_by_another(directory: Path) -> OwnerInfo | None:
    """Who holds the lock of the store in ``directory`` when it is another
    process; None when it is free (or cannot be checked). Checking takes the
    lock for an instant.
    """
    claim = StoreLock.claim(directory)
    if isinstance(claim, StoreLock):
        claim.release()
        return None
    return claim
