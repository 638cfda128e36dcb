"""Node cards: what a person (or a client panel) is shown about one node.

The same JSON-able dict feeds ``textDocument/hover`` (rendered as Markdown by the
LSP adapter) and the ``remora.node.get`` / ``remora.node.at`` commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from remora_core.index.codegraph import CodeGraph
    from remora_core.model import CodeNode


def node_ref(node: CodeNode) -> dict[str, Any]:
    """A short reference to a node: id, kind, name and where it is."""
    return {
        "id": node.id,
        "kind": node.kind.value,
        "name": node.name,
        "qualified_name": node.qualified_name,
        "file_path": node.file_path,
        "line": node.span.start_line,
    }


def node_card(graph: CodeGraph, node: CodeNode) -> dict[str, Any]:
    """Everything the editor shows about ``node``."""
    parent = graph.get(node.parent_id) if node.parent_id else None
    return {
        **node_ref(node),
        "status": node.status.value,
        "agent_status": node.agent_status.value,
        "start_line": node.span.start_line,
        "end_line": node.span.end_line,
        "parent": node_ref(parent) if parent else None,
        "children": [node_ref(child) for child in graph.children(node.id)],
        "callers": [node_ref(n) for n in graph.callers(node.id)],
        "callees": [node_ref(n) for n in graph.callees(node.id)],
        "pending_proposals": 0,
    }
