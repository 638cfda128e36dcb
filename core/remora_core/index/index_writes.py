"""What the code index has not written to its store yet, and writing it.

Changed files are marked dirty as the graph changes and written in batches
(one transaction each) when a flow settles; renames are applied first, so a
moved file's rows move before its new state is written.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from remora_core.store import FileRecord, FileSnapshot

if TYPE_CHECKING:
    from remora_core.index.codegraph import CodeGraph
    from remora_core.store import NodeStore

log = logging.getLogger(__name__)

SAVE_BATCH = 200


class IndexWrites:
    """Files and renames waiting to be written."""

    def __init__(self) -> None:
        self.dirty: set[str] = set()
        """Paths whose record, nodes or edges changed since the last write."""
        self._moves: list[tuple[str, str]] = []
        """Renames not yet applied to the store (before the files are saved)."""

    def moved(self, old: str, new: str) -> None:
        """``old`` was renamed ``new``."""
        self._moves.append((old, new))
        self.dirty.add(new)

    async def save(
        self,
        store: NodeStore | None,
        snapshot: Callable[[str], FileSnapshot],
        only: Iterable[str] | None = None,
    ) -> None:
        """Apply pending renames, then write every dirty file (of ``only``, when
        given: start-up saves files as they are resolved), in batches.

        Without a store (memory only) the marks are dropped.
        """
        if store is not None:
            while self._moves:
                old, new = self._moves[0]
                await store.move_file(old, new)
                self._moves.pop(0)
        if not self.dirty:
            return
        if only is None:
            paths, self.dirty = sorted(self.dirty), set()
        else:
            paths = sorted(self.dirty.intersection(only))
            self.dirty.difference_update(paths)
        if store is None:
            return
        for start in range(0, len(paths), SAVE_BATCH):
            batch = paths[start : start + SAVE_BATCH]
            try:
                await store.save_files([snapshot(p) for p in batch])
            except BaseException:
                # Interrupted (shutdown): what was not written is still pending.
                self.dirty.update(paths[start:])
                raise


def snapshot(
    graph: CodeGraph, records: dict[str, FileRecord], path: str
) -> FileSnapshot:
    """What the store keeps of ``path``: its record, nodes (orphans too), and
    ``calls``/``imports`` edges. Containment is each node's ``parent_id``:
    ``parent_of`` rows (70 % of the edges of a large project, never read back)
    cost a third of the store's writes on a first index (``bench/index_large.py``).
    """
    file_node = graph.file_node(path)
    record = records.get(path) or FileRecord(
        path, file_node.id if file_node else "", None
    )
    nodes = [file_node] if file_node is not None else []
    nodes += graph.file_nodes(path, orphans=True)
    return FileSnapshot(record, nodes, list(graph.file_edges(path)))
