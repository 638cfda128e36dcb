"""The graphs use case of one project: run, status, cancel (DESIGN §10, §11).

Consumers (the LSP commands, later the CLI) call :class:`Graphs` only. A graph
is given by name (``.remora/graphs/<name>.yaml``) or inline as the object of
§10; it is checked completely before anything runs (:class:`GraphInvalid`
lists every problem).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from remora_core.discovery.files import SourceSkipped
from remora_core.graphs.execution import GraphEngine, GraphRun
from remora_core.graphs.spec import GRAPH_NAME, GraphInvalid, parse_graph, plan_graph
from remora_core.graphs.story import recent_runs
from remora_core.model import ProposalStatus
from remora_core.project_paths import PathRefused, read_project_file

if TYPE_CHECKING:
    from remora_core.parts_port import PartsPort

log = logging.getLogger(__name__)

MAX_GRAPH_BYTES = 256 * 1024

MAX_LISTED_GRAPHS = 200
"""Graph files listed at most (a person picks one from the list)."""


class Graphs:
    """Graph runs of one project."""

    def __init__(self, project: PartsPort) -> None:
        self.project = project
        proposals = project.agents.services.proposals if project.agents else None

        def pending(proposal_id: str) -> bool:
            found = proposals.get(proposal_id) if proposals else None
            return found is not None and found.status == ProposalStatus.PENDING

        self.engine = GraphEngine(
            project.swarm, pending_proposal=pending, checkpoint=self._checkpoint
        )

    async def _checkpoint(self, label: str) -> object:
        checkpoints = getattr(self.project, "checkpoints", None)
        if checkpoints is None:
            return None
        return await checkpoints.create(label)

    def load(self, graph: Any) -> dict[str, Any] | str:
        """The graph's source: a named file's text, or the inline object."""
        if isinstance(graph, dict):
            return graph
        if not isinstance(graph, str) or not GRAPH_NAME.match(graph):
            raise GraphInvalid(
                [
                    "graph must be a name under .remora/graphs or an object, "
                    f"got {graph!r}"
                ]
            )
        root = self.project.root
        shown = f".remora/graphs/{graph}.yaml"
        if root is None or not (root / shown).is_file():
            raise GraphInvalid([f"no graph named {graph!r} ({shown})"])
        try:  # inside the project only, resolved now (project_paths)
            data = read_project_file(root, shown, MAX_GRAPH_BYTES)
        except PathRefused as refused:
            raise GraphInvalid([str(refused)]) from None
        except SourceSkipped as skipped:
            raise GraphInvalid([f"{shown} {skipped}"]) from None
        return data.decode("utf-8")

    def available(self) -> list[dict[str, Any]]:
        """The graphs under ``.remora/graphs``, by name: each one's steps, or
        the problems that keep it from running (it is checked, not run).
        """
        root = self.project.root
        folder = root / ".remora" / "graphs" if root else None
        if folder is None or not folder.is_dir() or folder.is_symlink():
            return []
        names = sorted(
            path.stem for path in folder.glob("*.yaml") if GRAPH_NAME.match(path.stem)
        )[:MAX_LISTED_GRAPHS]
        listed: list[dict[str, Any]] = []
        for name in names:
            try:
                spec = parse_graph(self.load(name))
            except GraphInvalid as invalid:
                listed.append({"name": name, "steps": [], "problems": invalid.problems})
            else:
                steps = [step.id for step in spec.steps]
                listed.append({"name": name, "steps": steps, "problems": []})
        return listed

    async def recent(self, limit: int) -> list[dict[str, Any]]:
        """The latest graph runs the store remembers, newest first."""
        return await recent_runs(self.engine.swarm.events, limit)

    async def run(self, graph: Any) -> GraphRun:
        """Check and start a graph; its run (GraphInvalid before anything runs).

        Parsing and matching every node against the targets' globs run in a
        thread: the event loop keeps answering the editor meanwhile.
        """
        source = self.load(graph)
        spec = await asyncio.to_thread(parse_graph, source)
        agents = self.project.agents
        bundles = agents.services.bundles.names() if agents else []
        nodes = list(self.project.graph.active())
        plan = await asyncio.to_thread(plan_graph, spec, nodes, bundles)
        return await self.engine.start(plan)

    async def status(self, graph_run_id: str) -> dict[str, Any] | None:
        """Steps × nodes with outcomes of a live or past run; None for a run the
        store does not know.
        """
        return await self.engine.status(graph_run_id)

    async def resume(self, graph_run_id: str) -> GraphRun:
        """Go on with an interrupted run (ValueError saying why not)."""
        return await self.engine.resume(graph_run_id)

    def knows(self, graph_run_id: str) -> bool:
        """Whether ``graph_run_id`` is a run of this process."""
        return graph_run_id in self.engine.runs

    def cancel(self, graph_run_id: str) -> bool:
        """Cancel a running graph run as a whole."""
        return self.engine.cancel(graph_run_id)

    async def recover(self) -> list[str]:
        """Announce graph runs a crash interrupted (at start)."""
        return await self.engine.recover()

    async def close(self) -> None:
        """Stop the running graph runs."""
        await self.engine.close()
