"""The editor's view of events: the ``remora/event`` stream and node history.

- Every persisted event of every project is sent as a ``remora/event``
  notification carrying the event's JSON (with its ``seq``); clients filter by
  ``type``. The stream is a bus consumer, so a slow editor never slows agents.
- When an agent starts or ends a turn, code lenses (which show its status) are
  refreshed with ``workspace/codeLens/refresh`` if the client supports it, at
  most a few times a second.
- ``remora.node.events {node_id, limit?}`` returns a node's latest events,
  newest first.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from remora_lsp.arguments import NodeEventsArguments, parse
from remora_lsp.features.commands import find_node

if TYPE_CHECKING:
    from remora_core.events.store import StoredEvent
    from remora_core.project import Project

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


def forward_events(ls: RemoraLanguageServer, project: Project) -> None:
    """Send ``project``'s events to the editor (call before it starts)."""

    def send(stored: StoredEvent) -> None:
        ls.protocol.notify(EVENT_NOTIFICATION, stored.to_json())
        if stored.event.type in STATUS_EVENTS:
            _refresh_lenses_soon(ls)

    project.event_listeners.append(send)


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


def register(server: RemoraLanguageServer) -> None:
    """Register ``remora.node.events``.

    Command handlers leave ``ls`` unannotated (see ``commands.py``).
    """

    @server.command("remora.node.events")
    async def node_events(ls, *args: Any) -> list[dict[str, Any]]:
        arguments = parse(NodeEventsArguments, args, "remora.node.events")
        await ls.projects.all_loaded()
        project, node = find_node(ls, arguments.node_id)
        found = await ls.app(project).history.query(
            node_id=node.id, limit=arguments.limit
        )
        return [stored.to_json() for stored in reversed(found)]
