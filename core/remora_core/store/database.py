"""Opening the project database, applying migrations, and failing gracefully.

One SQLite file per project at ``.remora/remora.db``, opened with aiosqlite in WAL
mode with a busy timeout and foreign keys on. Every transaction and read is a
plain function of the ``sqlite3`` connection run in **one trip** to aiosqlite's
thread, which runs them in the order they were asked for. The directory gets a
``.gitignore`` of ``*`` so the store never lands in the user's version control.

If the database cannot be used — corrupt, locked by another process past the busy
timeout, created by a newer Remora, on a read-only disk — :class:`Database` says
so once through :attr:`Database.problem` and the ``on_problem`` callback, and every
later write is skipped: the engine keeps serving from memory. The file itself is
never deleted or overwritten, so nothing the user had is lost.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import aiosqlite

from remora_core.store.migrations import LATEST_VERSION, MIGRATIONS

log = logging.getLogger(__name__)

T = TypeVar("T")

STORE_DIR = ".remora"
CACHE_KIB = -32768
"""``PRAGMA cache_size`` (negative: KiB)."""

DB_NAME = "remora.db"


class Database:
    """The connection to one project's store, or the reason there is none."""

    def __init__(self, path: Path, on_problem: Callable[[str], None] | None = None):
        self.path = path
        self.connection: aiosqlite.Connection | None = None
        self.problem: str | None = None
        self._on_problem = on_problem

    @property
    def available(self) -> bool:
        """Whether reads and writes go to disk."""
        return self.connection is not None and self.problem is None

    @classmethod
    async def open(
        cls,
        root: Path,
        *,
        busy_timeout_ms: int = 2000,
        on_problem: Callable[[str], None] | None = None,
    ) -> Database:
        """Open (creating and migrating) the store of the project at ``root``."""
        directory = root / STORE_DIR
        database = cls(directory / DB_NAME, on_problem)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            ignore = directory / ".gitignore"
            if not ignore.exists():
                ignore.write_text("*\n", encoding="utf-8")
            database.connection = await aiosqlite.connect(
                database.path, isolation_level=None, timeout=busy_timeout_ms / 1000
            )
            await database._configure(busy_timeout_ms)
            await database._migrate()
        except (OSError, sqlite3.Error, StoreTooNew) as error:
            await database.fail("open", error)
        return database

    async def _configure(self, busy_timeout_ms: int) -> None:
        assert self.connection is not None
        await self.connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        cursor = await self.connection.execute("PRAGMA journal_mode = WAL")
        await cursor.fetchall()  # reading the header: fails here if corrupt
        await self.connection.execute("PRAGMA synchronous = NORMAL")
        await self.connection.execute("PRAGMA foreign_keys = ON")
        # 32 MB of page cache (the default is 2 MB): event indexes are written
        # at random places (ids are random), and misses dominate bursts.
        await self.connection.execute(f"PRAGMA cache_size = {CACHE_KIB}")

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
        if not self.available:
            return None
        abandoned = threading.Event()

        def run(db: sqlite3.Connection) -> T:
            if abandoned.is_set():  # the caller gave up before its turn came
                raise asyncio.CancelledError
            db.execute("BEGIN IMMEDIATE")
            try:
                result = work(db)
                db.execute("COMMIT")
            except BaseException:
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
        """Close the connection (idempotent)."""
        connection, self.connection = self.connection, None
        if connection is not None:
            try:
                await connection.close()
            except sqlite3.Error as error:
                log.warning("closing %s: %s", self.path, error)


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
    else:
        advice = "check the disk space and permissions of the .remora directory"
    return (
        f"Remora cannot use its project database {path} ({what}: {text}); {advice}. "
        "Serving from memory: ids will not persist until this is fixed."
    )
