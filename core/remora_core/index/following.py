"""A server that does not own its project's store follows the one that does.

The first server on a project owns its store (``store/ownership.py``); a second
one (another editor on the same folder, an editor and a script) opens the
owner's file read-only and **follows** it, so both show the same node ids:

- every :data:`FOLLOW_INTERVAL_S` it asks SQLite whether the store changed
  (``PRAGMA data_version``) and, if so, adopts the files the owner wrote since
  the last look (``files.indexed_at``): their nodes and ids replace its own.
  Where its own view of a file differs from the owner's (a buffer open here,
  a file saved here the owner has not indexed yet), that view is matched
  again against the adopted nodes — the usual id matching, so definitions keep
  the owner's ids and only definitions the owner has never seen get ids of
  their own, until the owner stores them;
- it writes nothing: its events are ``persisted: false``, agents do not run
  (commands that would run or decide something answer an error naming the
  owner), and start-up recovery is left to the owner;
- when the owner goes away (the store's lock is free), it calls
  ``on_owner_gone``: the editor layer restarts the project, which then
  takes the lock and owns the store (a warm start: ids are kept, open buffers
  carried over). It does not take over in place: a fresh start is the one
  well-trodden way to migrate, recover interrupted runs and load agents' state.
- if the owner rebuilt the store (its file was deleted under it), the follower
  reopens the new file and adopts everything again. If the file stays missing
  for :data:`ORPHANED_CHECKS` looks and the lock is free, the owner died before
  rebuilding it: the follower copies what its connection still reads of the
  deleted file into place (``store/rebuild.py``) before taking over.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from remora_core.model import NodeKind
from remora_core.store.database import file_identity
from remora_core.store.ownership import StoreLock
from remora_core.store.rebuild import copy_store, put_in_place

if TYPE_CHECKING:
    from remora_core.index.code_index import CodeIndex
    from remora_core.index.disk import DiskSync
    from remora_core.store import NodeStore
    from remora_core.store.database import Database

log = logging.getLogger(__name__)

FOLLOW_INTERVAL_S = 1.0
"""How often a follower looks at the owner's store and lock."""
ORPHANED_CHECKS = 5
"""Looks finding no store file (deleted; a live owner rebuilds it within a
second) after which the follower checks whether the owner is gone too."""


class StoreFollower:
    """Keeps a read-only project in step with the store another server owns."""

    def __init__(
        self, index: CodeIndex, store: NodeStore, database: Database, disk: DiskSync
    ) -> None:
        self.index = index
        self.store = store
        self.database = database
        self.disk = disk
        """Re-reads, from disk, files where this server's view is not the owner's."""
        self.mark = 0.0
        """``indexed_at`` of the newest file write adopted so far."""
        self.version: int | None = None
        """``PRAGMA data_version`` at the last look."""
        self._missing_looks = 0
        """Looks that found no store file (deleted, not yet rebuilt)."""

    async def begin(self) -> None:
        """Note where the store stands, before the project loads it."""
        if self.database.available:
            self.mark = await self.store.newest_save()

    async def run(self, on_owner_gone: Callable[[], object] | None) -> None:
        """Follow until the project closes or the owner goes away."""
        while not self.index.closed:
            await asyncio.sleep(FOLLOW_INTERVAL_S)
            if self.index.closed:
                return
            if await self._owner_gone():
                log.warning("the owner of %s stopped", self.database.path)
                if on_owner_gone is not None:
                    on_owner_gone()
                return
            try:
                await self.sync()
            except sqlite3.Error as error:
                log.info("following %s: %s", self.database.path, error)

    async def _owner_gone(self) -> bool:
        """Whether the store's owner is gone (then the store is left in place
        for the restarted project to own).
        """
        path = self.database.path
        if file_identity(path) is None:  # deleted: its owner may be rebuilding it
            self._missing_looks += 1
            if self._missing_looks < ORPHANED_CHECKS:
                return False
            path.parent.mkdir(parents=True, exist_ok=True)
        else:
            self._missing_looks = 0
        claim = StoreLock.claim(path.parent)
        if not isinstance(claim, StoreLock):
            return False
        try:
            if file_identity(path) is None and self.database.connection is not None:
                # Its owner died after it was deleted: what we still read of
                # the deleted file is all that is left of it.
                copy = await self.database._in_thread(lambda db: copy_store(db, path))
                put_in_place(copy, path)
            return True
        finally:
            claim.release()  # the restarted project takes it again

    async def sync(self) -> None:
        """Adopt what the owner wrote since the last look."""
        database = self.database
        if database.problem is not None:
            return
        if database.connection is None:
            if not await database.connect_read_only():
                return  # the owner is still creating or migrating it
            self.mark, self.version = 0.0, None
        elif (current := file_identity(database.path)) != database.identity:
            if current is None:
                return  # deleted: keep reading it until its owner rebuilds it
            if not await database.reconnect_read_only():
                return  # rebuilt by its owner: not there yet
            self.mark, self.version = 0.0, None
        version = await database.read(_data_version, "following the store")
        if version is None or version == self.version:
            return
        self.version = version
        await self.adopt()

    async def adopt(self) -> None:
        """Take the files written since :attr:`mark` as the owner stored them."""
        index = self.index
        saved = await self.store.saved_since(self.mark)
        if not saved:
            return
        differing: list[str] = []
        async with index.lock:
            for record, written, nodes, edges in saved:
                self.mark = max(self.mark, written)
                file_node = next((n for n in nodes if n.kind is NodeKind.FILE), None)
                if file_node is None:
                    continue
                definitions = [n for n in nodes if n.kind is not NodeKind.FILE]
                index.graph.replace_file(file_node, definitions, edges)
                index.records[record.path] = record
                if record.status == "present":
                    index.modules.add(record.path)
                if record.path in index.documents:
                    index.refresh_document(record.path, with_references=True)
                elif record.status == "present":
                    differing.append(record.path)
        log.info("adopted %d files from %s", len(saved), self.database.path)
        if differing:  # re-read from disk only where our view is not the owner's
            await self.disk.files_changed(changed=differing)


def describe_read_only(database: Database) -> str | None:
    """What to tell the person about a store opened read-only (None if it was
    not): who owns it, or why it cannot be written.
    """
    if not database.read_only:
        return None
    directory = database.path.parent
    if database.owner is not None:
        return (
            f"Another Remora server ({database.owner.describe()}) owns the store of "
            f"{directory.parent.name} ({database.path}). This server serves its "
            "node ids read-only: agents run, and proposals are decided, in that "
            "server's editor. It takes over when that server stops."
        )
    if database.connection is None:
        return (
            f"Remora cannot create its project database in {directory} (it is "
            "read-only here): serving from memory; ids will not persist."
        )
    return (
        f"Remora's project database {database.path} cannot be written here (a "
        "read-only file or disk): its node ids are served as they are; changes "
        "last until the server stops."
    )


def _data_version(db: sqlite3.Connection) -> int:
    """A number that changes whenever another connection commits."""
    row = db.execute("PRAGMA data_version").fetchone()
    return int(row[0]) if row else 0
