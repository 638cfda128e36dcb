"""A project: one workspace folder, from before its engine starts to its close.

The editor needs a project before its engine exists: documents are opened
while the store loads, and requests wait for it. A :class:`Project` is that
handle:

- its **code index** (``code_index.py``) exists from the start; open
  documents (``document_sync.py``) and the disk (``disk.py``) keep it current;
- :meth:`Project.start` has the composition root (``engine.py``) build the
  complete, started **engine** on it — store, swarm, agents, graphs,
  checkpoints — then sets ``loaded`` (ids are now trustworthy), indexes the
  workspace and sets ``indexed``;
- :meth:`Project.close` writes whatever is pending and closes the store and
  the worker pool.

Before start the engine's parts do not exist: asking for them raises
:class:`NotStarted` (wait with :meth:`ready` first). A project whose store
another server owns follows it read-only (``following.py``) until the owner
goes away, then ``on_owner_gone`` lets the editor restart it.

A project without a root holds files outside every workspace folder: memory
only, no indexing, no store.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from remora_core.index.code_index import CodeIndex
from remora_core.index.disk import DiskSync
from remora_core.index.document_sync import DocumentSync
from remora_core.index.indexer import scan
from remora_core.parts import Engine
from remora_core.store.database import DB_NAME, STORE_DIR
from remora_core.tasks import TaskSet
from remora_core.trust import Trust

if TYPE_CHECKING:
    from pathlib import Path

    from remora_core.agents.questions import Presenter
    from remora_core.agents.runtime import AgentRuntime
    from remora_core.config import RemoraConfig
    from remora_core.discovery import FileFilter
    from remora_core.events.store import StoredEvent
    from remora_core.graphs.facade import Graphs
    from remora_core.history.checkpoints import Checkpoints
    from remora_core.index.codegraph import CodeGraph
    from remora_core.index.documents import OpenDocument, TextChange
    from remora_core.index.indexer import Scan, Vouched
    from remora_core.index.updates import FileUpdate
    from remora_core.model import CodeNode
    from remora_core.progress import ProgressSink
    from remora_core.store import Database, NodeStore
    from remora_core.store.ownership import OwnerInfo
    from remora_core.swarm.pipeline import Swarm
    from remora_core.swarm.turns import TurnFunction
    from remora_core.text import LineIndex, PositionEncoding

log = logging.getLogger(__name__)

RECORDS_WAIT_S = 60.0
"""How long the start-up scan waits for the stored records before reading
every file instead."""


class NotStarted(RuntimeError):
    """The project's engine was asked for before the project started."""


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
        self.trust = trust or Trust.for_settings(config.model)
        """Whether the repository's own code runs, and where the key may go.
        Without one the project is untrusted and ``config`` is the caller's own."""
        self.notify = notify or (lambda message: None)
        """Tells the user about a problem (one message per problem)."""
        self.turn_function = turn_function
        """``None``: agents' turns run on models (``agents/``)."""
        self.question_presenter: Presenter | None = None
        """Shows agents' questions to the person (the editor sets it)."""
        self.event_listeners: list[Callable[[StoredEvent], object]] = []
        """Bus handlers attached to the swarm as soon as it exists (the editor's
        ``remora/event`` stream): they see every event, start-up ones included."""
        self.index = CodeIndex(root, config)
        self.disk = DiskSync(self.index, progress)
        self.documents_sync = DocumentSync(self.index, self.disk)
        self.watchers = TaskSet(f"project {root} store")
        """Loops that live as long as the project: keeping or following the store."""
        self._engine: Engine | None = None

    def reconfigure(self, config: RemoraConfig, trust: Trust | None = None) -> None:
        """Use other settings; only before :meth:`start` (later, restart instead)."""
        self.index.reconfigure(config)
        self.trust = trust or Trust.for_settings(config.model)

    # ---- lifecycle -------------------------------------------------------------

    async def start(self) -> None:
        """Build the engine on the store, then index the workspace."""
        if self.index.closed:
            return
        try:
            await self._start()
        finally:  # workers started ahead that indexing did not take
            self.index.extractor.release_ahead()

    async def _start(self) -> None:
        index = self.index
        scanning = None
        records: Future[Vouched] = Future()
        if index.root is not None:
            if not (index.root / STORE_DIR / DB_NAME).exists():
                index.extractor.start_ahead()  # a first index: every file
            scanning = self._scan(records)
        try:
            engine = await Engine.open(
                index,
                self.disk,
                trust=self.trust,
                notify=self.notify,
                turn_function=self.turn_function,
                presenter=self.question_presenter,
                listeners=self.event_listeners,
            )
        finally:  # the scan waits for this, even if opening failed
            records.set_result(index.vouched())
        if index.closed:  # closed while the engine was being built
            await engine.close()
            return
        self._engine = engine
        index.loaded.set()
        self.documents_sync.loaded()
        try:
            if scanning is not None:
                await self.disk.index_workspace(scanning)
        finally:
            index.indexed.set()
        await engine.watch(self.watchers, self.on_owner_gone)

    def _scan(self, records: Future[Vouched]) -> asyncio.Future[Scan]:
        """List the files while the store loads; then hash those whose stat
        the stored ``records`` do not vouch for.

        The scan waits for the records, so it runs in a thread of its own: a
        thread of the shared pool blocked there could starve the store's
        opening (several workspace folders start at once).
        """
        index = self.index
        assert index.root is not None

        def known() -> Vouched:
            try:
                return records.result(timeout=RECORDS_WAIT_S)
            except TimeoutError:  # the store takes that long: read every file
                return {}

        executor = ThreadPoolExecutor(1, thread_name_prefix="remora-scan")
        try:
            return asyncio.get_running_loop().run_in_executor(
                executor,
                scan,
                index.root,
                index.filter,
                index.config.discovery.max_file_bytes,
                known,
            )
        finally:
            executor.shutdown(wait=False)  # its one thread ends with the scan

    async def close(self) -> None:
        """Write what is pending, then close the worker pool and the store."""
        index = self.index
        if index.closed:
            return
        index.begin_close()
        await self.watchers.close()
        self.documents_sync.stop()
        index.extractor.close()
        engine = self._engine
        if engine is not None:
            await engine.stop()
        await index.tasks.close()
        try:
            if engine is not None:
                await engine.statuses.flush()
            await self.documents_sync.flush()
        finally:
            if engine is not None:
                await engine.close_store()
            index.graph.detach()  # the lazy graph's own read-only connection

    async def ready(self) -> bool:
        """Wait until the stored graph is loaded; False if the project closed first."""
        return await self.index.ready()

    async def until(self, event: asyncio.Event) -> bool:
        """Wait for ``loaded`` or ``indexed``, or closing; whether it is set."""
        return await self.index.until(event)

    @property
    def started(self) -> bool:
        """Whether the engine exists (from just before ``loaded`` is set)."""
        return self._engine is not None

    @property
    def engine(self) -> Engine:
        """The project's engine; :class:`NotStarted` before :meth:`start`."""
        if self._engine is None:
            raise NotStarted(f"the project {self.root} has not started yet")
        return self._engine

    @property
    def following(self) -> bool:
        """Whether another server owns the store (this one serves it read-only)."""
        return self._engine is not None and self._engine.following

    @property
    def store_owner(self) -> OwnerInfo | None:
        """The server that owns the store, when it is another one."""
        database = self._engine.database if self._engine is not None else None
        return database.owner if database is not None else None

    # ---- the engine's parts (started projects) ---------------------------------

    @property
    def swarm(self) -> Swarm:
        """Events, subscriptions and the runner."""
        return self.engine.swarm

    @property
    def agents(self) -> AgentRuntime:
        """The agents' services and kernel."""
        return self.engine.agents

    @property
    def graphs(self) -> Graphs:
        """Batch graph runs."""
        return self.engine.graphs

    @property
    def checkpoints(self) -> Checkpoints:
        """Snapshots of agents' state."""
        return self.engine.checkpoints

    @property
    def database(self) -> Database | None:
        """The store (None: memory only, files outside every workspace folder)."""
        return self.engine.database

    @property
    def store(self) -> NodeStore | None:
        """The index's tables in :attr:`database`."""
        return self.engine.store

    # ---- the code index ----------------------------------------------------------

    @property
    def config(self) -> RemoraConfig:
        """The project's effective settings."""
        return self.index.config

    @property
    def graph(self) -> CodeGraph:
        """Nodes and edges."""
        return self.index.graph

    @property
    def documents(self) -> dict[str, OpenDocument]:
        """Open documents by path."""
        return self.index.documents

    @property
    def filter(self) -> FileFilter:
        """Which paths are the project's Python files."""
        return self.index.filter

    @property
    def tasks(self) -> TaskSet:
        """Background work that ends with the project."""
        return self.index.tasks

    @property
    def indexed(self) -> asyncio.Event:
        """Set once the workspace was indexed."""
        return self.index.indexed

    @property
    def closed(self) -> bool:
        """Whether closing began."""
        return self.index.closed

    def carry_documents(self, other: Project) -> None:
        """Serve ``other``'s open documents (a restart keeps the buffers)."""
        self.index.documents = other.index.documents

    def relative(self, absolute: Path) -> str | None:
        """The project path of ``absolute``, or None if outside the root."""
        return self.index.relative(absolute)

    def outline(self, path: str) -> list[CodeNode] | None:
        """Active definitions of a file, or None if the file is unknown."""
        return self.index.outline(path)

    def line_index(self, path: str) -> LineIndex | None:
        """Line index of the current text of ``path`` (open buffer, else disk)."""
        return self.index.line_index(path)

    def node_at(
        self, path: str, line: int, character: int, encoding: PositionEncoding
    ) -> CodeNode | None:
        """Innermost definition at an editor position in ``path``."""
        return self.index.node_at(path, line, character, encoding)

    def search(self, query: str, limit: int) -> list[CodeNode]:
        """Best matches of ``query`` among every active node."""
        return self.index.search(query, limit)

    # ---- open documents ----------------------------------------------------------

    def open_document(self, path: str, version: int, text: str) -> None:
        """The editor opened ``path``; its buffer is now the truth for the file."""
        self.documents_sync.open(path, version, text)

    def change_document(
        self,
        path: str,
        version: int,
        changes: list[TextChange],
        encoding: PositionEncoding,
    ) -> FileUpdate | None:
        """Apply an edit: re-parse and re-match ids now; edges and saving later."""
        return self.documents_sync.change(path, version, changes, encoding)

    def close_document(self, path: str) -> None:
        """The editor closed ``path``: the file on disk is the truth again."""
        self.documents_sync.close(path)

    def save_document(self, path: str) -> None:
        """The buffer was written to disk: settle and store it now."""
        self.documents_sync.save(path)
