"""``remora mcp``: the project's nodes for other agents, over MCP on stdio.

Built on the official ``mcp`` SDK (``MCPServer``, 2.x). Tools:

- ``search_nodes(query, limit)`` — nodes whose name, qualified name, path or
  id match (``remora.nodes.search``);
- ``node_card(node)`` — the node card (``remora.node.get``): kind, place,
  parent, callers, callees, agent status, pending proposals, recent events;
- ``node_history(node, limit)`` — the node's conversation, oldest first
  (``remora.agent.history``): who asked what, what its agent answered or
  proposed, messages with other nodes' agents, texts uncut;
- ``ask_node(node, message, wait_s)`` — a request to the node's agent; waits
  up to ``wait_s`` (at most :data:`MAX_WAIT_S`) and returns the answer and
  every proposal the run made, with its diff. A proposal stays pending for a
  person to accept or reject in the editor or with ``remora accept``;
- ``list_proposals(status, path)`` and ``proposal_diff(proposal)``;
- ``usage(since)``: what agents' runs cost.

Resource ``remora://node/{node_id}``: the node's card and its current source
(``remora.node.source``: none, with ``source_withheld`` saying why, for a file
matching ``secrets.exclude`` — a host is a model too — as the answering
backend resolved it: the editor's server with the editor's settings, else
this process with the person's settings file and the repository's — or for a
file that cannot be read safely, outside the project or a link to a secret).

Nothing here writes a file or accepts a proposal: only the read commands and
``remora.agent.chat`` are ever called (:data:`ALLOWED`). Each call opens the
project's backend and closes it after (``core/remora_cli/control/backend.py``):
through the owning ``remora-lsp`` when one serves the project, so a proposal
made here shows up in the editor at once; otherwise in this process, holding
the store only for the length of the call, so an editor started later owns
the project. NODE is an id, a unique id prefix or ``path::qualified.name``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from remora_core.model import ProposalStatus, RunStatus
from remora_core.store.runs import RUN_ENDS

from remora_cli.control.backend import Backend, BackendError, open_backend

log = logging.getLogger(__name__)

MAX_WAIT_S = 600.0
"""The longest ``ask_node`` waits for a run (a host's own timeout is shorter)."""
ALLOWED = frozenset(
    {
        "remora.nodes.search",
        "remora.node.get",
        "remora.node.source",
        "remora.agent.history",
        "remora.agent.chat",
        "remora.agent.cancel",
        "remora.proposals.list",
        "remora.proposal.diff",
        "remora.events.last_seq",
        "remora.usage",
    }
)
"""Every command this server may send: reads, and asking an agent (cancel:
only a run this server started in its own process, past its wait)."""
INSTRUCTIONS = (
    "Remora makes every function, class, method and file of this Python project "
    "an agent. Find nodes with search_nodes, read them with node_card or the "
    "remora://node/{id} resource, and ask a node's agent with ask_node. A rewrite "
    "an agent makes is a pending proposal that a person reviews; you cannot "
    "accept it."
)


class Nodes:
    """The project seen through its backend, one backend per call."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @contextlib.asynccontextmanager
    async def backend(self) -> AsyncIterator[Backend]:
        """The owning server's engine, or the project opened for this call."""
        backend = await open_backend(self.root)
        log.info("mcp call via %s", backend.via)
        try:
            yield backend
        finally:
            await backend.close()

    async def call(self, command: str, arguments: dict[str, Any]) -> Any:
        """Run one read command; a :class:`ToolError` a model can act on."""
        async with self.backend() as backend:
            return await _call(backend, command, arguments)

    async def ask(self, node: str, message: str, wait_s: float) -> dict[str, Any]:
        """Ask ``node``'s agent; its answer and proposals (with diffs)."""
        wait_s = max(1.0, min(wait_s, MAX_WAIT_S))
        async with self.backend() as backend:
            since = (await _call(backend, "remora.events.last_seq", {}))["seq"]
            started = await _call(
                backend, "remora.agent.chat", {"node_id": node, "message": message}
            )
            run_id = started["run_id"]
            try:
                outcome = await asyncio.wait_for(
                    _follow(backend, since, run_id), wait_s
                )
            except TimeoutError:
                outcome = await _late(backend, run_id, wait_s)
            ids = outcome.pop("proposal_ids")
            outcome["proposals"] = [
                {
                    "proposal_id": pid,
                    **await _call(
                        backend, "remora.proposal.diff", {"proposal_id": pid}
                    ),
                }
                for pid in ids
            ]
            return outcome

    async def resource(self, node_id: str) -> str:
        """The node's card and source, as JSON text.

        The source comes from the project's backend, so the secrets and the
        safe reading of the server that answers apply: the editor's server
        with the person's editor settings, else this process with the
        person's settings file and the repository's.
        """
        async with self.backend() as backend:
            card = await _call(backend, "remora.node.get", {"node_id": node_id})
            read = await _call(backend, "remora.node.source", {"node_id": card["id"]})
        card["source"] = read["source"]
        card["source_withheld"] = read["withheld"]
        return json.dumps(card, indent=2)


async def _call(backend: Backend, command: str, arguments: dict[str, Any]) -> Any:
    if command not in ALLOWED:  # a guard against this module's own mistakes
        raise ToolError(f"{command} is not available over MCP")
    try:
        return await backend.call(command, arguments)
    except BackendError as problem:
        if problem.candidates:
            names = ", ".join(
                str(c.get("id", "")) + " " + str(c.get("qualified_name", ""))
                for c in problem.candidates[:10]
            )
            raise ToolError(f"{problem} (candidates: {names})") from problem
        raise ToolError(str(problem)) from problem


async def _late(backend: Backend, run_id: str, wait_s: float) -> dict[str, Any]:
    """What ``ask_node`` says about a run still going after ``wait_s``.

    Through a server the run goes on there. In this process it cannot outlive
    the call (the project closes after it), so it is cancelled, not orphaned.
    """
    outcome: dict[str, Any] = {"run_id": run_id, "answer": "", "proposal_ids": []}
    if backend.via == "server":
        note = f"still running after {wait_s:g} s; list_proposals shows what it makes"
        return {**outcome, "outcome": RunStatus.RUNNING, "note": note}
    await _call(backend, "remora.agent.cancel", {"run_id": run_id})
    note = f"cancelled after {wait_s:g} s: no editor serves this project"
    return {**outcome, "outcome": RunStatus.CANCELLED, "note": note}


async def _follow(backend: Backend, since: int, run_id: str) -> dict[str, Any]:
    proposal_ids: list[str] = []
    async for event in backend.follow(since):
        if event.get("run_id") != run_id:
            continue
        if event["type"] == "rewrite_proposed":
            proposal_ids.append(event["proposal_id"])
        if event["type"] in RUN_ENDS:
            return {
                "run_id": run_id,
                "outcome": RUN_ENDS[event["type"]],
                "answer": event.get("result") or "",
                "error": event.get("error"),
                "proposal_ids": proposal_ids,
            }
    raise ToolError("the project's event stream ended")


def build_server(root: Path) -> MCPServer:
    """The MCP server for the project at ``root``."""
    nodes = Nodes(root)
    server = MCPServer(name="remora", instructions=INSTRUCTIONS)

    @server.tool()
    async def search_nodes(query: str = "", limit: int = 20) -> list[dict[str, Any]]:
        """Find nodes (files, classes, functions, methods) by name, qualified
        name, path or id; an empty query lists every node.
        """
        return await nodes.call("remora.nodes.search", {"query": query, "limit": limit})

    @server.tool()
    async def node_card(node: str) -> dict[str, Any]:
        """A node's card: kind, place, parent, callers, callees, agent status,
        pending proposals and recent events. ``node``: an id, a unique id
        prefix or ``path::qualified.name``.
        """
        return await nodes.call("remora.node.get", {"node_id": node})

    @server.tool()
    async def node_history(node: str, limit: int = 50) -> list[dict[str, Any]]:
        """A node's conversation, oldest first: each entry has ``role``
        (person, agent, or node: another node's agent), ``kind`` (message,
        answer, proposal, question, accepted, rejected, …), the full ``text``,
        ``run_id`` and ``timestamp``; ``from``/``to`` for messages between
        agents, ``proposal_id`` for proposals.
        """
        return await nodes.call(
            "remora.agent.history", {"node_id": node, "limit": limit}
        )

    @server.tool()
    async def ask_node(
        node: str, message: str, wait_s: float = 120.0
    ) -> dict[str, Any]:
        """Ask a node's agent. Waits up to ``wait_s`` seconds for the answer;
        returns it with every proposal the run made and its diff. Proposals
        stay pending until a person accepts or rejects them.
        """
        return await nodes.ask(node, message, wait_s)

    @server.tool()
    async def list_proposals(
        status: str | None = ProposalStatus.PENDING, path: str | None = None
    ) -> list[dict[str, Any]]:
        """Proposals, newest first: ``status`` pending (default), accepted,
        rejected, stale, superseded, or null for all; ``path`` one file.
        """
        arguments = {"status": status, "path": path}
        return await nodes.call(
            "remora.proposals.list",
            {key: value for key, value in arguments.items() if value is not None},
        )

    @server.tool()
    async def proposal_diff(proposal: str) -> dict[str, Any]:
        """A proposal's unified diff, old and new source, and status."""
        return await nodes.call("remora.proposal.diff", {"proposal_id": proposal})

    @server.tool()
    async def usage(since: str | None = None) -> dict[str, Any]:
        """Tokens and wall time agents' runs used: in all, by node, graph run
        and day. ``since``: a date (2026-11-27), "today" or a span back
        (24h, 7d); null: ever.
        """
        arguments = {"since": since} if since is not None else {}
        return await nodes.call("remora.usage", arguments)

    @server.resource(
        "remora://node/{node_id}",
        name="node",
        description="A node's card and its current source",
        mime_type="application/json",
    )
    async def node_resource(node_id: str) -> str:
        return await nodes.resource(node_id)

    return server


async def serve(root: Path) -> None:
    """Serve MCP on stdin/stdout until the host hangs up."""
    await build_server(root).run_stdio_async()
