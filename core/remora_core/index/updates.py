"""Applying one file's new parse to the graph, and moving or deleting files.

These functions are synchronous and touch only the in-memory graph: they run on
the event loop between two awaits, so a file is always replaced as a whole.
Each returns a :class:`FileUpdate` saying what changed, which later drives
``content_changed`` / ``topology_changed`` events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeGuard

from remora_core.index.identity import IdAssignment, assign_ids, new_id
from remora_core.model import (
    AgentStatus,
    CodeNode,
    NodeKind,
    NodeStatus,
    Span,
    build_node,
)

if TYPE_CHECKING:
    from remora_core.discovery import FileExtraction
    from remora_core.index.codegraph import CodeGraph
    from remora_core.model import Definition


@dataclass
class FileUpdate:
    """What one re-parse changed in one file."""

    path: str
    file_id: str
    created: list[str] = field(default_factory=list)
    """Ids new to the file (fresh or revived)."""
    orphaned: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    """Ids whose source text changed."""
    ids: list[str] = field(default_factory=list)
    """The id of each definition of the parse, in order."""

    @property
    def topology_changed(self) -> bool:
        """Whether nodes appeared or disappeared."""
        return bool(self.created or self.orphaned)


def _file_node(graph: CodeGraph, path: str, extraction: FileExtraction) -> CodeNode:
    existing = graph.file_node(path)
    if existing is not None:
        file_id = existing.id
    else:
        wanted = extraction.file_inline_id
        holder = graph.get(wanted) if wanted else None
        if wanted and (holder is None or holder.status is NodeStatus.ORPHANED):
            file_id = wanted
        else:
            file_id = new_id(graph.known)
    prior = graph.get(file_id)
    return CodeNode(
        id=file_id,
        kind=NodeKind.FILE,
        name=path.rsplit("/", 1)[-1],
        qualified_name=path,
        file_path=path,
        span=extraction.span or Span(0, 0, 0, 0, 0, 0, True),
        name_span=Span(0, 0, 0, 0, 0, 0, True),
        parent_id=None,
        source_hash=extraction.content_hash,
        agent_status=prior.agent_status if prior else AgentStatus.IDLE,
    )


def apply_extraction(
    graph: CodeGraph, path: str, extraction: FileExtraction
) -> FileUpdate:
    """Replace the nodes of ``path`` with those of ``extraction``."""
    file_node = _file_node(graph, path, extraction)
    previous = {n.id: n for n in graph.file_nodes(path, orphans=True)}
    same = _same_shape(graph.file_nodes(path), extraction.definitions)
    if same is not None:  # typing inside bodies: the common, cheap case
        assignment = IdAssignment(ids=same)
    else:
        assignment = assign_ids(
            extraction.definitions,
            previous.values(),
            taken=graph.known,
            foreign_active=lambda i: (
                (n := graph.get(i)) is not None
                and n.status is NodeStatus.ACTIVE
                and n.file_path != path
            ),
        )
    update = FileUpdate(path=path, file_id=file_node.id, ids=assignment.ids)
    # Every id just minted (a file seen for the first time): no node before.
    minted = len(assignment.created) == len(assignment.ids)
    nodes: list[CodeNode] = []
    for definition, node_id in zip(extraction.definitions, assignment.ids, strict=True):
        before = None if minted else previous.get(node_id) or graph.get(node_id)
        parent = definition.parent
        parent_id = assignment.ids[parent] if parent >= 0 else file_node.id
        if _unchanged(before, definition, parent_id):
            nodes.append(before)
            continue
        node = build_node(
            node_id,
            definition.kind,
            definition.name,
            definition.qualified_name,
            path,
            definition.span,
            definition.name_span,
            parent_id,
            definition.source_hash,
            NodeStatus.ACTIVE,
            before.agent_status if before else AgentStatus.IDLE,
        )
        if before is None or before.status is NodeStatus.ORPHANED:
            update.created.append(node_id)
        elif before.source_hash != definition.source_hash:
            update.modified.append(node_id)
        nodes.append(node)
    claimed = set(assignment.ids)
    for node_id, old in previous.items():
        if node_id in claimed:
            continue
        if old.status is NodeStatus.ACTIVE:
            update.orphaned.append(node_id)
        nodes.append(old.with_changes(status=NodeStatus.ORPHANED))
    graph.put_file(file_node, nodes)
    return update


def _same_shape(
    active: list[CodeNode], definitions: list[Definition]
) -> list[str] | None:
    """The active ids, if the parse has exactly their (qualified name, kind) in
    order and no inline id says otherwise; None when ids must be matched.
    """
    if len(active) != len(definitions):
        return None
    for node, definition in zip(active, definitions, strict=True):
        if (
            node.qualified_name != definition.qualified_name
            or node.kind is not definition.kind
            or definition.inline_id not in (None, node.id)
        ):
            return None
    return [node.id for node in active]


def _unchanged(
    before: CodeNode | None, definition: Definition, parent_id: str
) -> TypeGuard[CodeNode]:
    """Whether ``before`` already is the node ``definition`` describes."""
    return (
        before is not None
        and before.status is NodeStatus.ACTIVE
        and before.span == definition.span
        and before.name_span == definition.name_span
        and before.source_hash == definition.source_hash
        and before.parent_id == parent_id
        and before.qualified_name == definition.qualified_name
        and before.kind is definition.kind
    )


def orphan_file(graph: CodeGraph, path: str) -> FileUpdate | None:
    """Mark every node of a deleted file orphaned (they are kept)."""
    file_node = graph.file_node(path)
    if file_node is None:
        return None
    update = FileUpdate(path=path, file_id=file_node.id)
    nodes = []
    for node in graph.file_nodes(path, orphans=True):
        if node.status is NodeStatus.ACTIVE:
            update.orphaned.append(node.id)
        nodes.append(node.with_changes(status=NodeStatus.ORPHANED))
    graph.put_file(file_node.with_changes(status=NodeStatus.ORPHANED), nodes)
    graph.set_file_edges(path, [])
    return update


def move_file(graph: CodeGraph, old: str, new: str) -> bool:
    """Give a renamed file's nodes their new path; ids stay. False if unknown."""
    file_node = graph.file_node(old)
    if file_node is None:
        return False
    nodes = [n.with_changes(file_path=new) for n in graph.file_nodes(old, orphans=True)]
    graph.move_file(old, new)
    graph.put_file(
        file_node.with_changes(
            file_path=new,
            name=new.rsplit("/", 1)[-1],
            qualified_name=new,
            status=NodeStatus.ACTIVE,
        ),
        nodes,
    )
    return True
