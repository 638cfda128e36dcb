"""Reading and writing files, nodes and edges.

The engine keeps the node graph in memory and writes through to these tables:
one transaction per changed file (or per batch of files on start-up), so the
database is always a consistent snapshot of whole files.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from remora_core.model import (
    AgentStatus,
    CodeNode,
    Edge,
    EdgeKind,
    NodeKind,
    NodeStatus,
    Span,
    build_node,
)

if TYPE_CHECKING:
    import sqlite3

    from remora_core.store.database import Database


_SET_AGENT_STATUS = "UPDATE nodes SET agent_status = ? WHERE id = ?"


@dataclass(frozen=True, slots=True)
class AgentStatusSet:
    """An agent's new status, written in the transaction of the event that
    comes with the flip (``EventStore.also_write``, ``agents/statuses.py``).
    """

    node_id: str
    status: AgentStatus

    def write(self, db: sqlite3.Connection) -> None:
        """Update the node's row (in the database thread)."""
        db.execute(_SET_AGENT_STATUS, (self.status.value, self.node_id))


@dataclass(frozen=True, slots=True)
class FileRecord:
    """What the store remembers of one file."""

    path: str
    file_id: str
    content_hash: str | None
    status: str = "present"  # present | deleted | skipped
    skipped_reason: str | None = None
    mtime_ns: int | None = None
    """With ``size``, ``ctime_ns`` and ``inode``: the file's stat when
    ``content_hash`` was taken, if it can vouch for the content (see
    ``indexer.scan``); None: read the file to know."""
    size: int | None = None
    ctime_ns: int | None = None
    inode: int | None = None

    @property
    def stat(self) -> tuple[int, int, int, int] | None:
        """``(mtime_ns, size, ctime_ns, inode)`` if all are known."""
        mtime_ns, size, ctime_ns, inode = (
            self.mtime_ns,
            self.size,
            self.ctime_ns,
            self.inode,
        )
        if mtime_ns is None or size is None or ctime_ns is None or inode is None:
            return None
        return mtime_ns, size, ctime_ns, inode


@dataclass(slots=True)
class FileSnapshot:
    """Everything to write for one file: its record, nodes and outgoing edges."""

    record: FileRecord
    nodes: list[CodeNode]
    edges: list[Edge]


FILE_COLUMNS = (
    "path, file_id, content_hash, status, skipped_reason, mtime_ns, size, "
    "ctime_ns, inode"
)
"""The ``files`` columns of a :class:`FileRecord`, in its order."""

NODE_COLUMNS = (
    "id, kind, name, qualified_name, file_path, start_line, start_col, end_line, "
    "end_col, start_byte, end_byte, span_ascii, name_line, name_start_col, "
    "name_end_col, name_start_byte, name_end_byte, name_ascii, source_hash, "
    "parent_id, status, agent_status, updated_at"
)
_NODE_INSERT = (
    f"INSERT OR REPLACE INTO nodes ({NODE_COLUMNS}) VALUES ({', '.join('?' * 23)})"
)


def _node_row(node: CodeNode, now: float) -> tuple[object, ...]:
    span, name = node.span, node.name_span
    return (
        node.id,
        node.kind.value,
        node.name,
        node.qualified_name,
        node.file_path,
        span.start_line,
        span.start_col,
        span.end_line,
        span.end_col,
        span.start_byte,
        span.end_byte,
        int(span.ascii),
        name.start_line,
        name.start_col,
        name.end_col,
        name.start_byte,
        name.end_byte,
        int(name.ascii),
        node.source_hash,
        node.parent_id,
        node.status.value,
        node.agent_status.value,
        now,
    )


# Enum lookups by value are slow by the hundred thousand: map them once.
_KINDS = {kind.value: kind for kind in NodeKind}
_STATUSES = {status.value: status for status in NodeStatus}
_AGENT_STATUSES = {status.value: status for status in AgentStatus}
EDGE_KINDS = {kind.value: kind for kind in EdgeKind}


def row_node(row: tuple) -> CodeNode:
    """The node of a ``nodes`` row read with :data:`NODE_COLUMNS`."""
    (
        id_, kind, name, qualified, path, sl, sc, el, ec, sb, eb, span_ascii,
        nl, nsc, nec, nsb, neb, name_ascii, source_hash, parent, status, agent, _,
    ) = row  # fmt: skip
    return build_node(
        id_,
        _KINDS[kind],
        name,
        qualified,
        path,
        Span(sb, eb, sl, sc, el, ec, bool(span_ascii)),
        Span(nsb, neb, nl, nsc, nl, nec, bool(name_ascii)),
        parent,
        source_hash,
        _STATUSES[status],
        _AGENT_STATUSES[agent],
    )


class NodeStore:
    """Repository of files, nodes and edges over a :class:`Database`.

    It remembers which node object it last wrote to each row (nodes are frozen:
    a changed node is a new object), so saving a file again writes only the
    nodes that changed: re-saving a file after an edit, or after its edges were
    resolved, writes a few node rows instead of all of them.
    """

    def __init__(self, database: Database) -> None:
        self.database = database
        self._rows: dict[str, CodeNode] = {}
        """Node id → the node object whose values its row holds, for rows this
        store wrote. Used and changed only by the transactions that write
        nodes (in the database thread); forgotten when one fails."""

    async def load(self) -> tuple[list[FileRecord], list[CodeNode], list[Edge]]:
        """Everything stored, for a warm start (empty lists if unavailable)."""

        def work(
            db: sqlite3.Connection,
        ) -> tuple[list[FileRecord], list[CodeNode], list[Edge]]:
            files = [
                FileRecord(*row)
                for row in db.execute(f"SELECT {FILE_COLUMNS} FROM files")
            ]
            nodes = [
                row_node(tuple(row))
                for row in db.execute(f"SELECT {NODE_COLUMNS} FROM nodes").fetchall()
            ]
            edges = [
                Edge(f, t, EDGE_KINDS[k])
                for f, t, k in db.execute(
                    "SELECT from_id, to_id, kind FROM edges WHERE kind != 'parent_of'"
                ).fetchall()
            ]
            return files, nodes, edges

        loaded = await self.database.read(work, "loading the project")
        return loaded if loaded is not None else ([], [], [])

    async def newest_save(self) -> float:
        """When a file was last written (``indexed_at``; 0 if never)."""

        def work(db: sqlite3.Connection) -> float:
            row = db.execute("SELECT MAX(indexed_at) FROM files").fetchone()
            return float(row[0]) if row and row[0] is not None else 0.0

        return await self.database.read(work, "reading the store") or 0.0

    async def saved_since(
        self, since: float
    ) -> list[tuple[FileRecord, float, list[CodeNode], list[Edge]]] | None:
        """Files written at or after ``since`` (another server's store, read by a
        follower): record, when written, nodes (orphans included) and the edges
        their parse produced. None if the store cannot be read.
        """

        def work(
            db: sqlite3.Connection,
        ) -> list[tuple[FileRecord, float, list[CodeNode], list[Edge]]]:
            found = []
            rows = db.execute(
                "SELECT path, file_id, content_hash, status, skipped_reason, "
                "indexed_at FROM files WHERE indexed_at >= ? ORDER BY path",
                (since,),
            ).fetchall()
            for path, file_id, digest, status, reason, written in rows:
                nodes = [
                    row_node(tuple(row))
                    for row in db.execute(
                        f"SELECT {NODE_COLUMNS} FROM nodes WHERE file_path = ?",
                        (path,),
                    )
                ]
                edges = [
                    Edge(f, t, EDGE_KINDS[k])
                    for f, t, k in db.execute(
                        "SELECT from_id, to_id, kind FROM edges "
                        "WHERE file_path = ? AND kind != 'parent_of'",
                        (path,),
                    )
                ]
                record = FileRecord(path, file_id, digest, status, reason)
                found.append((record, float(written or 0.0), nodes, edges))
            return found

        return await self.database.read(work, "following the store")

    async def save_files(self, snapshots: Iterable[FileSnapshot]) -> bool:
        """Write whole files in one transaction; False if the store is unusable."""
        batch = list(snapshots)
        if not batch:
            return True

        def work(db: sqlite3.Connection) -> bool:
            now = time.time()
            paths = [(s.record.path,) for s in batch]
            db.executemany(
                f"INSERT OR REPLACE INTO files ({FILE_COLUMNS}, indexed_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        s.record.path,
                        s.record.file_id,
                        s.record.content_hash,
                        s.record.status,
                        s.record.skipped_reason,
                        s.record.mtime_ns,
                        s.record.size,
                        s.record.ctime_ns,
                        s.record.inode,
                        now,
                    )
                    for s in batch
                ],
            )
            rows = self._rows
            changed = [n for s in batch for n in s.nodes if rows.get(n.id) is not n]
            db.executemany(_NODE_INSERT, [_node_row(n, now) for n in changed])
            rows.update((n.id, n) for n in changed)
            db.executemany("DELETE FROM edges WHERE file_path = ?", paths)
            db.executemany(
                "INSERT OR IGNORE INTO edges (from_id, to_id, kind, file_path) "
                "VALUES (?, ?, ?, ?)",
                [
                    (e.from_id, e.to_id, e.kind.value, s.record.path)
                    for s in batch
                    for e in s.edges
                ],
            )
            return True

        try:
            saved = await self.database.transaction(work, "saving nodes")
        except BaseException:
            self._rows.clear()  # rolled back, or perhaps: nothing is known
            raise
        if not saved:
            self._rows.clear()
        return bool(saved)

    async def save_stats(self, stats: dict[str, tuple[int, int, int, int]]) -> None:
        """Record the stats that vouch for files' stored hashes."""

        def work(db: sqlite3.Connection) -> None:
            db.executemany(
                "UPDATE files SET mtime_ns = ?, size = ?, ctime_ns = ?, inode = ? "
                "WHERE path = ?",
                [(*stat, path) for path, stat in stats.items()],
            )

        await self.database.transaction(work, "saving file stats")

    async def set_agent_statuses(self, statuses: dict[str, AgentStatus]) -> None:
        """Record what some nodes' agents are doing."""

        def work(db: sqlite3.Connection) -> None:
            for node_id in statuses:  # its row no longer holds that object
                self._rows.pop(node_id, None)
            db.executemany(
                _SET_AGENT_STATUS,
                [(status.value, node_id) for node_id, status in statuses.items()],
            )

        await self.database.transaction(work, "saving agent statuses")

    async def move_file(self, old: str, new: str) -> bool:
        """Re-key a renamed file's record, nodes and edges."""

        def work(db: sqlite3.Connection) -> bool:
            self._rows.clear()  # rows move under the objects written to them
            db.execute("DELETE FROM files WHERE path = ?", (new,))
            db.execute("UPDATE files SET path = ? WHERE path = ?", (new, old))
            db.execute("UPDATE nodes SET file_path = ? WHERE file_path = ?", (new, old))
            db.execute("UPDATE edges SET file_path = ? WHERE file_path = ?", (new, old))
            return True

        return bool(await self.database.transaction(work, "renaming a file"))
