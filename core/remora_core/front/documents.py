"""The ``documents`` and ``files`` facades: the editor's buffers and the disk.

- :class:`Documents`: documents the editor opened, changed, saved and closed
  (their buffer is the truth for the file while open), and what an editor
  reads of a file — its current text's lines, whether a path is the
  project's, the id comments it lacks (``ids.inline_comments``).
- :class:`Files`: files changed, created, deleted or renamed outside the
  editor (watched files, renames, polling).

Both only route to the code index (``remora_core/index``); nothing here waits
for the project to start: buffers opened during start-up are taken in once
the stored graph is loaded.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from remora_core.index.inline_ids import missing_id_comments
from remora_core.model import NodeStatus

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from remora_core.index.code_index import CodeIndex
    from remora_core.index.disk import DiskSync
    from remora_core.index.document_sync import DocumentSync
    from remora_core.index.documents import OpenDocument, TextChange
    from remora_core.text import LineIndex, PositionEncoding

log = logging.getLogger(__name__)


class Documents:
    """The documents open in the editor, for one project."""

    def __init__(self, index: CodeIndex, sync: DocumentSync) -> None:
        self._index = index
        self._sync = sync

    def open(self, path: str, version: int, text: str) -> None:
        """The editor opened ``path``; its buffer is now the truth for the file."""
        self._sync.open(path, version, text)

    def change(
        self,
        path: str,
        version: int,
        changes: list[TextChange],
        encoding: PositionEncoding,
    ) -> None:
        """Apply an edit: re-parse and re-match ids now; edges and saving later."""
        self._sync.change(path, version, changes, encoding)

    def save(self, path: str) -> None:
        """The buffer was written to disk: settle and store it now."""
        self._sync.save(path)

    def close(self, path: str) -> None:
        """The editor closed ``path``: the file on disk is the truth again."""
        self._sync.close(path)

    def get(self, path: str) -> OpenDocument | None:
        """The open document of ``path``, if the editor holds it open."""
        return self._index.documents.get(path)

    def paths(self) -> list[str]:
        """Every open document's path."""
        return list(self._index.documents)

    def carried(self) -> dict[str, OpenDocument]:
        """The open documents, for the app that replaces this one (a restart)."""
        return self._index.documents

    def lines(self, path: str) -> LineIndex | None:
        """The line index of the current text (the buffer, else the disk)."""
        return self._index.line_index(path)

    def path_of(self, absolute: Path, *, wanted: bool = True) -> str | None:
        """The project path of a filesystem path; None if it is outside the
        project or (``wanted``) not one of the project's Python files.
        """
        relative = self._index.relative(absolute)
        if relative is None or (wanted and not self._index.filter.wants(relative)):
            return None
        return relative

    def missing_ids(self, path: str) -> tuple[int, list[tuple[int, str]]] | None:
        """With ``ids.inline_comments`` on: the open document's version and
        the id comments it lacks as (byte offset, text) insertions; None when
        none are missing or the setting is off.
        """
        index = self._index
        document = index.documents.get(path)
        file_node = index.graph.file_node(path)
        if (
            not index.config.ids.inline_comments
            or document is None
            or file_node is None
            or file_node.status != NodeStatus.ACTIVE
        ):
            return None
        insertions = missing_id_comments(
            document.text, index.graph.file_nodes(path), document.lines
        )
        return (document.version, insertions) if insertions else None


class Files:
    """Changes to one project's files outside the editor."""

    def __init__(self, index: CodeIndex, disk: DiskSync) -> None:
        self._index = index
        self._disk = disk

    async def changed(
        self,
        *,
        created: Sequence[str] = (),
        changed: Sequence[str] = (),
        deleted: Sequence[str] = (),
    ) -> None:
        """Re-index created and changed files, orphan deleted ones."""
        await self._disk.files_changed(
            created=list(created), changed=list(changed), deleted=list(deleted)
        )

    async def renamed(self, pairs: list[tuple[str, str]]) -> None:
        """Files or folders moved: every node keeps its id."""
        await self._disk.rename(pairs)

    async def poll(self) -> None:
        """Look for changes on disk every ``discovery.poll_interval_ms`` (for
        editors that cannot watch files); returns at once when it is 0.
        """
        interval = self._index.config.discovery.poll_interval_ms / 1000
        if interval > 0:
            await self._disk.poll(interval)
