"""What the editor shows of a project's events, as they are persisted.

Each app's :class:`~remora_lsp.editor.LspEditor` hands every event to the
views :func:`event_views` builds for it:

- the ``remora/event`` stream: every event as a notification carrying its
  JSON (with its ``seq``); clients filter by ``type``. When an agent starts
  or ends a turn or a proposal changes, code lenses are refreshed with
  ``workspace/codeLens/refresh`` if the client supports it, at most a few
  times a second;
- each agent run as work-done progress (when the client supports it): begin
  "Remora: <node name>" (cancellable), reports while it thinks, calls tools,
  proposes and waits for an answer, end with its outcome;
- each graph run as one work-done progress, "Remora: <name>" with "k/N"
  reports, cancellable;
- pending proposals as diagnostics, republished when one changes
  (``features/proposals.py``).

Views run on the engine's bus and return at once.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from remora_core.front.runs import END_EVENTS

from remora_lsp.diagnostics import follow_proposals
from remora_lsp.progress import LspProgress, supports_progress

if TYPE_CHECKING:
    from pathlib import Path

    from remora_core.events.store import StoredEvent

    from remora_lsp.editor import EventView
    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)

EVENT_NOTIFICATION = "remora/event"
STATUS_EVENTS = frozenset(
    {
        "agent_started",
        "agent_completed",
        "agent_failed",
        "agent_cancelled",
        "agent_blocked",
        "agent_resumed",
        "run_interrupted",
        "rewrite_proposed",
        "rewrite_applied",
        "rewrite_rejected",
        "rewrite_stale",
        "proposal_checked",
    }
)
"""Events that change what a code lens shows (status, pending proposals)."""
LENS_REFRESH_DELAY_S = 0.2


def event_views(ls: RemoraLanguageServer, root: Path | None) -> list[EventView]:
    """The views of the project at ``root`` (see the module doc)."""
    return [
        lambda stored: stream(ls, stored),
        RunProgress(ls, root).on_event,
        GraphProgress(ls).on_event,
        follow_proposals(ls, root),
    ]


def stream(ls: RemoraLanguageServer, stored: StoredEvent) -> None:
    """Send the event to the editor; refresh lenses if it changes them."""
    ls.protocol.notify(EVENT_NOTIFICATION, stored.to_json())
    if stored.event.type in STATUS_EVENTS:
        _refresh_lenses_soon(ls)


def _refresh_lenses_soon(ls: RemoraLanguageServer) -> None:
    workspace = ls.client_capabilities.workspace
    lens = workspace.code_lens if workspace else None
    if not (lens and lens.refresh_support) or ls.lens_refresh_pending:
        return
    ls.lens_refresh_pending = True

    def refresh() -> None:
        ls.lens_refresh_pending = False
        ls.run_task(_refresh(ls), name="code lens refresh")

    asyncio.get_running_loop().call_later(LENS_REFRESH_DELAY_S, refresh)


async def _refresh(ls: RemoraLanguageServer) -> None:
    try:
        await ls.workspace_code_lens_refresh_async(None)
    except Exception as error:  # the editor said no: nothing else to do
        log.info("code lens refresh refused: %s", error)


class RunProgress:
    """Work-done progress of every run of one project."""

    def __init__(self, ls: RemoraLanguageServer, root: Path | None) -> None:
        self.ls = ls
        self.root = root
        self.by_run: dict[str, LspProgress] = {}

    def on_event(self, stored: StoredEvent) -> None:
        """Begin, report or end the progress of the run ``stored`` belongs to."""
        event = stored.event
        run_id = event.run_id
        if run_id is None:
            return
        if event.type == "agent_started":
            if supports_progress(self.ls):
                self._begin(run_id, event.agent_id or "")
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

    def _begin(self, run_id: str, agent_id: str) -> None:
        app = self.ls.projects.app_at(self.root)
        node = app.nodes.get(agent_id) if app is not None else None
        name = node.qualified_name if node else agent_id
        progress = self.by_run[run_id] = LspProgress(self.ls)
        self.ls.progress_runs[progress.token] = run_id
        progress.begin(f"Remora: {name}", "starting", cancellable=True)


class GraphProgress:
    """One work-done progress per graph run of one project."""

    def __init__(self, ls: RemoraLanguageServer) -> None:
        self.ls = ls
        self.by_run: dict[str, tuple[LspProgress, str, int, int]] = {}
        """Graph run id → (its progress, its name, steps done, steps in all)."""

    def on_event(self, stored: StoredEvent) -> None:
        """Begin, report or end the progress of a graph run."""
        kind = stored.event.type
        if not kind.startswith("graph_"):
            return
        fields = stored.event.__dict__
        graph_run_id = fields["graph_run_id"]
        if kind == "graph_started":
            if not supports_progress(self.ls):
                return
            progress = LspProgress(self.ls)
            self.ls.progress_runs[progress.token] = graph_run_id
            progress.begin(f"Remora: {fields['name']}", "starting", cancellable=True)
            # The event says what the run will do: its N needs nothing else.
            total = sum(len(nodes) for nodes in fields["targets"].values())
            self.by_run[graph_run_id] = (progress, fields["name"], 0, total)
            return
        entry = self.by_run.get(graph_run_id)
        if entry is None:
            return
        progress, name, done, total = entry
        if kind == "graph_step_finished":
            self.by_run[graph_run_id] = (progress, name, done + 1, total)
            progress.report(f"{name} {done + 1}/{total}", force=True)
        elif kind == "graph_completed":
            self.by_run.pop(graph_run_id, None)
            self.ls.progress_runs.pop(progress.token, None)
            progress.end(str(fields["outcome"]))
