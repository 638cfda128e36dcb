"""The composition root: one complete, started engine behind four facades.

Three consumers drive the engine — the language server, the ``remora`` command
line and the MCP server — and none re-assembles it::

    app = await RemoraApp.open(root, config, editor)
    node = app.nodes.find("pricing.py::Pricing.total")
    run_id = await app.runs.chat(node.id, "add a docstring")
    async for stored in app.history.follow(since_seq):
        ...
    await app.proposals.accept("pr_3f2a")
    await app.close()

- ``nodes``: find by id / unique prefix / ``path::qualified.name`` / position,
  cards, search (:mod:`remora_core.front.nodes`);
- ``runs``: chat, run, cancel, respond, list (:mod:`remora_core.front.runs`);
- ``proposals``: list, diff, accept, reject (:mod:`remora_core.front.proposals`);
- ``history``: event queries, a live follow and a node's conversation
  (:mod:`remora_core.front.history`);
- ``attribution``: which lines came from which agent, commit trailers
  (:mod:`remora_core.front.attribution`);
- ``graphs`` and ``checkpoints``: batch graph runs and snapshots of agents'
  state (:mod:`remora_core.graphs.facade`, :mod:`remora_core.history.checkpoints`),
  once the engine started.

What only an editor can do is the :class:`~remora_core.editor.Editor` given
here. The language server builds its projects itself (it attaches its event
listeners before they start) and wraps each in a :class:`RemoraApp` with
:meth:`RemoraApp.serving`; everyone else calls :meth:`RemoraApp.open`, which
returns the app only once its project has started.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from remora_core.front.attribution import Attribution
from remora_core.front.history import History
from remora_core.front.nodes import Nodes
from remora_core.front.proposals import Proposals
from remora_core.front.runs import Runs
from remora_core.project import Project

if TYPE_CHECKING:
    from pathlib import Path

    from remora_core.config import RemoraConfig
    from remora_core.editor import Editor
    from remora_core.graphs.facade import Graphs
    from remora_core.history.checkpoints import Checkpoints
    from remora_core.swarm.turns import TurnFunction
    from remora_core.trust import Trust

log = logging.getLogger(__name__)


class RemoraApp:
    """One project's engine and its use-case facades."""

    def __init__(self, project: Project, editor: Editor) -> None:
        self.project = project
        """The engine behind the facades (for the composing layer only)."""
        self.editor = editor
        self.nodes = Nodes(project)
        self.runs = Runs(project, self.nodes)
        self.proposals = Proposals(project, editor)
        self.history = History(project)
        self.attribution = Attribution(project)

    @classmethod
    def serving(cls, project: Project, editor: Editor) -> RemoraApp:
        """Facades over a project its composer starts itself (the language
        server: it attaches listeners first). Use them once it is loaded.
        """
        return cls(project, editor)

    @classmethod
    async def open(
        cls,
        root: Path,
        config: RemoraConfig,
        editor: Editor,
        *,
        trust: Trust | None = None,
        turn_function: TurnFunction | None = None,
    ) -> RemoraApp:
        """Open and start the project at ``root``: loaded, indexed, agents
        ready. Its store is owned (the one-writer lock held until
        :meth:`close`) unless another process owns it (then read-only).
        """
        project = Project(
            root,
            config,
            notify=editor.notify,
            progress=editor.progress,
            turn_function=turn_function,
            trust=trust,
        )
        project.question_presenter = editor.ask
        app = cls(project, editor)
        try:
            await project.start()
        except BaseException:
            await project.close()
            raise
        return app

    @property
    def root(self) -> Path | None:
        """The project root (None: files outside every workspace folder)."""
        return self.project.root

    @property
    def started(self) -> bool:
        """Whether the engine runs (the facades answer from then on; the
        language server wraps its projects before they start).
        """
        return self.project.started

    @property
    def graphs(self) -> Graphs:
        """Batch graph runs (run only where the store is owned: :attr:`read_only`)."""
        return self.project.graphs

    @property
    def checkpoints(self) -> Checkpoints:
        """Snapshots of agents' state (see :attr:`keeps_checkpoints`)."""
        return self.project.checkpoints

    @property
    def keeps_checkpoints(self) -> bool:
        """Whether this project owns a store to keep checkpoints in."""
        return self.project.engine.keeps_checkpoints

    @property
    def read_only(self) -> bool:
        """Whether another process owns the store (writes are refused)."""
        return self.project.following

    async def close(self) -> None:
        """Write what is pending, stop the agents and release the store."""
        await self.project.close()
