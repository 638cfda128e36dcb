"""The ``runs`` facade: a person's requests to agents, cancelling, answering.

``chat`` and ``run`` answer at once with the ``run_id`` the run will have;
progress and outcome follow as events (``history``). A project whose store
another server owns refuses to run agents (:class:`NotOwner`, naming it).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from remora_core.events.models import HumanChat
from remora_core.front.errors import NotOwner
from remora_core.swarm.run_list import RunStatus as ShownRunStatus
from remora_core.swarm.run_list import list_runs

if TYPE_CHECKING:
    from remora_core.front.nodes import Nodes
    from remora_core.project import Project

log = logging.getLogger(__name__)

DEFAULT_INSTRUCTION = (
    "Review yourself: if something is clearly wrong or missing, propose a fix "
    "with rewrite_self; otherwise say in one sentence that you are fine."
)
END_EVENTS = {
    "agent_completed": "done",
    "agent_failed": "failed",
    "agent_cancelled": "cancelled",
    "run_interrupted": "interrupted",
}
"""Event types that end a run → the outcome they mean."""


def ensure_owner(project: Project, what: str) -> None:
    """Refuse ``what`` (e.g. "run agents") when another server owns the store."""
    owner = project.store_owner
    if owner is None:
        return
    raise NotOwner(
        f"Remora cannot {what} here: another Remora server ({owner.describe()}) "
        f"owns this project's store, and agents run and proposals are decided in "
        "its editor. This server serves the project read-only and takes over "
        "when that server stops."
    )


class Runs:
    """Agent runs of one project."""

    def __init__(self, project: Project, nodes: Nodes) -> None:
        self._project = project
        self._nodes = nodes

    async def chat(self, node_ref: Any, message: str) -> str:
        """Send a person's message to a node's agent; the run id it will have."""
        project = self._project
        node = self._nodes.find(node_ref, active=True)
        ensure_owner(project, "run agents")
        request = HumanChat(to_agent=node.id, message=message)
        run_id = project.swarm.runner.reserve(request.id)
        await project.swarm.emit(request)
        return run_id

    async def run(self, node_ref: Any, instruction: str = "") -> str:
        """Run a node's agent on ``instruction`` (a self-review when empty)."""
        return await self.chat(node_ref, instruction.strip() or DEFAULT_INSTRUCTION)

    def cancel(self, run_id: str) -> bool:
        """Cancel a run in flight; whether there was one to cancel."""
        return self._project.swarm.runner.cancel_run(run_id)

    def is_running(self, run_id: str) -> bool:
        """Whether ``run_id`` is in flight (or reserved) here."""
        return self._project.swarm.runner.is_running(run_id)

    def respond(self, question_id: str, answer: str) -> bool:
        """Answer an agent's pending question; False if none is waiting."""
        return self._project.agents.services.questions.respond(question_id, answer)

    async def forget(self, node_ref: Any) -> bool:
        """Clear an agent's chat history, key-value memory and overlay."""
        node = self._nodes.find(node_ref, active=True)
        ensure_owner(self._project, "clear an agent's memory")
        await self._project.agents.forget(node.id)
        return True

    async def list(
        self,
        *,
        status: ShownRunStatus | None = None,
        node_id: str | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """Queued runs, then recorded ones newest first (``swarm/run_list.py``)."""
        return await list_runs(
            self._project.swarm, status=status, node_id=node_id, limit=limit
        )
