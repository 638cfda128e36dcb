"""The ``runs`` facade: a person's requests to agents, cancelling, answering.

``chat`` and ``run`` answer at once with the ``run_id`` the run will have;
progress and outcome follow as events (``history``). A project whose store
another server owns refuses to run agents (:class:`NotOwner`, naming it).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from remora_core.agents.resuming import CannotRetry, UnknownRun, retry, withdraw
from remora_core.events.models import HumanChat
from remora_core.front.errors import InvalidArguments, NotFound
from remora_core.model import AgentStatus
from remora_core.store.runs import RUN_ENDS
from remora_core.swarm.run_list import STORED_STATUS, list_runs
from remora_core.swarm.run_list import RunStatus as ShownRunStatus

if TYPE_CHECKING:
    from remora_core.front.nodes import Nodes
    from remora_core.front.startup import Startup

log = logging.getLogger(__name__)

DEFAULT_INSTRUCTION = (
    "Review yourself: if something is clearly wrong or missing, propose a fix "
    "with rewrite_self; otherwise say in one sentence that you are fine."
)
END_EVENTS: dict[str, ShownRunStatus] = {
    kind: STORED_STATUS[stored] for kind, stored in RUN_ENDS.items()
}
"""Event types that end a run → the status a person reads (``done``, …)."""


class Runs:
    """Agent runs of one project."""

    def __init__(self, startup: Startup, nodes: Nodes) -> None:
        self._startup = startup
        self._nodes = nodes

    async def chat(self, node_ref: Any, message: str) -> str:
        """Send a person's message to a node's agent; the run id it will have."""
        parts = await self._startup.parts()
        node = self._nodes.find(node_ref, active=True)
        self._startup.ensure_owner("run agents")
        request = HumanChat(to_agent=node.id, message=message)
        run_id = parts.swarm.runner.reserve(request.id)
        await parts.swarm.emit(request)
        return run_id

    async def run(self, node_ref: Any, instruction: str = "") -> str:
        """Run a node's agent on ``instruction`` (a self-review when empty)."""
        return await self.chat(node_ref, instruction.strip() or DEFAULT_INSTRUCTION)

    def cancel(self, run_id: str) -> bool:
        """Cancel a run in flight, or one waiting again on a question asked
        before a restart (the question is withdrawn); whether there was one.
        """
        parts = self._startup.now()
        if parts is None:
            return False
        kept = parts.agents.services.questions.drop_kept(run_id)
        for question in kept:
            parts.swarm.set_agent_status(question.agent_id, AgentStatus.IDLE)
            parts.index.tasks.spawn(
                withdraw(parts.swarm, question), name="withdraw a question"
            )
        return parts.swarm.runner.cancel_run(run_id) or bool(kept)

    def is_running(self, run_id: str) -> bool:
        """Whether ``run_id`` is in flight (or reserved) here."""
        parts = self._startup.now()
        return parts is not None and parts.swarm.runner.is_running(run_id)

    def asks(self, question_id: str) -> bool:
        """Whether an agent here waits for the answer to ``question_id``."""
        parts = self._startup.now()
        return parts is not None and parts.agents.services.questions.waiting(
            question_id
        )

    def respond(self, question_id: str, answer: str) -> bool:
        """Answer an agent's pending question; False if none is waiting."""
        parts = self._startup.now()
        questions = parts.agents.services.questions if parts is not None else None
        return questions is not None and questions.respond(question_id, answer)

    async def forget(self, node_ref: Any) -> bool:
        """Clear an agent's chat history, key-value memory and overlay."""
        parts = await self._startup.parts()
        node = self._nodes.find(node_ref, active=True)
        self._startup.ensure_owner("clear an agent's memory")
        await parts.agents.forget(node.id)
        return True

    async def list(
        self,
        *,
        status: ShownRunStatus | None = None,
        node_id: str | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """Queued runs, then recorded ones newest first (``swarm/run_list.py``)."""
        parts = await self._startup.parts()
        kept = {
            q.run_id: {
                "question_id": q.id,
                "question": q.question,
                "options": list(q.options),
            }
            for q in parts.agents.services.questions.kept.values()
        }
        return await list_runs(
            parts.swarm, status=status, node_id=node_id, limit=limit, kept=kept
        )

    async def retry(self, run_id: str) -> str:
        """Run a run a restart interrupted again (same trigger, same message);
        the new run's id. Its unanswered question, if any, is withdrawn.
        """
        parts = await self._startup.parts()
        self._startup.ensure_owner("run agents")
        try:
            new_run = await retry(parts.swarm, run_id)
        except UnknownRun as problem:
            raise NotFound(str(problem)) from None
        except CannotRetry as problem:
            raise InvalidArguments(str(problem)) from None
        for question in parts.agents.services.questions.drop_kept(run_id):
            await withdraw(parts.swarm, question)  # the retry asks anew
        return new_run
