"""Open documents: the editor's buffers as the truth for their files.

Every ``didChange`` re-parses incrementally and re-matches ids at once (cheap);
edges, the announcement of what changed and saving follow after a quiet period
(``discovery.debounce_ms``) per document — the *settle*. A document opened
before the index loaded is taken in when it does (:meth:`DocumentSync.loaded`).
Closing a document hands its file back to the disk (``disk.py``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from remora_core.index.documents import OpenDocument, TextChange

if TYPE_CHECKING:
    from remora_core.index.code_index import CodeIndex
    from remora_core.index.disk import DiskSync
    from remora_core.index.updates import FileUpdate
    from remora_core.text import PositionEncoding

log = logging.getLogger(__name__)


class DocumentSync:
    """Keeps the index in step with the documents open in the editor."""

    def __init__(self, index: CodeIndex, disk: DiskSync) -> None:
        self.index = index
        self.disk = disk
        self.timers: dict[str, asyncio.TimerHandle] = {}
        """Documents waiting for their quiet period to end (then they settle)."""

    def open(self, path: str, version: int, text: str) -> None:
        """The editor opened ``path``; its buffer is now the truth for the file."""
        index = self.index
        index.documents[path] = OpenDocument(
            path, version, text, index.config.discovery.max_file_bytes
        )
        index.text_watch.changed(path)
        if not index.indexed.is_set():
            index.opened_while_indexing.add(path)
        if index.loaded.is_set():
            index.refresh_document(path, with_references=True)
            index.changes.snapshot(path, index.graph.file_nodes(path))
            self._save_later(path, delay=0)

    def change(
        self,
        path: str,
        version: int,
        changes: list[TextChange],
        encoding: PositionEncoding,
    ) -> FileUpdate | None:
        """Apply an edit: re-parse and re-match ids now; edges and saving later."""
        index = self.index
        document = index.documents.get(path)
        if document is None:
            raise KeyError(path)
        document.apply(version, changes, encoding)
        index.text_watch.changed(path)
        if not index.loaded.is_set():
            return None
        update = index.refresh_document(path, with_references=False)
        self._save_later(path, delay=index.config.discovery.debounce_ms / 1000)
        return update

    def close(self, path: str) -> None:
        """The editor closed ``path``: the file on disk is the truth again."""
        index = self.index
        index.changes.forget(path)
        closed = index.documents.pop(path, None)
        index.text_watch.changed(path)
        if closed is not None and index.root is not None:
            self._cancel_timer(path)
            index.tasks.spawn(self.disk.files_changed(changed=[path]), name="close")

    def save(self, path: str) -> None:
        """The buffer was written to disk: settle and store it now."""
        if path in self.index.documents:
            self._save_later(path, delay=0)

    def loaded(self) -> None:
        """The index loaded: take in the documents opened before it did."""
        index = self.index
        for path in list(index.documents):
            index.refresh_document(path, with_references=True)
            index.changes.snapshot(path, index.graph.file_nodes(path))

    def stop(self) -> None:
        """Settle nothing more (closing: :meth:`flush` writes what is left)."""
        for timer in self.timers.values():
            timer.cancel()
        self.timers.clear()

    async def flush(self) -> None:
        """Bring every open document's edges up to date and write everything."""
        index = self.index
        if index.loaded.is_set():
            for path in list(index.documents):
                index.refresh_document(path, with_references=True)
            await index.save_dirty()

    # ---- settling ----------------------------------------------------------------

    def _save_later(self, path: str, delay: float) -> None:
        self._cancel_timer(path)
        loop = asyncio.get_running_loop()
        self.timers[path] = loop.call_later(
            delay, lambda: self.index.tasks.spawn(self._settle(path), name="settle")
        )

    def _cancel_timer(self, path: str) -> None:
        timer = self.timers.pop(path, None)
        if timer is not None:
            timer.cancel()

    async def _settle(self, path: str) -> None:
        """Resolve an open document's edges (and its dependents'), announce
        what changed since the last announcement, then save.
        """
        index = self.index
        self.timers.pop(path, None)
        async with index.lock:
            if path in index.documents:
                update = index.refresh_document(path, with_references=True)
                if update is not None and update.topology_changed:
                    await index.reextract(index.dependents({path}))
                await index.listener.announce(
                    index.changes.diff(path, index.graph.file_nodes(path))
                )
            await index.save_dirty()
