"""Rebuilding a store that was deleted or replaced under a running server.

``rm -rf .remora`` (what ``git clean -fdx`` does, the directory being ignored)
while a server runs leaves SQLite writing into a file nobody can see any more:
everything would be gone at the next start — ids re-minted, proposals lost.
The owner notices within :data:`STORE_CHECK_S` (``Project`` checks that the
file at ``.remora/remora.db`` is still the one it opened, and that its lock
file is still its own) and rebuilds the store from what it holds: its open
connection still reads the deleted file, so SQLite's online backup copies
every table — nodes and their ids, pending proposals, events, runs, agents'
chat history, key-value memory, overlays and subscriptions — into a new file.
The copy, putting it in place and switching the connection to it happen in the
database thread as one job between two transactions, so no write lands in the
old file after the copy. Writes made between the deletion and the check are in
the copy too; only a crash in that window (at most a second) loses them.

A file found in its place (someone else's) is moved aside — never deleted —
and the person is told where. The lock is taken again first: if another server
took the store meanwhile, this one stops writing (one message) rather than
fight over it. The person is told once what happened.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from remora_core.store import folder
from remora_core.store.database import file_identity
from remora_core.store.ownership import OwnerInfo, StoreLock

if TYPE_CHECKING:
    from pathlib import Path

    from remora_core.store.database import Database

log = logging.getLogger(__name__)

STORE_CHECK_S = 1.0
"""How often the owner checks that its store is still where it left it."""


class StoreTaken(Exception):
    """Another server took the store while its file was gone."""

    def __init__(self, owner: OwnerInfo) -> None:
        super().__init__(
            f"another Remora server ({owner.describe()}) took the store while it "
            "was gone; this server stops writing (restart it to follow that one)"
        )


async def keep_store(
    database: Database, closed: Callable[[], bool], tell: Callable[[str], None]
) -> None:
    """Check the store every :data:`STORE_CHECK_S` until ``closed()``; rebuild
    it when it is gone, and ``tell`` the person.
    """
    while not closed():
        await asyncio.sleep(STORE_CHECK_S)
        if closed() or not database.writable:
            return
        # Shielded: this task is cancelled when the project closes, maybe
        # while a rebuild waits in the database thread behind the shutdown's
        # writes. The rebuild goes on, the check at close waits for it
        # (``Database.rebuilding``) and finds nothing left to do, and the
        # person is still told what happened.
        check = asyncio.ensure_future(rebuild_if_gone(database))
        check.add_done_callback(lambda done: _tell_outcome(done, tell))
        await asyncio.shield(check)


def _tell_outcome(check: asyncio.Future[str | None], tell: Callable[[str], None]):
    """Say what a finished check did (its error, if it failed)."""
    if check.cancelled():
        return
    error = check.exception()
    if error is not None:
        log.error("checking the store failed: %s", error, exc_info=error)
    elif (message := check.result()) is not None:
        tell(message)


async def rebuild_if_gone(database: Database) -> str | None:
    """Rebuild the store if its file was deleted or replaced; what happened,
    for the person (None if nothing did).

    One check at a time per store: the periodic check and the one at close
    can overlap (a rebuild waits in the database thread behind the
    shutdown's writes), and a second check looking while the first was
    putting its copy in place would take that copy for someone else's file,
    move it aside and tell the person the store was "replaced".
    """
    async with database.rebuilding:
        return await _rebuild_if_gone(database)


async def _rebuild_if_gone(database: Database) -> str | None:
    if not database.writable or database.identity is None:
        return None
    current = file_identity(database.path)
    lock_held = database.lock is None or database.lock.still_held()
    if current == database.identity and lock_held:
        return None
    directory = database.path.parent
    try:
        folder.prepare(directory)  # not through a link put in its place
        if not lock_held:
            claim = StoreLock.claim(directory)
            if isinstance(claim, OwnerInfo):
                await database.fail("rebuilding", StoreTaken(claim))
                return None
            previous, database.lock = database.lock, claim
            if previous is not None:
                previous.release()
        if current == database.identity:
            return None  # only the lock file had gone: taken again
        folder.write_gitignore(directory)
        moved = await database._in_thread(lambda db: _copy_and_switch(database, db))
    except (OSError, sqlite3.Error) as error:
        await database.fail("rebuilding", error)
        return None
    what = "deleted" if current is None else "replaced"
    message = (
        f"Remora's store {database.path} was {what} while the server ran; it was "
        "rebuilt from what this server holds (node ids, proposals, agents' memory "
        "and history, runs and events are kept)."
    )
    if moved is not None:
        message += f" The file found in its place was moved to {moved}."
    log.warning("%s", message)
    return message


def copy_store(db: sqlite3.Connection, path: Path) -> Path:
    """Copy what ``db`` reads into a new file next to ``path`` (in ``db``'s
    thread); the copy.
    """
    temporary = path.with_name(path.name + ".rebuilding")
    temporary.unlink(missing_ok=True)
    target = sqlite3.connect(temporary)
    try:
        db.backup(target)
    finally:
        target.close()
    return temporary


def put_in_place(copy: Path, path: Path) -> Path | None:
    """Make ``copy`` the store at ``path``; where a file found there was moved,
    if one was.

    Journal files left at ``path`` are moved to names of their own
    (``.stale-…``): replayed onto the copy, or onto the file moved aside, they
    would corrupt it (a WAL is not tied to its database file).
    """
    stamp = int(time.time())
    moved = None
    if path.exists():
        moved = path.with_name(f"{path.name}.replaced-{stamp}")
        os.replace(path, moved)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            os.replace(side, path.with_name(f"{path.name}.stale-{stamp}{suffix}"))
    os.replace(copy, path)
    return moved


def _copy_and_switch(database: Database, db: sqlite3.Connection) -> Path | None:
    """Copy the store into place and point the connection at the copy."""
    connection = database.connection
    assert connection is not None
    copy = copy_store(db, database.path)
    # Closed before anything is opened at the path: when only the main file
    # was replaced, the journal files there are still this connection's, and
    # closing checkpoints and removes them.
    db.close()
    moved = put_in_place(copy, database.path)
    fresh = sqlite3.connect(
        database.path,
        isolation_level=None,
        timeout=database.busy_timeout_ms / 1000,
    )
    database.configure(fresh)
    # aiosqlite runs every job on ``_connection`` (see Database._in_thread);
    # swapping it here, in its thread, is atomic with respect to other jobs.
    connection._connection = fresh
    # With the switch, not after the await: a caller cancelled meanwhile (a
    # close) must not leave the new file looking like someone else's.
    database.identity = file_identity(database.path)
    return moved
