"""The parts of a project that work on its store, built when the app starts.

:class:`~remora_core.front.app.RemoraApp` (the composition root) has the code
index from the start; when it starts, :meth:`ProjectParts.open` opens the
project's store (``.remora/remora.db``; none for files outside every
workspace folder), loads the index from it and builds every part on it — the
swarm (events, subscriptions, runner), the agents, the agents' statuses,
graphs and checkpoints — and returns them started. Nothing in
:class:`ProjectParts` is optional or a placeholder.

The code index only reports what changed (``index/index_reports.py``
``IndexListener``); the parts listen:

- a file's nodes changed → its pending proposals are checked for staleness;
- a file moved → its proposals follow it;
- changes to announce → ``content_changed`` / ``topology_changed`` events on
  the swarm (which trigger subscribed agents), and orphaned nodes' agents are
  forgotten.

Only one server owns a store (``store/ownership.py``). The owner recovers what
a crash left (acceptances, graph runs) and checks every second that its file
was not deleted under it (``store/rebuild.py``); a second server opens it
read-only and follows it (``following.py``): it runs no agents and decides
nothing (:attr:`ProjectParts.following`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from remora_core.agents.resuming import resume, unanswered
from remora_core.agents.runtime import AgentRuntime
from remora_core.agents.statuses import AgentStatuses
from remora_core.graphs.facade import Graphs
from remora_core.history.checkpoints import Checkpoints
from remora_core.index.following import StoreFollower, describe_read_only
from remora_core.model import AgentStatus
from remora_core.store import Database, NodeStore
from remora_core.store.rebuild import keep_store, rebuild_if_gone
from remora_core.swarm.pipeline import Swarm

if TYPE_CHECKING:
    from remora_core.agents.questions import Question
    from remora_core.editor import Editor
    from remora_core.index.changes import Changes
    from remora_core.index.code_index import CodeIndex
    from remora_core.index.disk import DiskSync
    from remora_core.store import FileRecord
    from remora_core.swarm.turns import TurnFunction
    from remora_core.tasks import TaskSet
    from remora_core.trust import Trust

log = logging.getLogger(__name__)


class ProjectParts:
    """Store, swarm, agents, graphs and checkpoints of one project, wired."""

    def __init__(
        self,
        index: CodeIndex,
        database: Database | None,
        store: NodeStore | None,
        follower: StoreFollower | None,
        *,
        trust: Trust,
        editor: Editor,
        turn_function: TurnFunction | None,
    ) -> None:
        self.index = index
        self.root = index.root
        self.graph = index.graph
        self.database = database
        """The project's store; None only for files outside every workspace
        folder (memory only)."""
        self.store = store
        """The index's tables in :attr:`database` (None with it)."""
        self.follower = follower
        """Following the store another server owns; None: this one owns it."""
        self.notify = editor.notify
        self.swarm = Swarm(
            database, index.graph, index.config, run_agents=not self.following
        )
        self.agents = AgentRuntime(
            index,
            database,
            trust=trust,
            notify=editor.notify,
            presenter=editor.ask,
            emit=self.swarm.emit,
            reserve=self.swarm.runner.reserve,
        )
        self.swarm.turn_function = turn_function or self.agents.turn
        self.statuses = AgentStatuses(
            index.graph, store, self.swarm.events, index.tasks, lambda: index.closed
        )
        self.swarm.on_status = self.statuses.set
        # The editor sees every event, start-up ones included (its
        # ``remora/event`` stream, progress, diagnostics).
        self.swarm.bus.subscribe("editor", editor.on_event)
        self.graphs = Graphs(self)
        """Batch graph runs (run only by the store's owner)."""
        self.checkpoints = Checkpoints(self)
        """Snapshots of agents' state (kept only by the store's owner)."""
        index.listener = self

    @classmethod
    async def open(
        cls,
        index: CodeIndex,
        disk: DiskSync,
        *,
        trust: Trust,
        editor: Editor,
        turn_function: TurnFunction | None = None,
    ) -> ProjectParts:
        """Open the store, load ``index`` from it, build and start the rest.

        ``editor`` is told of problems, asked agents' questions and sees every
        event. ``disk`` re-reads files for a follower.
        """
        notify = editor.notify
        database: Database | None = None
        if index.root is not None:
            max_mb = index.config.store.max_mb
            database = await Database.open(
                index.root,
                on_problem=notify,
                max_bytes=int(max_mb * 1024 * 1024) if max_mb else None,
            )
        engine: ProjectParts | None = None
        try:
            store = follower = None
            if database is not None:
                store = NodeStore(database)
                if (told := describe_read_only(database)) is not None:
                    notify(told)
                if database.owner is not None:
                    follower = StoreFollower(index, store, database, disk)
                    await follower.begin()
                # A follower reads the owner's store whole (it changes under it).
                await index.load(store, lazy=follower is None)
            engine = cls(
                index,
                database,
                store,
                follower,
                trust=trust,
                editor=editor,
                turn_function=turn_function,
            )
            await engine.agents.start()
            await engine.swarm.start()
            if not engine.following:
                await engine.graphs.recover()
                await engine.keep_questions()
        except BaseException:
            if engine is not None:
                await engine.close()
            elif database is not None:
                await database.close()
            raise
        return engine

    async def keep_questions(self) -> None:
        """Questions a restart left unanswered wait again (their agents
        blocked); an answer resumes the agent (``agents/resuming.py``).
        """
        questions = self.agents.services.questions
        tasks = self.index.tasks

        def answered(question: Question, answer: str) -> None:
            tasks.spawn(resume(self.swarm, question, answer), name="resume an agent")

        questions.resume = answered
        kept = await unanswered(self.swarm)
        questions.keep(kept)
        for question in kept:
            self.swarm.set_agent_status(question.agent_id, AgentStatus.BLOCKED)

    @property
    def following(self) -> bool:
        """Whether another server owns the store (this one serves it read-only)."""
        return self.database is not None and self.database.owner is not None

    @property
    def keeps_checkpoints(self) -> bool:
        """Whether this engine owns a store to keep checkpoints in."""
        return self.database is not None and not self.following

    @property
    def records(self) -> dict[str, FileRecord]:
        """The project's files (for checkpoints: which differ)."""
        return self.index.records

    async def watch(
        self, watchers: TaskSet, on_owner_gone: Callable[[], object] | None
    ) -> None:
        """Once the workspace is indexed: preload the agents, then keep the
        store (its owner: recover unrecorded acceptances first) or follow it.
        """
        if self.root is not None and self.follower is None:
            watchers.spawn(self.agents.preload(), name="preload agents")
        if self.database is None:
            return
        if self.follower is not None:
            watchers.spawn(self.follower.run(on_owner_gone), name="follow store")
            return
        await self.agents.review.recover()  # acceptances a crash left unrecorded
        if self.agents.services.questions.kept:  # asked before a restart
            watchers.spawn(self.agents.services.questions.ask_again(), name="ask again")
        index = self.index
        watchers.spawn(
            keep_store(self.database, lambda: index.closed, self.notify),
            name="keep store",
        )

    # ---- what the index reports ------------------------------------------------

    def nodes_changed(self, path: str) -> None:
        """Pending proposals on ``path`` may have become stale."""
        self.agents.file_changed(path)

    def file_moved(self, old: str, new: str) -> None:
        """Proposals on ``old`` follow it to ``new``."""
        self.agents.file_moved(old, new)

    async def announce(self, changes: Changes) -> None:
        """Emit the events for ``changes`` (which trigger subscribed agents)."""
        for event in changes.events():
            await self.swarm.emit(event)
        if changes.orphaned:
            await self.swarm.forget_agents(changes.orphaned)

    # ---- closing -----------------------------------------------------------------

    async def stop(self) -> None:
        """Stop graph runs, the swarm (cancelled turns record their end first)
        and the agents' services. A question waiting for an answer stays
        unanswered in the log: the next start asks it again.
        """
        self.agents.services.questions.closing = True
        await self.graphs.close()
        await self.swarm.close()
        await self.agents.close()

    async def close_store(self) -> None:
        """Close the store (after the index wrote what it holds).

        The last thing before closing is the check the owner makes every
        second (``store/rebuild.py``): a store deleted just before a stop
        (``rm -rf .remora`` then quitting the editor) took every write of the
        shutdown with it, and the next start would mint every id anew.
        """
        if self.database is None:
            return
        try:
            if (told := await rebuild_if_gone(self.database)) is not None:
                self.notify(told)
        finally:
            await self.database.close()

    async def close(self) -> None:
        """Stop everything and close the store, with no index flush between
        (a start that failed or that a close overtook).
        """
        try:
            await self.stop()
        finally:
            try:
                await self.statuses.flush()
            finally:
                await self.close_store()
