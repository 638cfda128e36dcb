"""Loading the stored graph at start-up: file nodes now, the rest when needed.

A warm start used to read every node and edge before anything else could
happen (1.4 s for the 74k nodes of the CPython stdlib), although an editor
needs one file's outline first. Now :func:`open_graph` reads the file records
(what indexing compares with the disk; each names its file's node) and
attaches the graph to a :class:`StoredGraph`: a private read-only SQLite
connection that
:class:`~remora_core.index.codegraph.CodeGraph` asks, synchronously and cheaply (an
indexed query per file or per node), for whatever it has not loaded yet. Once
the workspace is indexed, :func:`fill_graph` loads the rest in small batches
between other work, whenever the person pauses, so requests are never queued
behind it for long and questions about the whole project end up answered
from memory. Symbol searches meanwhile are answered from the name index kept
in the store (``symbol_snapshot.py``), which :class:`StoredNames` reads while
the workspace is indexed and builds again when it is missing or out of date.

Why synchronous reads on the event loop: the graph's readers are synchronous
(an outline, a hover, an agent's prompt), and one file's rows take a fraction
of a millisecond. The connection is separate from the database thread's, so a
long transaction there never delays them (SQLite's WAL lets readers run beside
the writer). Only the owner of a writable store loads lazily; a server
following another one's store, or a store that cannot be written, loads
everything at once, as a changing or immutable store is simpler read whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import sqlite3
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from remora_core.editor_first import until_quiet
from remora_core.index.collector import collector_paused
from remora_core.index.symbol_snapshot import (
    SymbolSnapshot,
    build_from,
    opened,
    read_stored,
    write_stored,
)
from remora_core.index.workers import start_worker
from remora_core.model import AgentStatus, CodeNode, Edge, EdgeKind
from remora_core.store.nodes import (
    EDGE_KINDS,
    FILE_COLUMNS,
    NODE_COLUMNS,
    FileRecord,
    row_node,
)

if TYPE_CHECKING:
    from remora_core.index.codegraph import CodeGraph
    from remora_core.store.database import Database
    from remora_core.store.nodes import NodeStore

log = logging.getLogger(__name__)

T = TypeVar("T")

FILL_DELAY_S = 1.0
"""Quiet time after indexing before the rest is loaded: the files a person
opens first are served without anything else competing for the process."""
TALLY_WAIT_S = 10.0
"""The longest a question waits for the tally (its thread may be slowed by a
busy store; the event loop must never wait on it for good)."""
FILL_BATCH = 8
"""Files loaded per step in the background (a few milliseconds each)."""
FILL_QUIET_S = 0.5
"""How long after a search or an edit the background load goes on."""

NAMES_QUIET_S = 1.0
"""How long nobody must have searched or edited before the stored name index
is built (a process of its own: ~2 s of a core for 1.7 M lines). Built at
once after a cold index of a large project, it ran beside the person's first
keystrokes, and documentSymbol after an edit took a third longer then, its
p95 up to twice the small project's (``bench/index_large.py``). Nobody
waits for it: a start that finds none searches the live index, and builds it.
"""

NAMES_READ_DELAY_S = 0.3
"""How long after the stored graph is opened the stored name index is read,
unless a search asks for it first. Reading it (11 MB for 1.7 M lines, ~30
ms) is only for symbol searches: started at once it ran beside the editor's
first requests after a warm start, and the first outline of a file took a
median 72 ms instead of 46 (12 starts each, interleaved), up to 110 ms."""
HURRIED_BATCH = 128
"""Files loaded per step when a request waits for them (~50 ms)."""
SYMBOL_BATCH = 32
"""Files added to the name index per step in the background (~0.2 ms each)."""
SYMBOL_PAUSE_S = 0.02
"""Between such steps while the workspace is being indexed."""
STALE_USED = 256
"""At most this many files changed since the stored name index was built for
it to be used (each is loaded from the store at start, ~0.6 ms)."""
STALE_KEPT = 16
"""Above this many, the stored name index is built again once the graph is
whole."""

_NODES = f"SELECT {NODE_COLUMNS} FROM nodes WHERE file_path = ?"
_ACTIVE = "SELECT COUNT(*) FROM nodes WHERE status = 'active'"
_BUSY = (
    "SELECT DISTINCT agent_status, file_path FROM nodes WHERE agent_status != 'idle'"
)
_IDS_PER_QUERY = 500
_EDGES = (
    "SELECT from_id, to_id, kind FROM edges WHERE file_path = ? AND kind != 'parent_of'"
)


class StoredGraph:
    """The graph as stored, read file by file on a connection of its own."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self._connection: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None
        """The store file the connection reads (a rebuilt store is reopened)."""
        self._failed = False
        # Two scans of the whole table, made in a thread of their own while the
        # project starts, in the order they are asked for.
        self._busy: Future[dict[str, set[str]]] = Future()
        """Agent status → paths with stored nodes of that status (all but
        ``idle``): asked when the swarm starts."""
        self._active: Future[int] = Future()
        """How many stored nodes are active: asked when indexing ends."""
        threading.Thread(
            target=self._tally, name="remora: tallying the store", daemon=True
        ).start()

    def _tally(self) -> None:
        busy: dict[str, set[str]] = {}
        active = 0
        try:
            db = self._connect()
            try:
                for status, path in db.execute(_BUSY):
                    busy.setdefault(status, set()).add(path)
                self._busy.set_result(busy)
                (active,) = db.execute(_ACTIVE).fetchone()
            finally:
                db.close()
        except Exception as error:  # whatever it is, nobody may wait forever
            log.error("cannot tally the store %s: %s", self.database.path, error)
        finally:
            if not self._busy.done():
                self._busy.set_result(busy)
            self._active.set_result(int(active))

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(
            f"{self.database.path.absolute().as_uri()}?mode=ro",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
            timeout=self.database.busy_timeout_ms / 1000,
        )
        connection.execute("PRAGMA query_only = 1")
        return connection

    def _db(self) -> sqlite3.Connection | None:
        if self._failed:
            return None
        if self._connection is not None and self._identity == self.database.identity:
            return self._connection
        self.close()
        try:
            self._connection = self._connect()
        except sqlite3.Error as error:
            self._fail(error)
            return None
        self._identity = self.database.identity
        return self._connection

    def _fail(self, error: sqlite3.Error) -> None:
        # The store itself is failing (the database thread says so to the
        # person); what is not loaded yet stays unknown, as after a failed load.
        log.error("cannot read the stored graph of %s: %s", self.database.path, error)
        self._failed = True
        self.close()

    def _rows(self, sql: str, parameters: tuple = ()) -> list[tuple]:
        db = self._db()
        if db is None:
            return []
        try:
            return db.execute(sql, parameters).fetchall()
        except sqlite3.Error as error:
            self._fail(error)
            return []

    def contents(
        self, paths: list[str]
    ) -> dict[str, tuple[list[CodeNode], list[Edge]]]:
        """Nodes and ``calls``/``imports`` edges stored for each path."""
        found = {}
        for path in paths:
            nodes = [row_node(row) for row in self._rows(_NODES, (path,))]
            edges = [
                Edge(f, t, EDGE_KINDS[k]) for f, t, k in self._rows(_EDGES, (path,))
            ]
            found[path] = (nodes, edges)
        return found

    def nodes(self, ids: list[str]) -> list[CodeNode]:
        """The stored nodes with these ids (those that are stored)."""
        found = []
        for start in range(0, len(ids), _IDS_PER_QUERY):
            chunk = ids[start : start + _IDS_PER_QUERY]
            marks = ", ".join("?" * len(chunk))
            sql = f"SELECT {NODE_COLUMNS} FROM nodes WHERE id IN ({marks})"
            found.extend(row_node(row) for row in self._rows(sql, tuple(chunk)))
        return found

    def file_of(self, node_id: str) -> str | None:
        """The path a node is stored under."""
        rows = self._rows("SELECT file_path FROM nodes WHERE id = ?", (node_id,))
        return rows[0][0] if rows else None

    def exists(self, node_id: str) -> bool:
        """Whether a node with this id is stored."""
        return bool(self._rows("SELECT 1 FROM nodes WHERE id = ?", (node_id,)))

    def edge_files(self, to_id: str, kind: EdgeKind) -> set[str]:
        """Paths whose stored edges of ``kind`` point to ``to_id``."""
        rows = self._rows(
            "SELECT DISTINCT file_path FROM edges WHERE to_id = ? AND kind = ?",
            (to_id, kind.value),
        )
        return {path for (path,) in rows}

    def agent_status_files(self, status: AgentStatus) -> set[str]:
        """Paths holding stored nodes whose agent has ``status`` (for files
        not loaded yet, which the store still holds as they were at start).
        """
        if status is AgentStatus.IDLE:
            rows = self._rows(
                "SELECT DISTINCT file_path FROM nodes WHERE agent_status = ?",
                (status.value,),
            )
            return {path for (path,) in rows}
        return set(self._tallied(self._busy, {}).get(status.value, ()))

    def stored_active(self) -> int:
        """How many stored nodes were active at start."""
        return self._tallied(self._active, 0)

    def _tallied(self, tally: Future[T], otherwise: T) -> T:
        try:
            return tally.result(timeout=TALLY_WAIT_S)
        except TimeoutError:  # a store locked that long: count nothing, go on
            log.warning("tallying the store %s takes too long", self.database.path)
            return otherwise

    def close(self) -> None:
        """Close the connection (reopened if asked again)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()


def _records(db: sqlite3.Connection) -> list[FileRecord]:
    """The file records: all a warm start reads before it is indexed."""
    return [FileRecord(*row) for row in db.execute(f"SELECT {FILE_COLUMNS} FROM files")]


def _stored_names(db: sqlite3.Connection) -> tuple[SymbolSnapshot | None, list[str]]:
    """The stored name index and the files it cannot answer for, in one read
    (so that the two agree).
    """
    db.execute("BEGIN")
    try:
        data, stored = read_stored(db)
    finally:
        db.execute("ROLLBACK")
    return opened(data, stored)


@dataclass
class OpenedGraph:
    """What :func:`open_graph` found."""

    files: list[FileRecord]
    names: StoredNames | None = None
    """Who keeps the stored name index (a lazily loaded graph's only)."""


async def open_graph(graph: CodeGraph, store: NodeStore, *, lazy: bool) -> OpenedGraph:
    """Load the stored graph into ``graph`` (lazily when ``lazy`` and the store
    is writable, with the stored name index to answer symbol searches
    meanwhile: :meth:`StoredNames.read`, the caller's to run); the stored
    file records.
    """
    database = store.database
    if not (lazy and database.writable):
        files, nodes, edges = await store.load()
        graph.load(nodes, edges)
        return OpenedGraph(files)
    files = await database.read(_records, "loading the project")
    if files is None:
        return OpenedGraph([])
    file_ids = {record.path: record.file_id for record in files if record.file_id}
    present = {record.path for record in files if record.status == "present"}
    graph.attach(file_ids, present, StoredGraph(database))
    return OpenedGraph(files, StoredNames(database))


class StoredNames:
    """Reads the stored name index at start (:meth:`read`), and builds it
    again once the graph is whole when the one found was missing, damaged or
    out of date (:meth:`refresh`).
    """

    def __init__(self, database: Database) -> None:
        self.database = database
        self.wanted = True
        """Whether to build it (none usable was found)."""
        self.asked = asyncio.Event()
        """Set when a search waits for :meth:`read` (no delay then)."""
        self.read_done = asyncio.Event()
        """Set once :meth:`read` ended, whatever it found."""
        self.written = asyncio.Event()
        """Set once this process stored a snapshot."""

    async def read(self, graph: CodeGraph) -> None:
        """Give ``graph`` the stored name index, if sound and nearly up to
        date, loading the files changed since it was built (the live index
        answers for those).

        Run shortly after start rather than before indexing: reading and
        checking the blob (11 MB for 1.7 M lines) was a quarter of a warm
        start's own time (~30 ms), and only a symbol search needs it
        (``RemoraApp.searchable`` asks for it and waits).
        """
        try:
            found = await self.database.read(_stored_names, "reading the stored names")
            if found is None or graph.complete:  # whole already: not needed
                return
            snapshot, stale = found
            if snapshot is None or len(stale) > STALE_USED:
                return
            graph.use_snapshot(snapshot)
            # Changed since the snapshot: the live name index answers for them.
            graph.load_files([path for path in stale if path in graph.file_ids])
            self.wanted = len(stale) > STALE_KEPT
            log.info(
                "symbol search from the stored names (%d files, %d changed since)",
                snapshot.files,
                len(stale),
            )
        finally:
            self.read_done.set()

    async def refresh(self) -> None:
        """Build the snapshot in a process of its own from the store as it
        is now, then store it; a failure is logged, the next start tries again.
        """
        if not self.wanted or not self.database.writable:
            return
        self.wanted = False
        loop = asyncio.get_running_loop()
        try:
            pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=start_worker,
                initargs=(os.getpid(),),
            )
        except (OSError, RuntimeError) as error:
            log.warning("cannot start building the stored names: %s", error)
            return
        try:
            data = await loop.run_in_executor(
                pool,
                build_from,
                str(self.database.path.absolute()),
                self.database.busy_timeout_ms / 1000,
            )
        except (OSError, RuntimeError, BrokenProcessPool) as error:
            log.warning("cannot build the stored names: %s", error)
            return
        finally:
            # Stopped too when the project closes meanwhile: the interpreter
            # would otherwise wait for the build at exit.
            processes = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for process in processes:
                process.terminate()
        if data is None:
            return
        stored = await self.database.transaction(
            lambda db: write_stored(db, data), "storing the names"
        )
        if stored is not None:
            self.written.set()


async def _after_others(graph: CodeGraph) -> None:
    """Let whatever waits run; while a person searches or edits (and nobody
    waits for the whole graph), wait until they pause: with the stored name
    index nothing they do needs the rest of the graph loaded.
    """
    await asyncio.sleep(0)
    while not graph.hurried.is_set():
        quiet = graph.last_use + FILL_QUIET_S - time.monotonic()
        if quiet <= 0:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(graph.hurried.wait(), quiet)


async def fill_graph(
    graph: CodeGraph,
    start: asyncio.Event,
    *,
    delay: float = FILL_DELAY_S,
    names: StoredNames | None = None,
    after: asyncio.Event | None = None,
) -> None:
    """Once ``start`` is set and ``delay`` has passed, load what is left of the
    graph in small steps, each after whatever else was waiting to run, adding
    each step's files to the name index (``symbol_index.py``). Until ``start``,
    index the names of the files indexed so far now and then. Someone waiting
    for the whole graph (``graph.hurried``) cuts the delay short. Then store
    the name index if ``names`` wants it.

    ``names`` first reads the stored name index (:meth:`StoredNames.read`),
    once ``after`` is set (the start-up's own reads first: the database thread
    takes them in turn) and :data:`NAMES_READ_DELAY_S` later, or as soon as a
    search asks for it.
    """
    if names is not None:
        if after is not None:
            await after.wait()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(names.asked.wait(), NAMES_READ_DELAY_S)
        await names.read(graph)
    while not start.is_set():
        # Files indexed so far join the name index between the indexer's
        # steps, so that a search right after indexing does not build it all.
        graph.catch_up_symbols(SYMBOL_BATCH)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(start.wait(), SYMBOL_PAUSE_S)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(graph.hurried.wait(), delay)
    # The graph doubles the heap: collections meanwhile would walk it again
    # and again (seconds of stalls on a large project); the server freezes
    # it once complete.
    with collector_paused():
        while graph.load_some(HURRIED_BATCH if graph.hurried.is_set() else FILL_BATCH):
            graph.catch_up_symbols()  # what was just loaded
            await _after_others(graph)
        while graph.catch_up_symbols(SYMBOL_BATCH):
            await _after_others(graph)
    # Complete only now: what waits for the whole graph (the server freezes
    # the heap then, so that collections skip it) finds the name index built.
    graph.detach()
    if names is not None and names.wanted:
        await until_quiet(lambda: graph.last_use, NAMES_QUIET_S)
        await names.refresh()
