"""The store's folder: only the person's own real files inside the project.

``.remora`` comes with the repository as often as not, and a repository can
ship it — or ``remora.db``, ``owner.lock``, ``.gitignore`` in it — as a
symbolic link to somewhere of the person's (``~/notes.db``, ``~/.bashrc``), or
hand over a folder another user owns. Following such a link would write the
store, its lock and its ``.gitignore`` outside the project, or add Remora's
tables to the person's own SQLite file. So before anything is created or
opened, :func:`prepare` checks (with ``lstat``, never following a link) that
``.remora`` is a real directory owned by the person and that each file Remora
writes there is, if present, a real file owned by the person; otherwise it
raises :class:`StoreRefused` with one sentence saying what is wrong and what
to do. The store then does not start (the server serves from memory).

The control socket (``control.sock``) is not checked here: the control server
removes a stale one itself, a link only as a link and a socket only when it is
the person's (``remora_cli/control/server.py``). This is a guard against what
a repository ships, not against another local user racing the server: such a
user cannot write the person's project folder in the first place.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

STORE_FILES = (
    "remora.db",
    "remora.db-wal",
    "remora.db-shm",
    "remora.db-journal",
    "remora.db.rebuilding",
    "owner.lock",
    ".gitignore",
    "local-model.log",
    "local-model.log.1",
)
"""Every file Remora writes in ``.remora`` (besides the control socket)."""
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
"""``os.O_NOFOLLOW`` where there is one (not on Windows)."""


class StoreRefused(OSError):
    """The store's folder or one of its files is not the person's own; the
    message says which, and what to do.
    """


def _whose(path: Path, shown: str) -> os.stat_result | None:
    """``lstat`` of ``path`` (None if missing); :class:`StoreRefused` if it is a
    link or someone else's.
    """
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(found.st_mode):
        target = os.readlink(path)
        raise StoreRefused(
            f"{shown} is a symbolic link (to {target}); Remora keeps its store "
            "only in real files inside the project: remove the link and restart"
        )
    if hasattr(os, "geteuid") and found.st_uid != os.geteuid():
        raise StoreRefused(
            f"{shown} is owned by uid {found.st_uid}, not by you "
            f"(uid {os.geteuid()}): remove it or take it over, and restart"
        )
    return found


def check(directory: Path) -> None:
    """:class:`StoreRefused` unless ``directory`` (the project's ``.remora``)
    and every store file in it are the person's own real files (missing ones
    are fine).
    """
    found = _whose(directory, ".remora")
    if found is not None and not stat.S_ISDIR(found.st_mode):
        raise StoreRefused(".remora is not a directory: move it away and restart")
    for name in STORE_FILES:
        entry = _whose(directory / name, f".remora/{name}")
        if entry is not None and not stat.S_ISREG(entry.st_mode):
            raise StoreRefused(
                f".remora/{name} is not a regular file: move it away and restart"
            )


def prepare(directory: Path) -> None:
    """Make sure ``directory`` is the person's own real store folder, creating
    it when missing; :class:`StoreRefused` (see :func:`check`) or the
    ``OSError`` of a read-only disk otherwise.
    """
    check(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only disk: an existing store is still read
        if not directory.is_dir():
            raise
    check(directory)  # made by someone else meanwhile: checked again


def write_gitignore(directory: Path) -> None:
    """Give the store a ``.gitignore`` of ``*`` unless it has one, never
    following a link (``O_NOFOLLOW``; ``O_EXCL`` leaves one that exists).
    """
    try:
        fd = os.open(
            directory / ".gitignore",
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW,
            0o644,
        )
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write("*\n")
