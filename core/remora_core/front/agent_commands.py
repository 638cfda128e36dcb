"""Commands that run agents and show what they did: chat, run, cancel,
answer, forget; a node's conversation; the list of runs.

``chat`` and ``run`` answer at once with the ``run_id`` the run will have;
progress and outcome follow as events (and, in an editor, as progress).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, StrictStr

from remora_core.front import answers
from remora_core.front.arguments import NodeArgs, RunIdField, Text, limit_field
from remora_core.front.table import Arguments, Door, Route, command
from remora_core.history.conversation import MAX_ENTRIES
from remora_core.swarm.run_list import MAX_RUNS, RunStatus

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp


class ChatArgs(NodeArgs):
    """A node and a person's message to its agent."""

    message: Text


class RunArgs(NodeArgs):
    """A node and an optional instruction (empty: a self-review)."""

    instruction: StrictStr = ""


class CancelArgs(Arguments):
    """A run."""

    run_id: RunIdField


class RespondArgs(Arguments):
    """An agent's question and the person's answer."""

    question_id: Text
    answer: Text


class HistoryArgs(NodeArgs):
    """A node and how many conversation entries (the latest)."""

    limit: int = limit_field(200, MAX_ENTRIES)


class RunsArgs(Arguments):
    """Which runs: of a status, of a node."""

    status: RunStatus | None = None
    node_id: str | None = Field(default=None, description="a node reference")
    limit: int = limit_field(100, MAX_RUNS)


@command("remora.agent.chat", ChatArgs, answers.RunId, Route.NODE)
async def agent_chat(app: RemoraApp, a: ChatArgs, door: Door) -> Any:
    """Send a person's message to the node's agent."""
    return {"run_id": await app.runs.chat(a.node_id, a.message)}


@command("remora.agent.run", RunArgs, answers.RunId, Route.NODE)
async def agent_run(app: RemoraApp, a: RunArgs, door: Door) -> Any:
    """Run the node's agent on an instruction (a self-review when empty)."""
    return {"run_id": await app.runs.run(a.node_id, a.instruction)}


@command("remora.agent.cancel", CancelArgs, answers.Cancelled, Route.RUN)
async def agent_cancel(app: RemoraApp, a: CancelArgs, door: Door) -> Any:
    """Cancel a run in flight (and its model request)."""
    return {"cancelled": app.runs.cancel(a.run_id)}


@command("remora.agent.respond", RespondArgs, answers.Ok, Route.QUESTION)
async def agent_respond(app: RemoraApp, a: RespondArgs, door: Door) -> Any:
    """Answer an agent's question that is still waiting."""
    return {"ok": app.runs.respond(a.question_id, a.answer)}


@command("remora.agent.retry", CancelArgs, answers.RunId, Route.RUN)
async def agent_retry(app: RemoraApp, a: CancelArgs, door: Door) -> Any:
    """Run again a run a restart interrupted: the same trigger, the same
    message; the new run's id.
    """
    return {"run_id": await app.runs.retry(a.run_id)}


@command("remora.agent.forget", NodeArgs, answers.Ok, Route.NODE)
async def agent_forget(app: RemoraApp, a: NodeArgs, door: Door) -> Any:
    """Clear the agent's chat history, key-value memory and overlay (a
    person's standing instructions stay: ``remora.node.instructions.set``).
    """
    return {"ok": await app.runs.forget(a.node_id)}


@command(
    "remora.agent.history", HistoryArgs, list[answers.ConversationEntry], Route.NODE
)
async def agent_history(app: RemoraApp, a: HistoryArgs, door: Door) -> Any:
    """The node's conversation, oldest first, texts never cut: the person's
    messages, the agent's answers, questions and answers, messages to and
    from other agents, proposals and their outcomes.
    """
    node = app.nodes.find(a.node_id)
    return await app.history.conversation(node.id, a.limit)


@command("remora.runs.list", RunsArgs, list[answers.RunRow], Route.EVERY)
async def runs_list(app: RemoraApp, a: RunsArgs, door: Door) -> Any:
    """Queued runs, then runs newest first: trigger, status and outcome."""
    node_id = app.nodes.find(a.node_id).id if a.node_id is not None else None
    return await app.runs.list(status=a.status, node_id=node_id, limit=a.limit)


AGENT_COMMANDS = [
    agent_chat,
    agent_run,
    agent_cancel,
    agent_respond,
    agent_retry,
    agent_forget,
    agent_history,
    runs_list,
]
