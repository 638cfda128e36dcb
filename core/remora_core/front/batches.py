"""The ``graphs`` and ``checkpoints`` facades: batch runs and snapshots.

Both need the project's own store: a project whose store another server owns
refuses them (naming the owner), and so does the project of files outside
every workspace folder (it has no store). Graph runs are
``remora_core/graphs/``, checkpoints ``remora_core/history/checkpoints.py``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from remora_core.front.errors import FrontError, InvalidArguments, NotFound
from remora_core.graphs.spec import GraphInvalid
from remora_core.history.checkpoints import DamagedCheckpoint

if TYPE_CHECKING:
    from remora_core.front.startup import Startup
    from remora_core.history.checkpoints import Checkpoints as Snapshots

log = logging.getLogger(__name__)


class Graphs:
    """Batch graph runs of one project."""

    def __init__(self, startup: Startup) -> None:
        self._startup = startup

    async def run(self, graph: Any) -> str:
        """Check and start a graph: a name under ``.remora/graphs`` or the
        object of DESIGN §10; the graph run's id. A graph that cannot run is
        refused with every problem, and nothing runs.
        """
        parts = await self._startup.parts()
        self._startup.ensure_owner("run graphs")
        if parts.database is None:
            raise InvalidArguments("graphs run in a workspace folder's project")
        try:
            run = await parts.graphs.run(graph)
        except GraphInvalid as invalid:
            raise InvalidArguments(str(invalid)) from None
        return run.id

    async def available(self) -> list[dict[str, Any]]:
        """The project's graphs (``.remora/graphs``) with their steps or the
        problems that keep each from running.
        """
        parts = await self._startup.parts()
        if parts.database is None:
            return []
        return parts.graphs.available()

    async def recent(self, limit: int) -> list[dict[str, Any]]:
        """The project's latest graph runs, newest first."""
        parts = await self._startup.parts()
        return await parts.graphs.recent(limit)

    async def status(self, graph_run_id: str) -> dict[str, Any]:
        """Steps × nodes with outcomes of a live or past run."""
        parts = await self._startup.parts()
        found = await parts.graphs.status(graph_run_id)
        if found is None:
            raise NotFound(f"no graph run {graph_run_id}")
        return found

    async def resume(self, graph_run_id: str) -> str:
        """Go on with a run a restart interrupted, under the same id: steps
        that finished are not run again.
        """
        parts = await self._startup.parts()
        self._startup.ensure_owner("run graphs")
        if await parts.graphs.status(graph_run_id) is None:
            raise NotFound(f"no graph run {graph_run_id}")
        try:
            run = await parts.graphs.resume(graph_run_id)
        except ValueError as problem:
            raise InvalidArguments(
                f"graph run {graph_run_id} cannot go on: {problem}"
            ) from None
        return run.id

    def knows(self, graph_run_id: str) -> bool:
        """Whether ``graph_run_id`` runs in this process."""
        parts = self._startup.now()
        return parts is not None and parts.graphs.knows(graph_run_id)

    def cancel(self, graph_run_id: str) -> bool:
        """Cancel a running graph run as a whole; whether it was running."""
        parts = self._startup.now()
        return parts is not None and parts.graphs.cancel(graph_run_id)


class Checkpoints:
    """Snapshots of one project's agents' state."""

    def __init__(self, startup: Startup) -> None:
        self._startup = startup

    async def _kept(self, what: str) -> Snapshots:
        # A checkpoint records the files' hashes: it waits for the first index.
        parts = await self._startup.indexed_parts()
        self._startup.ensure_owner(what)
        if not parts.keeps_checkpoints:
            raise InvalidArguments(
                f"Remora cannot {what}: this project has no store of its own"
            )
        return parts.checkpoints

    async def create(self, label: str | None = None) -> str:
        """Take a checkpoint; its id."""
        return await (await self._kept("take checkpoints")).create(label)

    async def list(self) -> list[dict[str, Any]]:
        """Checkpoints, newest first."""
        return await (await self._kept("list checkpoints")).list()

    async def restore(self, checkpoint_id: str) -> dict[str, Any]:
        """Bring agents' state back: ``{restored, files_differing}``."""
        snapshots = await self._kept("restore checkpoints")
        try:
            return await snapshots.restore(checkpoint_id)
        except DamagedCheckpoint as problem:
            raise FrontError(str(problem)) from None
        except KeyError:
            raise NotFound(f"no checkpoint {checkpoint_id}") from None
