"""The code index of one workspace folder: its files, nodes and edges.

The index knows the project's files (their records and open documents), turns
extractions into nodes and edges (``updates.py``, ``resolve.py``) and writes
them to its store. It **reports** what changed to its listener
(``index_reports.py``) and calls nothing above it: the project's parts
(``parts.py``) listen and turn the reports into staleness checks, events and
agents' work.

Its life: :meth:`CodeIndex.load` takes the stored graph; ``loaded`` is set
once the engine is built on it (ids are now trustworthy), ``indexed`` once the
workspace was indexed (``disk.py``); :meth:`CodeIndex.begin_close` sets
``closed`` and wakes everyone waiting in :meth:`ready`. Open documents and
their debounced settling are ``document_sync.py``; writing to the store is
``index_writes.py``.

An index without a root holds files outside every workspace folder: memory
only, no indexing, no store.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Container, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from remora_core.discovery import FileExtraction, FileFilter
from remora_core.discovery.files import SourceSkipped
from remora_core.index.changes import ChangeTracker
from remora_core.index.codegraph import CodeGraph
from remora_core.index.graph_loading import StoredNames, fill_graph, open_graph
from remora_core.index.index_reports import IndexListener, Unheard
from remora_core.index.index_writes import IndexWrites, snapshot
from remora_core.index.indexer import Extractor, Stat, Vouched
from remora_core.index.resolve import FileResolver, ModuleMap, module_name
from remora_core.index.text_watch import TextWatch
from remora_core.index.updates import (
    FileUpdate,
    apply_extraction,
    move_file,
    orphan_file,
)
from remora_core.model import CodeNode, NodeStatus
from remora_core.project_paths import PathRefused, read_project_file
from remora_core.store import FileRecord
from remora_core.tasks import TaskSet
from remora_core.text import LineIndex, PositionEncoding

if TYPE_CHECKING:
    from remora_core.config import RemoraConfig
    from remora_core.index.documents import OpenDocument
    from remora_core.store import NodeStore

log = logging.getLogger(__name__)


class CodeIndex:
    """The nodes, edges and files of one workspace folder."""

    def __init__(self, root: Path | None, config: RemoraConfig) -> None:
        self.root = root
        self.config = config
        self.listener: IndexListener = Unheard()
        """Told what changed; set by whoever composes the engine."""
        self.graph = CodeGraph()
        self.modules = ModuleMap()
        self.documents: dict[str, OpenDocument] = {}
        """Open documents by path: their buffers are the truth for their files."""
        self.opened_while_indexing: set[str] = set()
        """Documents opened before the workspace was indexed: their edges were
        resolved against a graph still filling, so indexing resolves them again."""
        self.records: dict[str, FileRecord] = {}
        self.store: NodeStore | None = None
        """Where the index is written; None while not loaded, or memory only."""
        self.stored_names: StoredNames | None = None
        """Keeps the store's name index (a lazily loaded graph's only)."""
        self.writes = IndexWrites()
        """Files and renames not yet written to the store."""
        self.changes = ChangeTracker()
        """What each open document last announced (the next announcement's base)."""
        self.text_watch = TextWatch()
        """Told whenever a file's text here changes (an applied edit landing)."""
        self.tasks = TaskSet(f"project {root}")
        self.lock = asyncio.Lock()
        """Held by every async flow that reads files and then updates the graph."""
        self.loaded = asyncio.Event()
        self.indexed = asyncio.Event()
        self.closed = False
        self._closing = asyncio.Event()
        """Set when closing begins: wakes everyone waiting in :meth:`ready`."""
        self._imports: dict[str, set[str]] = {}
        self.filter = self._make_filter()
        self.extractor = self._make_extractor()

    def _make_filter(self) -> FileFilter:
        discovery = self.config.discovery
        return FileFilter.from_globs(
            discovery.include, discovery.exclude, self.config.secrets.exclude
        )

    def _make_extractor(self) -> Extractor:
        discovery = self.config.discovery
        return Extractor(
            self.root or Path("/"),
            discovery.max_file_bytes,
            self.config.ids.inline_comments,
            discovery.workers or os.cpu_count() or 1,
        )

    def reconfigure(self, config: RemoraConfig) -> None:
        """Use other settings; only before :meth:`load` (later, restart instead)."""
        if self.loaded.is_set():
            raise RuntimeError("a started project cannot be reconfigured")
        self.config = config
        self.filter = self._make_filter()
        self.extractor = self._make_extractor()

    # ---- lifecycle -------------------------------------------------------------

    async def load(self, store: NodeStore, *, lazy: bool = True) -> None:
        """Take the graph the store holds; from now on changes are written there.

        ``lazy`` (a store this process owns): only the file records are read
        now; a file's definitions and edges come from the store on first use,
        the rest in the background once the workspace is indexed
        (``store/graph_loading.py``).
        """
        self.store = store
        opened = await open_graph(self.graph, store, lazy=lazy)
        self.stored_names = opened.names
        self.records = {record.path: record for record in opened.files}
        self.tasks.spawn(
            fill_graph(self.graph, self.indexed, names=opened.names, after=self.loaded),
            name="load graph",
        )
        for record in opened.files:
            if record.status == "present":
                self.modules.add(record.path)

    def settle(self, path: str, digest: str) -> None:
        """``path``'s edges are resolved: its record takes its content hash."""
        record = self.records.get(path)
        if record is not None and record.status == "present":
            self.records[path] = replace(record, content_hash=digest)
            self.writes.dirty.add(path)

    async def restat(self, stats: dict[str, Stat]) -> None:
        """Files whose stored hash is current, with the stats that now vouch
        for it (a store from before stats were kept, or a file touched without
        a change): only their records change.
        """
        for path, (mtime_ns, size, ctime_ns, inode) in stats.items():
            self.records[path] = replace(
                self.records[path],
                mtime_ns=mtime_ns,
                size=size,
                ctime_ns=ctime_ns,
                inode=inode,
            )
        if self.store is not None and stats:
            await self.store.save_stats(stats)

    def vouched(self) -> Vouched:
        """Stored content hashes that the file's unchanged stat vouches for."""
        return {
            path: (record.stat, record.content_hash)
            for path, record in self.records.items()
            if record.status == "present"
            and record.content_hash is not None
            and record.stat is not None
        }

    async def ready(self) -> bool:
        """Wait until the stored graph is loaded; False if the index closed first.

        A request that arrives during start-up waits here; a shutdown or a
        restart that closes the project must still let it be answered, so the
        wait also ends when closing begins.
        """
        return await self.until(self.loaded)

    async def until(self, event: asyncio.Event) -> bool:
        """Wait for ``loaded`` or ``indexed``, or closing, whichever comes first;
        whether the event is set.
        """
        if event.is_set():
            return True
        if not self.closed:
            waits = [
                asyncio.ensure_future(event.wait()),
                asyncio.ensure_future(self._closing.wait()),
            ]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiting in waits:
                    waiting.cancel()
        return event.is_set()

    def begin_close(self) -> None:
        """Closing begins: wake everyone waiting in :meth:`ready`."""
        self.closed = True
        self._closing.set()

    # ---- paths and queries -----------------------------------------------------

    def relative(self, absolute: Path) -> str | None:
        """The project path of ``absolute``, or None if outside the root."""
        if self.root is None:
            return absolute.as_posix()
        try:
            return absolute.relative_to(self.root).as_posix()
        except ValueError:
            return None

    def absolute(self, path: str) -> Path:
        """The filesystem path of a project path."""
        return self.root / path if self.root is not None else Path(path)

    def read_text(self, path: str) -> bytes | None:
        """The current text of ``path``: the open buffer, else the file (None:
        unreadable, too large, outside the project or a link to a secret — see
        :func:`~remora_core.project_paths.read_project_file` — or no file
        outside a root).
        """
        document = self.documents.get(path)
        if document is not None:
            return document.text
        if self.root is None:
            return None
        try:  # resolved now: the store may name any path, a file become a link
            return read_project_file(
                self.root,
                path,
                self.config.discovery.max_file_bytes,
                self.config.secrets.exclude,
            )
        except PathRefused as refused:
            log.warning("not reading %s: %s", path, refused)
            return None
        except SourceSkipped:  # missing, too large, binary: the caller says
            return None

    def outline(self, path: str) -> list[CodeNode] | None:
        """Active definitions of a file, or None if the file is unknown."""
        node = self.graph.file_node(path)
        if node is None or node.status is not NodeStatus.ACTIVE:
            return None
        return self.graph.file_nodes(path)

    def line_index(self, path: str) -> LineIndex | None:
        """Line index of the current text of ``path`` (open buffer, else disk)."""
        document = self.documents.get(path)
        if document is not None:
            return document.lines
        text = self.read_text(path)
        return LineIndex(text) if text is not None else None

    def node_at(
        self, path: str, line: int, character: int, encoding: PositionEncoding
    ) -> CodeNode | None:
        """Innermost definition at an editor position in ``path``."""
        lines = self.line_index(path)
        if lines is None:
            return None
        return self.graph.node_at(path, lines.offset(line, character, encoding))

    def search(self, query: str, limit: int) -> list[CodeNode]:
        """Best matches of ``query`` among every active node."""
        return self.graph.search(query, limit)

    # ---- graph updates ---------------------------------------------------------

    def refresh_document(
        self, path: str, *, with_references: bool
    ) -> FileUpdate | None:
        """Re-extract an open document and apply it to the graph."""
        document = self.documents[path]
        extraction = document.extract(
            read_inline_ids=self.config.ids.inline_comments,
            with_references=with_references,
        )
        return self.apply(path, extraction) if extraction is not None else None

    def apply(
        self,
        path: str,
        extraction: FileExtraction,
        *,
        resolve: bool = True,
        stat: Stat | None = None,
    ) -> FileUpdate:
        """Make ``extraction`` the current state of ``path``.

        ``resolve=False`` defers edges (start-up resolves them as files come
        in): the record has no content hash until :meth:`settle`, so a file
        written before its edges is parsed again at the next start. ``stat``:
        the file's stat from before it was read, kept with its record when it
        may vouch for the content next time (``indexer.scan``).
        """
        before = self.graph.file_node(path)
        unchanged = (
            before is not None
            and before.status is NodeStatus.ACTIVE
            and before.source_hash == extraction.content_hash
        )
        update = apply_extraction(self.graph, path, extraction)
        record = self.records.get(path)
        if record is None or record.status != "present":
            self.modules.add(path)
        mtime_ns, size, ctime_ns, inode = stat or (None, None, None, None)
        self.records[path] = FileRecord(
            path,
            update.file_id,
            extraction.content_hash if resolve else None,
            mtime_ns=mtime_ns,
            size=size,
            ctime_ns=ctime_ns,
            inode=inode,
        )
        if extraction.has_references and resolve:
            self.resolve(path, extraction, update.ids)
        if not unchanged:
            self.writes.dirty.add(path)
            self.listener.nodes_changed(path)
        self.text_watch.changed(path)
        return update

    def resolve(
        self,
        path: str,
        extraction: FileExtraction,
        ids: list[str],
        pending: Container[str] = (),
    ) -> set[str]:
        """Recompute the ``calls`` and ``imports`` edges of ``path``.

        ``pending``: files not in the graph yet. If the edges needed any, they
        are not set, and those files are returned (resolve again once they are in).
        """
        file_id = self.graph.file_ids[path]
        resolver = FileResolver(
            extraction, ids, file_id, self.graph, self.modules, pending
        )
        edges = resolver.edges()
        if resolver.waited_on:
            return resolver.waited_on
        if set(edges) != set(self.graph.file_edges(path)):
            self.graph.set_file_edges(path, edges)
            self.writes.dirty.add(path)
        self._imports[path] = {
            self.modules.absolute(path, ref) for ref in extraction.imports
        }
        return set()

    def forget(self, path: str) -> FileUpdate | None:
        """A file was deleted: orphan its nodes (kept, never deleted)."""
        update = orphan_file(self.graph, path)
        record = self.records.get(path)
        if record is not None:
            self.records[path] = FileRecord(
                path, record.file_id, record.content_hash, "deleted"
            )
            self.modules.remove(path)
            self.writes.dirty.add(path)
        self._imports.pop(path, None)
        self.text_watch.changed(path)
        if update is not None:  # pending proposals on it may be stale now
            self.listener.nodes_changed(path)
        return update

    def skip(self, path: str, reason: str) -> FileUpdate | None:
        """A file exists but is not indexed: orphan its nodes, remember why.

        Returns what orphaning changed (to announce), None if nothing did.
        """
        previous = self.records.get(path)
        if previous is not None and previous.skipped_reason == reason:
            return None
        log.warning("not indexing %s: %s", path, reason)
        gone = self.forget(path)
        file_id = previous.file_id if previous else ""
        self.records[path] = FileRecord(path, file_id, None, "skipped", reason)
        self.writes.dirty.add(path)
        return gone

    def rename(self, old: str, new: str) -> bool:
        """Move a file's nodes to ``new``; their ids stay. False if ``old`` unknown."""
        if not move_file(self.graph, old, new):
            return False
        record = self.records.pop(old, None)
        if record is not None:
            self.records[new] = FileRecord(new, record.file_id, record.content_hash)
        self.modules.remove(old)
        self.modules.add(new)
        self._imports[new] = self._imports.pop(old, set())
        if old in self.documents:
            self.documents[new] = self.documents.pop(old)
        self.changes.rename(old, new)
        self.listener.file_moved(old, new)
        self.writes.moved(old, new)
        self.text_watch.changed(old)
        self.text_watch.changed(new)
        return True

    def dependents(self, paths: set[str]) -> set[str]:
        """Files whose edges may change when the names in ``paths`` change."""
        modules = {module_name(p) for p in paths}
        found = {i for p in paths for i in self.graph.importers(p)}
        found |= {p for p, wanted in self._imports.items() if wanted & modules}
        return found - paths

    async def reextract(self, paths: set[str]) -> None:
        """Recompute the edges of files whose own text did not change."""
        for path in sorted(paths & set(self.documents)):
            self.refresh_document(path, with_references=True)
        on_disk = sorted(p for p in paths if p not in self.documents)
        async for batch in self.extractor.extract(on_disk):
            for result in batch:
                if isinstance(result, FileExtraction) and (
                    result.path not in self.documents
                ):
                    self.apply(result.path, result)

    async def save_dirty(self, only: Iterable[str] | None = None) -> None:
        """Apply pending renames, then write every changed file (of ``only``,
        when given), in batches.
        """
        await self.writes.save(
            self.store, lambda path: snapshot(self.graph, self.records, path), only
        )
