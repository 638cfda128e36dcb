"""A project: one workspace folder's graph, store and open documents.

Life of a project:

1. :meth:`Project.start` opens ``.remora/remora.db`` (or carries on in memory if
   it cannot), loads the stored graph and sets ``loaded`` (ids are now
   trustworthy), then indexes the workspace (``disk.py``) and sets ``indexed``.
   Only one server owns a store (``store/ownership.py``): the owner checks
   every second that its file was not deleted under it (``store/rebuild.py``);
   a second server opens it read-only and follows it (``following.py``) until
   the owner goes away, then ``on_owner_gone`` lets the editor restart it.
2. Open documents are the truth for their files: every ``didChange`` re-parses
   incrementally and re-matches ids at once (cheap); edges and saving follow
   after a quiet period (``discovery.debounce_ms``) per document.
3. Files changed on disk are re-indexed unless the editor has them open.
4. :meth:`Project.close` writes whatever is pending and closes the store and
   the worker pool.

A project without a root holds files outside every workspace folder: memory
only, no indexing, no store.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remora_core.agents.runtime import AgentRuntime
from remora_core.cards import node_card
from remora_core.changes import Changes, ChangeTracker
from remora_core.checkpoints import Checkpoints
from remora_core.codegraph import CodeGraph
from remora_core.discovery import FileFilter
from remora_core.disk import DiskSync
from remora_core.documents import OpenDocument, TextChange
from remora_core.following import StoreFollower, describe_read_only
from remora_core.graphs.facade import Graphs
from remora_core.indexer import Extractor, scan
from remora_core.model import AgentStatus, CodeNode, NodeStatus
from remora_core.resolve import FileResolver, ModuleMap, module_name
from remora_core.search import search_nodes
from remora_core.store import Database, FileRecord, FileSnapshot, NodeStore
from remora_core.store.graph_loading import fill_graph, open_graph
from remora_core.store.nodes import SET_AGENT_STATUS_SQL
from remora_core.store.rebuild import keep_store
from remora_core.swarm.engine import Swarm
from remora_core.swarm.turns import TurnFunction, acknowledge
from remora_core.tasks import TaskSet
from remora_core.text import LineIndex, PositionEncoding
from remora_core.trust import Trust
from remora_core.updates import FileUpdate, apply_extraction, move_file, orphan_file

if TYPE_CHECKING:
    from remora_core.agents.questions import Presenter
    from remora_core.config import RemoraConfig
    from remora_core.discovery import FileExtraction
    from remora_core.events.store import StoredEvent
    from remora_core.progress import ProgressSink
    from remora_core.store.ownership import OwnerInfo

log = logging.getLogger(__name__)

SAVE_BATCH = 200


class Project:
    """Everything the engine knows about one workspace folder."""

    def __init__(
        self,
        root: Path | None,
        config: RemoraConfig,
        *,
        notify: Callable[[str], None] | None = None,
        progress: Callable[[], ProgressSink] | None = None,
        turn_function: TurnFunction | None = None,
        trust: Trust | None = None,
        on_owner_gone: Callable[[], None] | None = None,
    ) -> None:
        self.root = root
        self.on_owner_gone = on_owner_gone
        """Called when this project followed another server's store and that
        server went away (the editor restarts the project to own the store)."""
        self.config = config
        self.trust = trust or Trust.for_settings(config.model)
        """Whether the repository's own code runs, and where the key may go.
        Without one the project is untrusted and ``config`` is the caller's own."""
        self.notify = notify or (lambda message: None)
        """Tells the user about a problem (one message per problem)."""
        self.progress = progress
        self.turn_function = turn_function
        """``None``: agents' turns run on models (``agents/``)."""
        self.agents: AgentRuntime | None = None
        """The agents' services and kernel, once the project started."""
        self.question_presenter: Presenter | None = None
        """Shows agents' questions to the person (the editor sets it)."""
        self.graph = CodeGraph()
        self.modules = ModuleMap()
        self.documents: dict[str, OpenDocument] = {}
        self.records: dict[str, FileRecord] = {}
        self.database: Database | None = None
        self.store: NodeStore | None = None
        self.swarm = Swarm(
            None, self.graph, config, turn_function=turn_function or acknowledge
        )
        """Replaced by one on the project's store when the project starts."""
        self.graphs: Graphs | None = None
        """Batch graph runs, once the project started and owns its store."""
        self.checkpoints: Checkpoints | None = None
        """Snapshots of agents' state, once the project owns a store."""
        self.changes = ChangeTracker()
        self.event_listeners: list[Callable[[StoredEvent], object]] = []
        """Bus handlers attached to the swarm as soon as it exists (the editor's
        ``remora/event`` stream): they see every event, start-up ones included."""
        self.tasks = TaskSet(f"project {root}")
        self.watchers = TaskSet(f"project {root} store")
        """Loops that live as long as the project: keeping or following the store."""
        self.loaded = asyncio.Event()
        self.indexed = asyncio.Event()
        self.filter = FileFilter.from_globs(
            config.discovery.include,
            config.discovery.exclude,
            config.secrets.exclude,
        )
        self.closed = False
        self._closing = asyncio.Event()
        """Set when :meth:`close` begins: wakes everyone waiting in :meth:`ready`."""
        self.lock = asyncio.Lock()
        """Held by every async flow that reads files and then updates the graph."""
        self._dirty: set[str] = set()
        self._moves: list[tuple[str, str]] = []
        """Renames not yet applied to the store (before the files are saved)."""
        self._statuses: dict[str, AgentStatus] = {}
        """Agent statuses not yet written."""
        self._status_writer: asyncio.Task[None] | None = None
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._imports: dict[str, set[str]] = {}
        self.extractor = self._make_extractor()
        self.disk = DiskSync(self)

    def _make_extractor(self) -> Extractor:
        discovery = self.config.discovery
        return Extractor(
            self.root or Path("/"),
            discovery.max_file_bytes,
            self.config.ids.inline_comments,
            discovery.workers or os.cpu_count() or 1,
        )

    def reconfigure(self, config: RemoraConfig, trust: Trust | None = None) -> None:
        """Use other settings; only before :meth:`start` (later, restart instead)."""
        if self.loaded.is_set():
            raise RuntimeError("a started project cannot be reconfigured")
        self.config = config
        self.trust = trust or Trust.for_settings(config.model)
        self.filter = FileFilter.from_globs(
            config.discovery.include,
            config.discovery.exclude,
            config.secrets.exclude,
        )
        self.extractor = self._make_extractor()

    # ---- lifecycle -------------------------------------------------------------

    async def start(self) -> None:
        """Open the store, load it and index the workspace."""
        scanning = None
        follower: StoreFollower | None = None
        if self.root is not None:
            # Listing and hashing the files (a thread) overlaps loading the store.
            scanning = asyncio.ensure_future(
                asyncio.to_thread(
                    scan,
                    self.root,
                    self.filter,
                    self.config.discovery.max_file_bytes,
                )
            )
            max_mb = self.config.store.max_mb
            self.database = await Database.open(
                self.root,
                on_problem=self.notify,
                max_bytes=int(max_mb * 1024 * 1024) if max_mb else None,
            )
            self.store = NodeStore(self.database)
            if (told := describe_read_only(self.database)) is not None:
                self.notify(told)
            if self.following:
                follower = StoreFollower(self, self.database)
                await follower.begin()
            files = await open_graph(self.graph, self.store, lazy=not self.following)
            self.records = {record.path: record for record in files}
            self.watchers.spawn(fill_graph(self.graph, self.indexed), name="load graph")
            for record in files:
                if record.status == "present":
                    self.modules.add(record.path)
        self.agents = AgentRuntime(self, self.notify)
        await self.agents.start()
        self.swarm = Swarm(
            self.database,
            self.graph,
            self.config,
            turn_function=self.turn_function or self.agents.turn,
            on_status=self._set_agent_status,
            run_agents=not self.following,
        )
        for number, listener in enumerate(self.event_listeners):
            self.swarm.bus.subscribe(f"listener {number}", listener)  # type: ignore[arg-type]
        await self.swarm.start()
        if not self.following and self.database is not None:
            self.checkpoints = Checkpoints(self)
        if not self.following:
            self.graphs = Graphs(self)
            await self.graphs.recover()
        self.loaded.set()
        for path in list(self.documents):
            self.refresh_document(path, with_references=True)
            self.changes.snapshot(path, self.graph.file_nodes(path))
        try:
            if scanning is not None:
                await self.disk.index_workspace(scanning)
        finally:
            self.indexed.set()
        if self.root is not None and follower is None:
            self.watchers.spawn(self.agents.preload(), name="preload agents")
        if self.database is None:
            return
        if follower is not None:
            self.watchers.spawn(follower.run(self.on_owner_gone), name="follow store")
            return
        await self.agents.review.recover()  # acceptances a crash left unrecorded
        self.watchers.spawn(
            keep_store(self.database, lambda: self.closed, self.notify),
            name="keep store",
        )

    @property
    def following(self) -> bool:
        """Whether another server owns the store (this one serves it read-only)."""
        return self.database is not None and self.database.owner is not None

    async def ready(self) -> bool:
        """Wait until the stored graph is loaded; False if the project closed first.

        A request that arrives during start-up waits here; a shutdown or a
        restart that closes the project must still let it be answered, so the
        wait also ends when closing begins.
        """
        return await self.until(self.loaded)

    async def until(self, event: asyncio.Event) -> bool:
        """Wait for one of the project's events (``loaded``, ``indexed``) or its
        closing, whichever comes first; whether the event is set.
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

    @property
    def store_owner(self) -> OwnerInfo | None:
        """The server that owns the store, when it is another one."""
        return self.database.owner if self.database is not None else None

    async def close(self) -> None:
        """Write what is pending, then close the worker pool and the store."""
        if self.closed:
            return
        self.closed = True
        self._closing.set()
        await self.watchers.close()
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self.extractor.close()
        if self.graphs is not None:
            await self.graphs.close()
        await self.swarm.close()  # cancelled turns record their end first
        if self.agents is not None:
            await self.agents.close()
        await self.tasks.close()
        try:
            await self._save_statuses()
            if self.loaded.is_set():
                for path in list(self.documents):
                    self.refresh_document(path, with_references=True)
                await self.save_dirty()
        finally:
            if self.database is not None:
                await self.database.close()
            self.graph.detach()

    # ---- paths -------------------------------------------------------------------

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

    # ---- queries -------------------------------------------------------------------

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
        try:
            return LineIndex(self.absolute(path).read_bytes())
        except OSError:
            return None

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
        return search_nodes(self.graph.active(), query, limit)

    def card(self, node: CodeNode) -> dict[str, Any]:
        """The node card of ``node``."""
        card = node_card(self.graph, node)
        pending = self.pending_proposals(node.id)
        card["pending_proposals"] = len(pending)
        card["proposals"] = [p.to_json() for p in pending]
        return card

    def pending_proposals(self, node_id: str) -> list[Any]:
        """The pending proposals of a node (cheap: an in-memory index)."""
        if self.agents is None:
            return []
        return self.agents.services.proposals.pending(node_id=node_id)

    # ---- open documents ----------------------------------------------------------

    def open_document(self, path: str, version: int, text: str) -> None:
        """The editor opened ``path``; its buffer is now the truth for the file."""
        self.documents[path] = OpenDocument(
            path, version, text, self.config.discovery.max_file_bytes
        )
        if self.loaded.is_set():
            self.refresh_document(path, with_references=True)
            self.changes.snapshot(path, self.graph.file_nodes(path))
            self._save_later(path, delay=0)

    def change_document(
        self,
        path: str,
        version: int,
        changes: list[TextChange],
        encoding: PositionEncoding,
    ) -> FileUpdate | None:
        """Apply an edit: re-parse and re-match ids now; edges and saving later."""
        document = self.documents.get(path)
        if document is None:
            raise KeyError(path)
        document.apply(version, changes, encoding)
        if not self.loaded.is_set():
            return None
        update = self.refresh_document(path, with_references=False)
        self._save_later(path, delay=self.config.discovery.debounce_ms / 1000)
        return update

    def close_document(self, path: str) -> None:
        """The editor closed ``path``: the file on disk is the truth again."""
        self.changes.forget(path)
        if self.documents.pop(path, None) is not None and self.root is not None:
            self._cancel_timer(path)
            self.tasks.spawn(self.disk.files_changed(changed=[path]), name="close")

    def save_document(self, path: str) -> None:
        """The buffer was written to disk: settle and store it now."""
        if path in self.documents:
            self._save_later(path, delay=0)

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

    # ---- graph updates ---------------------------------------------------------------

    def apply(
        self, path: str, extraction: FileExtraction, *, resolve: bool = True
    ) -> FileUpdate:
        """Make ``extraction`` the current state of ``path``.

        ``resolve=False`` defers edges (start-up resolves once every file is in).
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
        self.records[path] = FileRecord(path, update.file_id, extraction.content_hash)
        if extraction.has_references and resolve:
            self.resolve(path, extraction, update.ids)
        if not unchanged:
            self._dirty.add(path)
            if self.agents is not None:
                self.agents.file_changed(path)
        return update

    def resolve(self, path: str, extraction: FileExtraction, ids: list[str]) -> None:
        """Recompute the ``calls`` and ``imports`` edges of ``path``."""
        file_id = self.graph.file_ids[path]
        edges = FileResolver(extraction, ids, file_id, self.graph, self.modules).edges()
        if set(edges) != set(self.graph.file_edges(path)):
            self.graph.set_file_edges(path, edges)
            self._dirty.add(path)
        self._imports[path] = {
            self.modules.absolute(path, ref) for ref in extraction.imports
        }

    def forget(self, path: str) -> FileUpdate | None:
        """A file was deleted: orphan its nodes (kept, never deleted)."""
        update = orphan_file(self.graph, path)
        record = self.records.get(path)
        if record is not None:
            self.records[path] = FileRecord(
                path, record.file_id, record.content_hash, "deleted"
            )
            self.modules.remove(path)
            self._dirty.add(path)
        self._imports.pop(path, None)
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
        self._dirty.add(path)
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
        if self.agents is not None:
            self.agents.file_moved(old, new)
        self._moves.append((old, new))
        self._dirty.add(new)
        return True

    def dependents(self, paths: set[str]) -> set[str]:
        """Files whose edges may change when the names in ``paths`` change."""
        modules = {module_name(p) for p in paths}
        found = {i for p in paths for i in self.graph.importers(p)}
        found |= {p for p, wanted in self._imports.items() if wanted & modules}
        return found - paths

    # ---- saving -----------------------------------------------------------------

    def _save_later(self, path: str, delay: float) -> None:
        self._cancel_timer(path)
        loop = asyncio.get_running_loop()
        self._timers[path] = loop.call_later(
            delay, lambda: self.tasks.spawn(self._settle(path), name="settle")
        )

    def _cancel_timer(self, path: str) -> None:
        timer = self._timers.pop(path, None)
        if timer is not None:
            timer.cancel()

    async def _settle(self, path: str) -> None:
        """Resolve an open document's edges (and its dependents'), then save."""
        self._timers.pop(path, None)
        async with self.lock:
            if path in self.documents:
                update = self.refresh_document(path, with_references=True)
                if update is not None and update.topology_changed:
                    await self.disk.reextract(self.dependents({path}))
                await self.announce(
                    self.changes.diff(path, self.graph.file_nodes(path))
                )
            await self.save_dirty()

    # ---- events ------------------------------------------------------------------

    async def announce(self, changes: Changes) -> None:
        """Emit the events for ``changes`` (which trigger subscribed agents)."""
        for event in changes.events():
            await self.swarm.emit(event)
        if changes.orphaned:
            await self.swarm.forget_agents(changes.orphaned)

    def _set_agent_status(self, node_id: str, status: AgentStatus) -> None:
        node = self.graph.get(node_id)
        if node is None or node.agent_status is status:
            return
        self.graph.set_agent_status(node_id, status)
        if self.store is None:
            return
        events = self.swarm.events
        if events.durable and not self.closed:
            # Every flip comes with an event (a turn starting, ending, asking):
            # it rides in that event's transaction instead of costing its own.
            events.also_write(SET_AGENT_STATUS_SQL, [(status.value, node_id)])
            return
        # Status flips come in bursts (every turn starts and ends): coalesce
        # them into one writer, and write what is left when closing.
        self._statuses[node_id] = status
        if not self.closed and (
            self._status_writer is None or self._status_writer.done()
        ):
            self._status_writer = self.tasks.spawn(
                self._save_statuses(), name="agent statuses"
            )

    async def _save_statuses(self) -> None:
        while self._statuses and self.store is not None:
            batch, self._statuses = self._statuses, {}
            await self.store.set_agent_statuses(batch)

    async def save_dirty(self, only: Iterable[str] | None = None) -> None:
        """Apply pending renames, then write every changed file (of ``only``,
        when given), in batches.
        """
        if self.store is not None:
            while self._moves:
                old, new = self._moves[0]
                await self.store.move_file(old, new)
                self._moves.pop(0)
        if not self._dirty:
            return
        if only is None:
            paths, self._dirty = sorted(self._dirty), set()
        else:
            paths = sorted(self._dirty.intersection(only))
            self._dirty.difference_update(paths)
        if self.store is None:
            return
        for start in range(0, len(paths), SAVE_BATCH):
            batch = paths[start : start + SAVE_BATCH]
            try:
                await self.store.save_files([self._snapshot(p) for p in batch])
            except BaseException:
                # Interrupted (shutdown): what was not written is still pending.
                self._dirty.update(paths[start:])
                raise

    def _snapshot(self, path: str) -> FileSnapshot:
        file_node = self.graph.file_node(path)
        record = self.records.get(path) or FileRecord(
            path, file_node.id if file_node else "", None
        )
        nodes = [file_node] if file_node is not None else []
        nodes += self.graph.file_nodes(path, orphans=True)
        edges = self.graph.file_edges(path) + self.graph.parent_edges(path)
        return FileSnapshot(record, nodes, edges)
