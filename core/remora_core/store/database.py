"""Opening the project database, applying migrations, and failing gracefully.

One SQLite file per project at ``.remora/remora.db``, opened with aiosqlite in WAL
mode with a busy timeout and foreign keys on. Every transaction and read is a
plain function of the ``sqlite3`` connection run in **one trip** to aiosqlite's
thread, which runs them in the order they were asked for. The directory gets a
``.gitignore`` of ``*`` so the store never lands in the user's version control.
The folder and every file of the store must be the person's own real files
(``store/folder.py``): a link or someone else's file refuses the store.

One writer per store (``store/ownership.py``): :meth:`Database.open` first takes
the store's lock. The owner opens the file for writing and migrates it (under
the lock, so two servers never race a migration). A second server finds the
lock taken and opens the owner's file **read-only** (:attr:`Database.owner`
says who owns it); so does a server that cannot write the store at all (a
read-only directory or file: SQLite's ``immutable`` mode). Read-only, reads
work and every write is skipped quietly — the caller told the person once.

If the database cannot be used — corrupt, locked by another process past the busy
timeout, created by a newer Remora, the disk full — :class:`Database` says
so once through :attr:`Database.problem` and the ``on_problem`` callback, and every
later write is skipped: the engine keeps serving from memory. The first write
that fails marks the store broken *in the database thread*, so a write queued
behind it never lands after it (the event log relies on that order). The file
itself is never deleted or overwritten, so nothing the user had is lost.
``max_bytes`` (setting ``store.max_mb``) caps the file with ``PRAGMA
max_page_count``: beyond it writes fail like on a full disk. The WAL beside it
grows to ~40 MB between checkpoints and is cut back to 4 MB after each
(:data:`CHECKPOINT_PAGES`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import aiosqlite

from remora_core.store import folder
from remora_core.store.migrations import LATEST_VERSION, MIGRATIONS
from remora_core.store.ownership import OwnerInfo, StoreLock

log = logging.getLogger(__name__)

T = TypeVar("T")

STORE_DIR = ".remora"
CACHE_KIB = -32768
"""``PRAGMA cache_size`` (negative: KiB)."""
CHECKPOINT_PAGES = 10_000
"""``PRAGMA wal_autocheckpoint``: the WAL is copied into the database once it
holds this many pages (40 MB), not SQLite's 1,000. A first index writes the
same index pages again in each of its transactions (ids are random); at 1,000
each page was copied over ~5 times: 420 MB written and 210 MB read back for a
60 MB store (1.7 M lines), 0.15-0.2 s of CPU and ~0.3 s of waiting for disk
more than now (270 MB written)."""
WAL_KEEP_BYTES = 4 * 1024 * 1024
"""``PRAGMA journal_size_limit``: what the WAL file is cut back to once
copied in, so an idle store does not keep 40 MB of it on disk."""

DB_NAME = "remora.db"


class Database:
    """The connection to one project's store, or the reason there is none."""

    def __init__(self, path: Path, on_problem: Callable[[str], None] | None = None):
        self.path = path
        self.connection: aiosqlite.Connection | None = None
        self.problem: str | None = None
        self._on_problem = on_problem
        self.lock: StoreLock | None = None
        """The store's lock, while this process owns the store."""
        self.owner: OwnerInfo | None = None
        """Who owns the store, when another server does (then read-only)."""
        self.read_only = False
        """Writes are skipped: another server owns the store, or it cannot be
        written here."""
        self.identity: tuple[int, int] | None = None
        """(device, inode) of the file opened: another file at :attr:`path`
        means the store was deleted or replaced (``store/rebuild.py``)."""
        self.busy_timeout_ms = 2000
        self.max_bytes: int | None = None
        self._broken = False
        """Set in the database thread by the first write that failed."""
        self.rebuilding = asyncio.Lock()
        """Held while the store is checked and rebuilt (``store/rebuild.py``)."""

    @property
    def available(self) -> bool:
        """Whether reads (and, unless :attr:`read_only`, writes) go to disk."""
        return self.connection is not None and self.problem is None

    @property
    def writable(self) -> bool:
        """Whether writes go to disk."""
        return self.available and not self.read_only

    @classmethod
    async def open(
        cls,
        root: Path,
        *,
        busy_timeout_ms: int = 2000,
        on_problem: Callable[[str], None] | None = None,
        max_bytes: int | None = None,
    ) -> Database:
        """Open (creating and migrating) the store of the project at ``root`` —
        read-only when another server owns it or it cannot be written.
        """
        directory = root / STORE_DIR
        database = cls(directory / DB_NAME, on_problem)
        database.busy_timeout_ms = busy_timeout_ms
        database.max_bytes = max_bytes
        try:
            folder.prepare(directory)  # the person's own real files, or refused
            claim = StoreLock.claim(directory)
            if isinstance(claim, OwnerInfo):  # another server writes it
                database.owner = claim
                database.read_only = True
                await database.connect_read_only()
                return database
            database.lock = claim
            if not _writable(directory, database.path):
                database.read_only = True
                if not await database.connect_read_only(immutable=True):
                    log.warning("%s cannot be written nor read", database.path)
                return database
            folder.write_gitignore(directory)
            database.connection = await aiosqlite.connect(
                database.path, isolation_level=None, timeout=busy_timeout_ms / 1000
            )
            await database._in_thread(database.configure)
            await database._migrate()
            database.identity = file_identity(database.path)
        except (OSError, sqlite3.Error, StoreTooNew) as error:
            await database.fail("open", error)
        return database

    def configure(self, db: sqlite3.Connection) -> None:
        """Set a writable connection up (in the database thread)."""
        db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
        db.execute("PRAGMA journal_mode = WAL").fetchall()  # fails here if corrupt
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA foreign_keys = ON")
        # 32 MB of page cache (the default is 2 MB): event indexes are written
        # at random places (ids are random), and misses dominate bursts.
        db.execute(f"PRAGMA cache_size = {CACHE_KIB}")
        db.execute(f"PRAGMA wal_autocheckpoint = {CHECKPOINT_PAGES}")
        db.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}").fetchall()
        if self.max_bytes is not None:
            (page,) = db.execute("PRAGMA page_size").fetchone()
            pages = max(1, int(self.max_bytes) // int(page))
            db.execute(f"PRAGMA max_page_count = {pages}").fetchall()

    async def connect_read_only(self, *, immutable: bool = False) -> bool:
        """Open the store for reading only; False if it is not (yet) readable —
        missing, or not at this Remora's schema version (its owner may still be
        creating or migrating it).

        ``immutable``: nobody can write it (a read-only directory or file), so
        SQLite needs no shared memory file next to it.
        """
        if self.connection is not None:
            return True
        if not self.path.is_file():
            return False
        query = "mode=ro&immutable=1" if immutable else "mode=ro"
        connection = await aiosqlite.connect(
            f"{self.path.as_uri()}?{query}",
            uri=True,
            isolation_level=None,
            timeout=self.busy_timeout_ms / 1000,
        )
        try:
            await connection.execute(f"PRAGMA busy_timeout = {self.busy_timeout_ms}")
            await connection.execute("PRAGMA query_only = 1")
            cursor = await connection.execute("PRAGMA user_version")
            row = await cursor.fetchone()
            version = int(row[0]) if row else 0
        except sqlite3.Error as error:
            log.info("cannot read %s yet: %s", self.path, error)
            await connection.close()
            return False
        if version != LATEST_VERSION:
            log.info(
                "%s is at schema version %d, not %d", self.path, version, LATEST_VERSION
            )
            await connection.close()
            return False
        self.connection = connection
        self.identity = file_identity(self.path)
        return True

    async def reconnect_read_only(self) -> bool:
        """Reopen a read-only store whose file was replaced (its owner rebuilt
        it); False if the new one is not readable yet.
        """
        connection, self.connection = self.connection, None
        if connection is not None:
            await connection.close()
        return await self.connect_read_only()

    async def version(self) -> int:
        """The schema version recorded in the file."""
        assert self.connection is not None
        cursor = await self.connection.execute("PRAGMA user_version")
        row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def _migrate(self) -> None:
        assert self.connection is not None
        current = await self.version()
        if current > LATEST_VERSION:
            raise StoreTooNew(current)
        for version in range(current + 1, LATEST_VERSION + 1):
            log.info("migrating %s to schema version %d", self.path, version)
            script = MIGRATIONS[version - 1]
            try:
                await self.connection.executescript(
                    f"BEGIN IMMEDIATE;\n{script}\nPRAGMA user_version = {version};\n"
                    "COMMIT;"
                )
            except sqlite3.Error:
                if self.connection.in_transaction:
                    await self.connection.execute("ROLLBACK")
                raise

    async def transaction(
        self, work: Callable[[sqlite3.Connection], T], what: str
    ) -> T | None:
        """Run ``work`` in one write transaction; None (and a logged problem) if the
        store is unavailable or fails.

        ``work`` is a plain function of the ``sqlite3`` connection: BEGIN, ``work``
        and COMMIT run in **one trip** to aiosqlite's thread (a round trip per
        statement costs the event loop ~0.1 ms each, and the event log commits on
        the critical path of every agent turn). A transaction that started always
        finishes whole, committed or rolled back, in that thread: a caller
        cancelled meanwhile gets ``CancelledError`` while the outcome stands; one
        cancelled before its turn came leaves the store untouched. Transactions
        take turns in the order they were asked for: one thread runs them all.
        """
        if not self.writable:
            return None
        abandoned = threading.Event()

        def run(db: sqlite3.Connection) -> T:
            if abandoned.is_set():  # the caller gave up before its turn came
                raise asyncio.CancelledError
            if self._broken:  # an earlier write failed: none lands after it
                raise StoreBroken("an earlier write to the store failed")
            try:
                db.execute("BEGIN IMMEDIATE")
                result = work(db)
                db.execute("COMMIT")
            except BaseException as error:
                if isinstance(error, sqlite3.Error) and not isinstance(
                    error, sqlite3.IntegrityError | sqlite3.ProgrammingError
                ):
                    self._broken = True
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            return result

        try:
            return await self._in_thread(run)
        except asyncio.CancelledError:
            abandoned.set()
            raise
        except (sqlite3.IntegrityError, sqlite3.ProgrammingError):
            raise  # a bug in what was written, not a broken store
        except sqlite3.Error as error:
            await self.fail(what, error)
            return None

    async def read(
        self, work: Callable[[sqlite3.Connection], T], what: str
    ) -> T | None:
        """Run ``work`` (a plain function of the ``sqlite3`` connection) in one trip
        to the database thread; None (and a logged problem) if the store fails.
        """
        if not self.available:
            return None
        try:
            return await self._in_thread(work)
        except sqlite3.Error as error:
            await self.fail(what, error)
            return None

    async def _in_thread(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Call ``work(connection)`` in aiosqlite's thread, after what is queued.

        aiosqlite has no public call for running a function in its thread;
        ``Connection._execute`` is how its own methods do it (unchanged from 0.17
        to 0.22; the dependency is pinned below 0.23).
        """
        connection = self.connection
        assert connection is not None
        return await connection._execute(lambda: work(connection._conn))

    async def fail(self, what: str, error: BaseException) -> None:
        """Stop using the store after ``error``, telling the user once."""
        if self.problem is not None:
            return
        self.problem = describe_problem(self.path, what, error)
        log.error("%s", self.problem, exc_info=error)
        if self._on_problem is not None:
            self._on_problem(self.problem)

    async def close(self) -> None:
        """Close the connection and give up the store's lock (idempotent)."""
        connection, self.connection = self.connection, None
        try:
            if connection is not None:
                try:
                    await connection.close()
                except sqlite3.Error as error:
                    log.warning("closing %s: %s", self.path, error)
        finally:
            if self.lock is not None:
                self.lock.release()


class StoreBroken(sqlite3.OperationalError):
    """A write refused because an earlier one failed (see the module doc)."""


def _writable(directory: Path, path: Path) -> bool:
    """Whether this process may write the store (not a read-only file or disk)."""
    if not os.access(directory, os.W_OK):
        return False
    return not path.exists() or os.access(path, os.W_OK)


def file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path``; None if there is none."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


class StoreTooNew(Exception):
    """The database was written by a newer Remora."""

    def __init__(self, version: int) -> None:
        super().__init__(
            f"its schema version {version} is newer than this Remora understands "
            f"({LATEST_VERSION})"
        )


def describe_problem(path: Path, what: str, error: BaseException) -> str:
    """One sentence a person can act on."""
    text = str(error) or type(error).__name__
    if isinstance(error, folder.StoreRefused):
        return (
            f"Remora will not use its project store {path.parent}: {text}. "
            "Serving from memory: ids will not persist until this is fixed."
        )
    lowered = text.lower()
    if "locked" in lowered or "busy" in lowered:
        advice = (
            "another process holds it locked (another Remora or a database tool?); "
            "close it and restart the server"
        )
    elif "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        advice = (
            "the file is damaged; move it away and restart the server to rebuild it"
        )
    elif isinstance(error, StoreTooNew):
        advice = "upgrade remora-lsp or move the file away"
    elif "full" in lowered:
        advice = (
            "the disk is full (or the store reached its store.max_mb limit); "
            "free space or raise the limit, then restart the server"
        )
    else:
        advice = "check the disk space and permissions of the .remora directory"
    return (
        f"Remora cannot use its project database {path} ({what}: {text}); {advice}. "
        "Serving from memory: ids will not persist until this is fixed."
    )
