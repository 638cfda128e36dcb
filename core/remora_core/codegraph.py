"""The in-memory graph of a project's nodes and edges.

The graph is the source of truth for every query the editor makes (outline,
hover, symbol search, node at a position); the store is its persistent copy.
It is only mutated on the event loop, one whole file at a time.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator

from remora_core.model import (
    AgentStatus,
    CodeNode,
    Edge,
    EdgeKind,
    NodeKind,
    NodeStatus,
)


class CodeGraph:
    """Nodes by id and by file, children, and ``calls``/``imports`` edges."""

    def __init__(self) -> None:
        self.nodes: dict[str, CodeNode] = {}
        self.file_ids: dict[str, str] = {}
        """File path → id of its file node (also for deleted files)."""
        self._by_file: dict[str, list[str]] = {}
        """File path → ids of its definitions in document order (orphans last)."""
        self._edges_by_file: dict[str, list[Edge]] = {}
        self._names: dict[str, dict[tuple[str, str], list[str]]] = {}
        """File path → (parent id, name) → child ids; built lazily per file."""
        self._out: dict[str, dict[EdgeKind, set[str]]] = {}
        self._in: dict[str, dict[EdgeKind, set[str]]] = {}

    # ---- reading -------------------------------------------------------------

    def get(self, node_id: str) -> CodeNode | None:
        """The node with ``node_id``, active or orphaned."""
        return self.nodes.get(node_id)

    def file_node(self, path: str) -> CodeNode | None:
        """The node of the file at ``path``."""
        file_id = self.file_ids.get(path)
        return self.nodes.get(file_id) if file_id else None

    def file_nodes(self, path: str, *, orphans: bool = False) -> list[CodeNode]:
        """Definitions of ``path`` in document order (file node excluded)."""
        nodes = (self.nodes[i] for i in self._by_file.get(path, ()))
        if orphans:
            return list(nodes)
        return [n for n in nodes if n.status is NodeStatus.ACTIVE]

    def paths(self) -> list[str]:
        """Every file path the graph knows, including deleted ones."""
        return list(self.file_ids)

    def active(self) -> Iterator[CodeNode]:
        """Every active node, file nodes included."""
        return (n for n in self.nodes.values() if n.status is NodeStatus.ACTIVE)

    def children(self, node_id: str) -> list[CodeNode]:
        """Active nodes whose parent is ``node_id``, in document order."""
        node = self.nodes.get(node_id)
        if node is None:
            return []
        return [n for n in self.file_nodes(node.file_path) if n.parent_id == node_id]

    def children_named(self, node_id: str, name: str) -> list[CodeNode]:
        """Active children of ``node_id`` called ``name`` (indexed per file)."""
        node = self.nodes.get(node_id)
        if node is None:
            return []
        names = self._names.get(node.file_path)
        if names is None:
            names = defaultdict(list)
            for child in self.file_nodes(node.file_path):
                if child.parent_id:
                    names[(child.parent_id, child.name)].append(child.id)
            self._names[node.file_path] = names
        return [self.nodes[i] for i in names.get((node_id, name), ())]

    def targets(self, node_id: str, kind: EdgeKind) -> set[str]:
        """Ids ``node_id`` points to with edges of ``kind``."""
        return self._out.get(node_id, {}).get(kind, set())

    def sources(self, node_id: str, kind: EdgeKind) -> set[str]:
        """Ids pointing to ``node_id`` with edges of ``kind``."""
        return self._in.get(node_id, {}).get(kind, set())

    def callers(self, node_id: str) -> list[CodeNode]:
        """Active nodes that call ``node_id``, sorted by qualified name."""
        return self._resolve(self.sources(node_id, EdgeKind.CALLS))

    def callees(self, node_id: str) -> list[CodeNode]:
        """Active nodes ``node_id`` calls, sorted by qualified name."""
        return self._resolve(self.targets(node_id, EdgeKind.CALLS))

    def _resolve(self, ids: Iterable[str]) -> list[CodeNode]:
        found = [self.nodes[i] for i in ids if i in self.nodes]
        found = [n for n in found if n.status is NodeStatus.ACTIVE]
        return sorted(found, key=lambda n: (n.file_path, n.span.start_byte))

    def node_at(self, path: str, offset: int) -> CodeNode | None:
        """The innermost active definition of ``path`` containing ``offset``."""
        best: CodeNode | None = None
        for node in self.file_nodes(path):
            if node.span.contains(offset) and (
                best is None or node.span.start_byte >= best.span.start_byte
            ):
                best = node
        return best

    def importers(self, path: str) -> list[str]:
        """Paths of files that import ``path``."""
        file_id = self.file_ids.get(path)
        if file_id is None:
            return []
        found = []
        for source in self.sources(file_id, EdgeKind.IMPORTS):
            node = self.nodes.get(source)
            if node is not None and node.kind is NodeKind.FILE:
                found.append(node.file_path)
        return found

    # ---- writing -------------------------------------------------------------

    def put_file(self, file_node: CodeNode, definitions: list[CodeNode]) -> None:
        """Record the current nodes of one file (orphans included)."""
        self.nodes[file_node.id] = file_node
        self.file_ids[file_node.file_path] = file_node.id
        for node in definitions:
            before = self.nodes.get(node.id)
            if before is not None and before.file_path != node.file_path:
                # A node claimed by another file (its inline id moved with it)
                # no longer belongs to the file it came from.
                self._drop_from_file(before.file_path, node.id)
            self.nodes[node.id] = node
        ordered = sorted(
            definitions,
            key=lambda n: (n.status is not NodeStatus.ACTIVE, n.span.start_byte),
        )
        self._by_file[file_node.file_path] = [n.id for n in ordered]
        self._names.pop(file_node.file_path, None)

    def _drop_from_file(self, path: str, node_id: str) -> None:
        ids = self._by_file.get(path)
        if ids is not None and node_id in ids:
            ids.remove(node_id)
            self._names.pop(path, None)

    def set_agent_status(self, node_id: str, status: AgentStatus) -> None:
        """Record what a node's agent is doing."""
        node = self.nodes.get(node_id)
        if node is not None:
            self.nodes[node_id] = node.with_changes(agent_status=status)

    def move_file(self, old: str, new: str) -> None:
        """Re-key a renamed file; callers then ``put_file`` its new nodes."""
        if old in self.file_ids:
            self.file_ids[new] = self.file_ids.pop(old)
        if old in self._by_file:
            self._by_file[new] = self._by_file.pop(old)
        if old in self._edges_by_file:
            self._edges_by_file[new] = self._edges_by_file.pop(old)
        self._names.pop(old, None)

    def set_file_edges(self, path: str, edges: list[Edge]) -> None:
        """Replace the ``calls``/``imports`` edges produced by parsing ``path``."""
        for edge in self._edges_by_file.get(path, ()):
            self._out.get(edge.from_id, {}).get(edge.kind, set()).discard(edge.to_id)
            self._in.get(edge.to_id, {}).get(edge.kind, set()).discard(edge.from_id)
        self._edges_by_file[path] = edges
        for edge in edges:
            self._link(edge)

    def file_edges(self, path: str) -> list[Edge]:
        """The edges produced by parsing ``path``."""
        return self._edges_by_file.get(path, [])

    def _link(self, edge: Edge) -> None:
        out = self._out.setdefault(edge.from_id, defaultdict(set))
        out[edge.kind].add(edge.to_id)
        into = self._in.setdefault(edge.to_id, defaultdict(set))
        into[edge.kind].add(edge.from_id)

    def load(self, nodes: Iterable[CodeNode], edges: Iterable[Edge]) -> None:
        """Fill an empty graph from the store."""
        per_file: dict[str, list[CodeNode]] = defaultdict(list)
        files: dict[str, CodeNode] = {}
        for node in nodes:
            if node.kind is NodeKind.FILE:
                files[node.file_path] = node
            else:
                per_file[node.file_path].append(node)
        for path, file_node in files.items():
            self.put_file(file_node, per_file.get(path, []))
        by_id = self.nodes
        for edge in edges:
            source = by_id.get(edge.from_id)
            if source is not None:
                self._edges_by_file.setdefault(source.file_path, []).append(edge)
                self._link(edge)

    def replace_file(
        self,
        file_node: CodeNode,
        definitions: list[CodeNode],
        edges: list[Edge],
    ) -> None:
        """Make a file hold exactly these nodes and edges, dropping nodes of it
        that are not among them (a follower adopting what the owner stored; the
        same file under another path is the owner's rename of it).
        """
        path = file_node.file_path
        for other, file_id in list(self.file_ids.items()):
            if file_id == file_node.id and other != path:
                self._drop_file(other)
        keep = {file_node.id, *(node.id for node in definitions)}
        for node_id in [*self._by_file.get(path, ()), self.file_ids.get(path)]:
            node = self.nodes.get(node_id) if node_id else None
            if node is not None and node.id not in keep and node.file_path == path:
                del self.nodes[node.id]
        self.set_file_edges(path, edges)
        self.put_file(file_node, definitions)

    def _drop_file(self, path: str) -> None:
        """Forget a file and its nodes entirely."""
        for node_id in [*self._by_file.pop(path, ()), self.file_ids.pop(path, None)]:
            node = self.nodes.get(node_id) if node_id else None
            if node is not None and node.file_path == path:
                del self.nodes[node.id]
        self.set_file_edges(path, [])
        self._edges_by_file.pop(path, None)
        self._names.pop(path, None)

    def parent_edges(self, path: str) -> list[Edge]:
        """``parent_of`` edges of one file (derived from ``parent_id``)."""
        return [
            Edge(node.parent_id, node.id, EdgeKind.PARENT_OF)
            for node in self.file_nodes(path, orphans=True)
            if node.parent_id
        ]
