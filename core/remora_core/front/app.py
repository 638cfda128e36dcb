"""The composition root: the one handle every consumer holds.

The language server, the control socket, the ``remora`` command line, the MCP
server and the dashboard each hold a :class:`RemoraApp` and nothing else of
the engine. It is built whole by its constructor; what a consumer
contributes is passed in — an :class:`~remora_core.editor.Editor` (how edits
land, how the person is asked and told, where events and progress go), the
trust decided for the repository, and who decides it::

    app = await RemoraApp.open(root, config, editor)     # built and started
    node = app.nodes.find("pricing.py::Pricing.total")
    run_id = await app.runs.chat(node.id, "add a docstring")
    async for stored in app.history.follow(since_seq):
        ...
    await app.proposals.accept("pr_3f2a")
    await app.close()

or, for an editor that opens documents while the store loads,
``app = RemoraApp(...)``, ``app.documents.open(...)``, ``await app.start()``.

Its facades (``remora_core/front/``): ``nodes``, ``documents``, ``files``,
``runs``, ``proposals``, ``history``, ``attribution``, ``graphs``,
``checkpoints``, ``trust``, ``usage``, ``subscriptions``; the commands of
every door are the table of ``front/commands.py`` over them. Facades wait for
the project to start themselves (``front/startup.py``).

Starting builds the parts that work on the project's store
(:class:`~remora_core.parts.ProjectParts`), then indexes the workspace;
closing writes whatever is pending and closes the store and the worker pool.
A project whose store another server owns follows it read-only until the owner
goes away, then ``on_owner_gone`` lets the door start a fresh app that owns it.
An app without a root holds files outside every workspace folder: memory
only, no indexing, no store.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from remora_core.front.attribution import Attribution
from remora_core.front.batches import Checkpoints, Graphs
from remora_core.front.costs import Costs
from remora_core.front.documents import Documents, Files
from remora_core.front.history import History
from remora_core.front.nodes import Nodes
from remora_core.front.proposals import Proposals
from remora_core.front.reverts import Reverts
from remora_core.front.runs import Runs
from remora_core.front.startup import Startup
from remora_core.front.trust import TrustFacade
from remora_core.front.wakes import Wakes
from remora_core.index.code_index import CodeIndex
from remora_core.index.disk import DiskSync
from remora_core.index.document_sync import DocumentSync
from remora_core.index.indexer import scan
from remora_core.parts import ProjectParts
from remora_core.store.database import DB_NAME, STORE_DIR
from remora_core.tasks import TaskSet
from remora_core.trust import RememberedTrust, Trust

if TYPE_CHECKING:
    from pathlib import Path

    from remora_core.config import RemoraConfig
    from remora_core.editor import Editor
    from remora_core.index.documents import OpenDocument
    from remora_core.index.indexer import Scan, Vouched
    from remora_core.swarm.turns import TurnFunction
    from remora_core.trust import TrustDecisions

log = logging.getLogger(__name__)

RECORDS_WAIT_S = 60.0
"""How long the start-up scan waits for the stored records before reading
every file instead."""
NAMES_READ_WAIT_S = 10.0
"""How long a symbol search waits for the stored name index to be read at
start before loading the whole graph instead."""


class RemoraApp:
    """One project's engine behind its facades."""

    def __init__(
        self,
        root: Path | None,
        config: RemoraConfig,
        editor: Editor,
        *,
        trust: Trust | None = None,
        decisions: TrustDecisions | None = None,
        turn_function: TurnFunction | None = None,
        on_owner_gone: Callable[[], object] | None = None,
        documents: dict[str, OpenDocument] | None = None,
    ) -> None:
        """``trust``: what the repository may do (default: untrusted, the key
        only for ``config``'s own endpoint); ``decisions``: who decides it
        (default: the person's remembered answers); ``turn_function``: run
        agents' turns with it instead of models (tests); ``documents``: the
        open documents of the app this one replaces (a restart).
        """
        self.root = root
        self.editor = editor
        self._trust = trust or Trust.for_settings(config.model)
        self._turn_function = turn_function
        self._on_owner_gone = on_owner_gone
        self._index = index = CodeIndex(root, config)
        if documents is not None:
            index.documents = documents
        self._disk = DiskSync(index, editor.progress)
        self._sync = DocumentSync(index, self._disk)
        self._watchers = TaskSet(f"project {root} store")
        """Loops that live as long as the app: keeping or following the
        store, the control socket."""
        self._startup = startup = Startup(index)
        self.nodes = Nodes(index, startup)
        self.documents = Documents(index, self._sync)
        self.files = Files(index, self._disk)
        self.runs = Runs(startup, self.nodes)
        self.proposals = Proposals(index, self._disk, startup, editor)
        self.reverts = Reverts(startup, self.proposals)
        self.history = History(startup)
        self.attribution = Attribution(index, startup)
        self.graphs = Graphs(startup)
        self.checkpoints = Checkpoints(startup)
        self.usage = Costs(startup)
        self.subscriptions = Wakes(startup, self.nodes)
        self.trust = TrustFacade(root, decisions or RememberedTrust())

    @classmethod
    async def open(
        cls, root: Path | None, config: RemoraConfig, editor: Editor, **options: Any
    ) -> RemoraApp:
        """Build and start the app at ``root``: loaded, indexed, agents ready.
        Its store is owned (the one-writer lock held until :meth:`close`)
        unless another process owns it (then read-only).
        """
        app = cls(root, config, editor, **options)
        try:
            await app.start()
        except BaseException:
            await app.close()
            raise
        return app

    # ---- what consumers read ---------------------------------------------------

    @property
    def config(self) -> RemoraConfig:
        """The project's effective settings."""
        return self._index.config

    def same_settings(self, config: RemoraConfig, trust: Trust) -> bool:
        """Whether ``config`` and ``trust`` are what this app runs with."""
        mine = self._trust
        return config == self._index.config and (
            trust.trusted,
            trust.person_origins,
        ) == (mine.trusted, mine.person_origins)

    @property
    def read_only(self) -> bool:
        """Whether another server owns the store (writes are refused)."""
        parts = self._startup.now()
        return parts is not None and parts.following

    @property
    def owner(self) -> str | None:
        """The server that owns the store, when it is another one."""
        parts = self._startup.now()
        database = parts.database if parts is not None else None
        owner = database.owner if database is not None else None
        return owner.describe() if owner is not None else None

    @property
    def closed(self) -> bool:
        """Whether closing began."""
        return self._index.closed

    async def ready(self) -> bool:
        """Wait until the stored graph is loaded; False if the app closed first."""
        return await self._index.ready()

    async def loaded(self) -> None:
        """Wait until the stored graph is loaded; :class:`ProjectClosed` (a
        request failure a person can read) if the app closed first.
        """
        await self._startup.parts()

    async def indexed(self) -> bool:
        """Wait until the workspace is indexed; False if the app closed first."""
        return await self._index.until(self._index.indexed)

    async def searchable(self) -> None:
        """Wait until a symbol search sees every node: at once with the
        stored name index (``index/symbol_snapshot.py``); without it a lazily
        loaded graph is loaded now rather than after its quiet delay (a
        waiting request yields to the others, and is simply dropped if
        cancelled). The stored name index is read shortly after start: a
        search that comes first has it read at once, and waits.
        """
        names = self._index.stored_names
        if names is not None and not names.read_done.is_set():
            names.asked.set()
            with contextlib.suppress(TimeoutError):  # a store that slow: load
                await asyncio.wait_for(names.read_done.wait(), NAMES_READ_WAIT_S)
        graph = self._index.graph
        if not graph.searchable:
            graph.hurried.set()
            await graph.wait_complete()

    async def graph_complete(self) -> None:
        """Wait until a lazily loaded graph is whole in memory (or closing)."""
        await self._index.graph.wait_complete()

    def keep(self, loop: Coroutine[Any, Any, Any], name: str) -> None:
        """Run ``loop`` for as long as the app is open (the control socket)."""
        self._watchers.spawn(loop, name=name)

    # ---- lifecycle -----------------------------------------------------------------

    async def start(self) -> None:
        """Build the parts on the store, then index the workspace."""
        if self._index.closed:
            return
        try:
            await self._start()
        finally:  # workers started ahead that indexing did not take
            self._index.extractor.release_ahead()

    async def _start(self) -> None:
        index = self._index
        scanning = None
        records: Future[Vouched] = Future()
        if index.root is not None:
            first = not (index.root / STORE_DIR / DB_NAME).exists()
            if first:
                index.extractor.start_ahead()  # a first index: every file
            scanning = self._scan(records, wait=not first)
        try:
            parts = await ProjectParts.open(
                index,
                self._disk,
                trust=self._trust,
                editor=self.editor,
                turn_function=self._turn_function,
            )
        finally:  # the scan waits for this, even if opening failed
            records.set_result(index.vouched())
        if index.closed:  # closed while the parts were being built
            await parts.close()
            return
        self._startup.started(parts)
        index.loaded.set()
        self._sync.loaded()
        try:
            if scanning is not None:
                await self._disk.index_workspace(scanning)
        finally:
            index.indexed.set()
        await parts.watch(self._watchers, self._on_owner_gone)

    def _scan(self, records: Future[Vouched], *, wait: bool) -> asyncio.Future[Scan]:
        """List the files while the store loads; then hash those whose stat
        the stored ``records`` do not vouch for.

        The scan waits for the records, so it runs in a thread of its own: a
        thread of the shared pool blocked there could starve the store's
        opening (several workspace folders start at once). Without a store
        (``wait`` false: a first index) there are no records to wait for, and
        the files are only listed: the parsing workers, waiting for the list,
        read and hash each one anyway.
        """
        index = self._index
        assert index.root is not None

        def known() -> Vouched:
            if not wait:
                return {}
            try:
                return records.result(timeout=RECORDS_WAIT_S)
            except TimeoutError:  # the store takes that long: read every file
                return {}

        executor = ThreadPoolExecutor(1, thread_name_prefix="remora-scan")
        try:
            return asyncio.get_running_loop().run_in_executor(
                executor,
                functools.partial(
                    scan,
                    index.root,
                    index.filter,
                    index.config.discovery.max_file_bytes,
                    known,
                    read=wait,  # a first index: the parsing workers read them
                ),
            )
        finally:
            executor.shutdown(wait=False)  # its one thread ends with the scan

    async def close(self) -> None:
        """Write what is pending, then close the worker pool and the store."""
        index = self._index
        if index.closed:
            return
        index.begin_close()
        await self._watchers.close()
        self._sync.stop()
        index.extractor.close()
        parts = self._startup.now()
        if parts is not None:
            await parts.stop()
        await index.tasks.close()
        try:
            if parts is not None:
                await parts.statuses.flush()
            await self._sync.flush()
        finally:
            if parts is not None:
                await parts.close_store()
            index.graph.detach()  # the lazy graph's own read-only connection
