"""Seeing the swarm: a node's whole conversation and the list of runs.

- ``remora.agent.history {node_id, limit?}`` → the node's conversation, oldest
  first, texts uncut (``remora_core.history.conversation``): ``[{role:
  person|agent|node, kind, from?, to?, text, run_id, timestamp, seq, …}]``.
- ``remora.runs.list {status?, node_id?, limit?}`` → runs, queued first, then
  newest first: ``[{id, node: {id, name, file_path, line}, status: queued |
  running | waiting | done | failed | cancelled | interrupted, trigger: {kind,
  text, …}, started_at, ended_at, outcome}]`` (``remora_core.swarm.run_list``).

Handlers only check arguments and call one engine function.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remora_lsp.arguments import HistoryArguments, RunsArguments, parse
from remora_lsp.features.commands import find_node

if TYPE_CHECKING:
    from remora_lsp.server import RemoraLanguageServer


def register(server: RemoraLanguageServer) -> None:
    """Register ``remora.agent.history`` and ``remora.runs.list``.

    Command handlers leave ``ls`` unannotated (see ``commands.py``).
    """

    @server.command("remora.agent.history")
    async def agent_history(ls, *args: Any) -> list[dict[str, Any]]:
        arguments = parse(HistoryArguments, args, "remora.agent.history")
        await ls.projects.all_loaded()
        project, node = find_node(ls, arguments.node_id)
        return await ls.app(project).history.conversation(node.id, arguments.limit)

    @server.command("remora.runs.list")
    async def runs_list(ls, *args: Any) -> list[dict[str, Any]]:
        arguments = parse(RunsArguments, args, "remora.runs.list")
        status, limit, node_id = arguments.status, arguments.limit, arguments.node_id
        await ls.projects.all_loaded()
        found: list[dict[str, Any]] = []
        for project in ls.projects:
            if node_id is None or project.graph.get(node_id) is not None:
                found += await ls.app(project).runs.list(
                    status=status, node_id=node_id, limit=limit
                )
        return found[:limit]
