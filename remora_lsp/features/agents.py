"""Running agents from the editor: chat, run, cancel, answer, forget; progress.

Commands (one JSON object argument each, DESIGN §11):

- ``remora.agent.chat {node_id, message}`` and ``remora.agent.run {node_id,
  instruction?}`` send the node's agent a person's request and answer at once
  with the ``run_id`` the run will have; progress and outcome follow as
  ``$/progress`` and ``remora/event``.
- ``remora.agent.cancel {run_id}`` → ``{cancelled}``; so does
  ``window/workDoneProgress/cancel`` on the run's progress.
- ``remora.agent.respond {question_id, answer}`` → ``{ok}`` answers an
  ``ask_user`` question that is still pending.
- ``remora.agent.forget {node_id}`` → ``{ok}`` (an addition): clears the agent's
  chat history, key-value memory and overlay.

Each run gets a work-done progress token (when the client supports it):
begin "Remora: <node name>" (cancellable), reports while it thinks, calls tools
and proposes, end with its outcome. ``ask_user`` questions are shown with
``window/showMessageRequest`` when they have options, else with the custom
request ``remora/askUser {question_id, question}`` → ``{answer}``; a client that
cannot answer leaves the question pending for ``remora.agent.respond``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from remora_core.front.runs import DEFAULT_INSTRUCTION, END_EVENTS

from remora_lsp.arguments import (
    CancelArguments,
    ChatArguments,
    NodeArguments,
    RespondArguments,
    RunArguments,
    parse,
)
from remora_lsp.editor import present
from remora_lsp.features.commands import ensure_owner, find_node
from remora_lsp.features.graphs import cancel_from_progress
from remora_lsp.progress import LspProgress, supports_progress

if TYPE_CHECKING:
    from remora_core.events.store import StoredEvent
    from remora_core.project import Project

    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)


async def start_run(
    ls: RemoraLanguageServer, node_id: Any, message: str
) -> dict[str, str]:
    """Send a person's request to a node's agent; the run id it will have."""
    await ls.projects.all_loaded()
    project, node = find_node(ls, node_id, active=True)
    ensure_owner(project, "run agents")
    return {"run_id": await ls.app(project).runs.chat(node.id, message)}


def _owner(ls: RemoraLanguageServer, run_id: str) -> Project | None:
    for project in ls.projects:
        if ls.app(project).runs.is_running(run_id):
            return project
    return None


# ---- progress of runs ---------------------------------------------------------------


class RunProgress:
    """Work-done progress of every run of one project."""

    def __init__(self, ls: RemoraLanguageServer, project: Project) -> None:
        self.ls = ls
        self.project = project
        self.by_run: dict[str, LspProgress] = {}

    def on_event(self, stored: StoredEvent) -> None:
        """Begin, report or end the progress of the run ``stored`` belongs to."""
        event = stored.event
        run_id = event.run_id
        if run_id is None:
            return
        if event.type == "agent_started":
            node = self.project.graph.get(event.agent_id or "")
            name = node.qualified_name if node else event.agent_id
            progress = self.by_run[run_id] = LspProgress(self.ls)
            self.ls.progress_runs[progress.token] = run_id
            progress.begin(f"Remora: {name}", "starting", cancellable=True)
            return
        progress = self.by_run.get(run_id)
        if progress is None:
            return
        if event.type in END_EVENTS:
            self.by_run.pop(run_id, None)
            self.ls.progress_runs.pop(progress.token, None)
            progress.end(END_EVENTS[event.type])
        elif event.type == "model_request":
            progress.report("thinking…", force=True)
        elif event.type == "tool_called":
            progress.report(f"calling {event.__dict__['tool']}", force=True)
        elif event.type == "rewrite_proposed":
            progress.report("proposing a change", force=True)
        elif event.type == "agent_blocked":
            progress.report("waiting for your answer", force=True)


def follow_runs(ls: RemoraLanguageServer, project: Project) -> None:
    """Show ``project``'s runs as progress and its questions in the editor."""
    if supports_progress(ls):
        project.event_listeners.append(RunProgress(ls, project).on_event)


def install_presenter(ls: RemoraLanguageServer, project: Project) -> None:
    """Route ``project``'s ``ask_user`` questions to the editor."""
    project.question_presenter = lambda question: present(ls, question)


# ---- commands ------------------------------------------------------------------------


def register(server: RemoraLanguageServer) -> None:
    """Register the agent commands and the progress cancel handler.

    Command handlers leave ``ls`` unannotated (see ``commands.py``).
    """

    @server.command("remora.agent.chat")
    async def agent_chat(ls, *args: Any) -> dict[str, str]:
        arguments = parse(ChatArguments, args, "remora.agent.chat")
        return await start_run(ls, arguments.node_id, arguments.message)

    @server.command("remora.agent.run")
    async def agent_run(ls, *args: Any) -> dict[str, str]:
        arguments = parse(RunArguments, args, "remora.agent.run")
        message = arguments.instruction.strip() or DEFAULT_INSTRUCTION
        return await start_run(ls, arguments.node_id, message)

    @server.command("remora.agent.cancel")
    async def agent_cancel(ls, *args: Any) -> dict[str, bool]:
        run_id = parse(CancelArguments, args, "remora.agent.cancel").run_id
        project = _owner(ls, run_id)
        cancelled = project is not None and ls.app(project).runs.cancel(run_id)
        return {"cancelled": cancelled}

    @server.command("remora.agent.respond")
    async def agent_respond(ls, *args: Any) -> dict[str, bool]:
        arguments = parse(RespondArguments, args, "remora.agent.respond")
        for project in ls.projects:
            app = ls.app(project)
            if app.started and app.runs.respond(
                arguments.question_id, arguments.answer
            ):
                return {"ok": True}
        return {"ok": False}

    @server.command("remora.agent.forget")
    async def agent_forget(ls, *args: Any) -> dict[str, bool]:
        arguments = parse(NodeArguments, args, "remora.agent.forget")
        project, node = find_node(ls, arguments.node_id, active=True)
        ensure_owner(project, "clear an agent's memory")
        if not ls.app(project).started:
            return {"ok": False}
        return {"ok": await ls.app(project).runs.forget(node.id)}

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(
        ls: RemoraLanguageServer, params: types.WorkDoneProgressCancelParams
    ) -> None:
        run_id = ls.progress_runs.get(str(params.token))
        if run_id is None:
            return
        if run_id.startswith("gr_"):  # a graph run's progress
            cancel_from_progress(ls, run_id)
            return
        project = _owner(ls, run_id)
        if project is not None:
            ls.app(project).runs.cancel(run_id)
