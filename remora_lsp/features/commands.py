"""Read-only node commands: ``remora.node.get`` and ``remora.node.at``.

Both take one JSON object argument (DESIGN §11) and return a node card (or
null). Code lenses run ``remora.node.get``. A card carries the node's latest
events, its agent's last answer and the conversation's latest entries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from remora_core.index.identity import is_node_id
from remora_core.model import NodeStatus

from remora_lsp.arguments import (
    NodeArguments,
    NodeAtArguments,
    parse,
)
from remora_lsp.projects import loaded

if TYPE_CHECKING:
    from remora_core.model import CodeNode
    from remora_core.project import Project

    from remora_lsp.server import RemoraLanguageServer

RECENT_EVENTS = 10


def ensure_owner(project: Project, what: str) -> None:
    """Refuse ``what`` (e.g. "run agents") with a JSON-RPC ``RequestFailed``
    error naming the owner, when another server owns ``project``'s store.
    """
    owner = project.store_owner
    if owner is None:
        return
    raise JsonRpcException(
        f"Remora cannot {what} here: another Remora server ({owner.describe()}) "
        f"owns this project's store, and agents run and proposals are decided in "
        "its editor. This server serves the project read-only and takes over "
        "when that server stops.",
        code=types.LSPErrorCodes.RequestFailed,
    )


def find_node(
    ls: RemoraLanguageServer, node_id: Any, *, active: bool = False
) -> tuple[Project, CodeNode]:
    """The project and node of ``node_id`` (``active``: not orphaned);
    InvalidParams with a readable message otherwise.
    """
    if not is_node_id(node_id):
        raise JsonRpcInvalidParams(
            "node_id must look like rm_ followed by 8 letters or digits, "
            f"got {node_id!r}"
        )
    for project in ls.projects:
        node = project.graph.get(node_id)
        if node is None:
            continue
        if active and node.status is not NodeStatus.ACTIVE:
            raise JsonRpcInvalidParams(
                f"node {node_id} ({node.qualified_name}) no longer exists in the code"
            )
        return project, node
    raise JsonRpcInvalidParams(f"no node with id {node_id} in any open project")


async def _node_card(ls: RemoraLanguageServer, node_id: Any) -> dict[str, Any]:
    project, node = find_node(ls, node_id)
    card = await ls.app(project).nodes.card(node, RECENT_EVENTS)
    card["uri"] = ls.projects.uri(project, node.file_path)
    return card


def register(server: RemoraLanguageServer) -> None:
    """Register the node commands.

    Command handlers leave ``ls`` unannotated: pygls evaluates their type hints
    at call time, when the server class (imported for type checking only) is
    not resolvable from this module.
    """

    @server.command("remora.node.get")
    async def node_get(ls, *args: Any) -> dict[str, Any]:
        arguments = parse(NodeArguments, args, "remora.node.get")
        await ls.projects.all_loaded()
        return await _node_card(ls, arguments.node_id)

    @server.command("remora.node.at")
    async def node_at(ls, *args: Any) -> dict[str, Any] | None:
        arguments = parse(NodeAtArguments, args, "remora.node.at")
        project, path = ls.projects.known(arguments.uri)
        await loaded(project)
        line, character = arguments.position
        node = project.node_at(path, line, character, ls.encoding)
        return await _node_card(ls, node.id) if node is not None else None
