"""Seeing the swarm: a node's whole conversation and the list of runs.

- ``remora.agent.history {node_id, limit?}`` → the node's conversation, oldest
  first, texts uncut (``remora_core.history``): ``[{role: person|agent|node,
  kind, from?, to?, text, run_id, timestamp, seq, …}]``.
- ``remora.runs.list {status?, node_id?, limit?}`` → runs, queued first, then
  newest first: ``[{id, node: {id, name, file_path, line}, status: queued |
  running | waiting | done | failed | cancelled | interrupted, trigger: {kind,
  text, …}, started_at, ended_at, outcome}]`` (``remora_core.swarm.run_list``).

Handlers only check arguments and call one engine function.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams
from remora_core.history import MAX_ENTRIES, conversation
from remora_core.identity import is_node_id
from remora_core.swarm.run_list import MAX_RUNS, RunStatus, list_runs

from remora_lsp.arguments import single_object
from remora_lsp.features.commands import find_node

if TYPE_CHECKING:
    from remora_lsp.server import RemoraLanguageServer


def _limit(arguments: dict[str, Any], default: int, most: int) -> int:
    limit = arguments.get("limit", default)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= most:
        raise JsonRpcInvalidParams(
            f"limit must be a whole number from 1 to {most}, got {limit!r}"
        )
    return limit


def _status(value: Any) -> RunStatus | None:
    if value is None:
        return None
    try:
        return RunStatus(value)
    except ValueError:
        known = ", ".join(s.value for s in RunStatus)
        raise JsonRpcInvalidParams(
            f"status must be one of {known}, got {value!r}"
        ) from None


def register(server: RemoraLanguageServer) -> None:
    """Register ``remora.agent.history`` and ``remora.runs.list``.

    Command handlers leave ``ls`` unannotated (see ``commands.py``).
    """

    @server.command("remora.agent.history")
    async def agent_history(ls, *args: Any) -> list[dict[str, Any]]:
        arguments = single_object(args, "remora.agent.history")
        limit = _limit(arguments, 200, MAX_ENTRIES)
        await ls.projects.all_loaded()
        project, node = find_node(ls, arguments.get("node_id"))
        return await conversation(project.swarm, node.id, limit)

    @server.command("remora.runs.list")
    async def runs_list(ls, *args: Any) -> list[dict[str, Any]]:
        arguments = single_object(args, "remora.runs.list")
        status = _status(arguments.get("status"))
        limit = _limit(arguments, 100, MAX_RUNS)
        node_id = arguments.get("node_id")
        if node_id is not None and not is_node_id(node_id):
            find_node(ls, node_id)  # says what a node id looks like
        await ls.projects.all_loaded()
        found: list[dict[str, Any]] = []
        for project in ls.projects:
            if node_id is None or project.graph.get(node_id) is not None:
                found += await list_runs(
                    project.swarm, status=status, node_id=node_id, limit=limit
                )
        return found[:limit]
