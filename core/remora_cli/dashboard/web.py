"""The dashboard's web app: the page, one endpoint for commands, the events.

- ``GET /`` — the page (``static/index.html`` with the token in a ``<meta>``
  for the page's script to send back in ``X-Remora-Token``).
- ``GET /static/…`` — the page's scripts and styles, and the vendored graph
  library; everything is served from the wheel, nothing from the network.
- ``POST /api/call`` ``{"command": "remora.…", "arguments": {…}}`` — a command
  of the table through the project's :class:`~.link.Link`, exactly as ``remora`` runs it
  (an accept goes through the editor that owns the project). Only the
  commands the page needs (:data:`ALLOWED`) are let through.
- ``GET /api/events`` — server-sent events, one per project event, its
  ``seq`` as the SSE id: a reconnecting ``EventSource`` sends
  ``Last-Event-ID`` and the stream resumes after it (``?since=`` does the
  same for a new connection). While the editor's server is gone it answers
  503 (so does ``/api/call``, kind ``gone``): the page asks again after the
  last seq it has until the server is back (:mod:`.link`).

:mod:`.guard` wraps it all (token, Host, headers).
"""

from __future__ import annotations

import html
import json
import logging
from importlib import resources
from typing import TYPE_CHECKING, Any

from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from remora_cli.control.backend import BackendError, ServerGone
from remora_cli.dashboard.guard import Guard
from remora_cli.dashboard.link import GONE

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from starlette.requests import Request

    from remora_cli.dashboard.link import Link

log = logging.getLogger(__name__)

STATIC = resources.files("remora_cli.dashboard") / "static"
ALLOWED = frozenset(
    {
        "remora.nodes.graph",
        "remora.node.get",
        "remora.agent.history",
        "remora.runs.list",
        "remora.events.list",
        "remora.events.last_seq",
        "remora.proposals.list",
        "remora.graph.runs",
        "remora.graph.status",
        "remora.usage",
        # What a person decides from the page.
        "remora.proposal.accept",
        "remora.proposal.reject",
        "remora.agent.chat",
        "remora.agent.cancel",
        "remora.graph.cancel",
        "remora.subscriptions.add",
        "remora.subscriptions.remove",
        "remora.node.mute",
        "remora.node.unmute",
    }
)
"""The commands the page may call (it never forgets, restores or trusts):
exactly those its scripts send (``tests/docs/test_clients_table.py``), the
Dashboard column of ``docs/reference/clients.md``."""
RETRY_MS = 1000
STATUS = {"invalid": 400, "ambiguous": 400, "not_found": 404, "not_owner": 409}


def build(link: Link, token: str, port: int) -> Guard:
    """The guarded ASGI app of the dashboard on ``port``."""
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    page = page.replace("{{token}}", html.escape(token, quote=True)).replace(
        "{{project}}", html.escape(link.root.name)
    )

    async def index(request: Request) -> HTMLResponse:
        return HTMLResponse(page)

    async def call(request: Request) -> JSONResponse:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "the body is not JSON")
        if not isinstance(body, dict):
            return _error(400, "the body is not a JSON object")
        command, arguments = body.get("command"), body.get("arguments") or {}
        if command not in ALLOWED:
            return _error(403, f"the dashboard does not call {command!r}")
        try:
            return JSONResponse({"result": await link.call(command, arguments)})
        except ServerGone as problem:  # until the editor's server is back
            return _error(503, str(problem), "gone")
        except BackendError as problem:
            return _error(STATUS.get(problem.kind, 500), str(problem), problem.kind)

    async def events(request: Request) -> Response:
        since = _since(request)
        try:
            if since is None:
                since = (await link.call("remora.events.last_seq", {}))["seq"]
            elif not await link.serving():
                raise ServerGone(GONE)
        except ServerGone as problem:
            # Not a stream: the page's EventSource stops, and the page asks
            # again after the last seq it has until the server is back.
            return _error(503, str(problem), "gone")
        except BackendError as problem:
            return _error(503, str(problem), problem.kind)
        return EventSourceResponse(_stream(link, since), ping=15)

    routes = [
        Route("/", index),
        Route("/api/call", call, methods=["POST"]),
        Route("/api/events", events),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    return Guard(Starlette(routes=routes), token, port)


def _since(request: Request) -> int | None:
    """Where the stream resumes: after Last-Event-ID, or ``?since=``."""
    resumed = request.headers.get("last-event-id")
    for raw in (resumed, request.query_params.get("since")):
        if raw is not None and raw.strip().isdigit():
            return int(raw)
    return None


async def _stream(link: Link, since: int) -> AsyncIterator[dict[str, Any]]:
    # The browser's own reconnection, after a drop, in a second.
    yield {"retry": RETRY_MS, "comment": "events after " + str(since)}
    try:
        async for event in link.follow(since):
            yield {"id": str(event["seq"]), "data": json.dumps(event)}
    except ServerGone:
        # The owning server stopped (its editor closed): the stream ends; the
        # page says so and resumes after its last seq once a server is back.
        log.info("%s", GONE)
    except BackendError as problem:
        log.warning("the event stream ended: %s", problem)


def _error(status: int, message: str, kind: str = "invalid") -> JSONResponse:
    return JSONResponse({"error": {"message": message, "kind": kind}}, status)
