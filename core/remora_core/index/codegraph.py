"""The in-memory graph of a project's nodes and edges.

The graph is the source of truth for every query the editor makes (outline,
hover, symbol search, node at a position); the store is its persistent copy.
It is only mutated on the event loop, one whole file at a time.

A warm start does not read the whole store first (``store/graph_loading.py``):
the graph is *attached* to it with every file's id, and a file's nodes and
edges are read from the store the first time anything asks for them — every
method below loads what it needs first, so callers never see a partial file.
Questions about the whole project (every node, who calls a node, which ids
exist) ask the store which files they concern, or load everything; the rest
of the store is loaded in the background once the project is indexed.
Memory is the truth for a file once loaded: only loaded files are ever
changed, so an unloaded file is exactly what the store holds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Protocol

from remora_core.index.search import search_nodes
from remora_core.index.symbol_index import SEPARATOR, SymbolIndex, active_nodes
from remora_core.index.symbol_snapshot import SymbolSnapshot
from remora_core.model import (
    AgentStatus,
    CodeNode,
    Edge,
    EdgeKind,
    NodeKind,
    NodeStatus,
)

log = logging.getLogger(__name__)


class GraphSource(Protocol):
    """The stored graph, read file by file (synchronous, cheap per call)."""

    def contents(
        self, paths: list[str]
    ) -> dict[str, tuple[list[CodeNode], list[Edge]]]:
        """Nodes (file nodes included) and ``calls``/``imports`` edges stored
        for each of ``paths``.
        """
        ...

    def file_of(self, node_id: str) -> str | None:
        """The path a node is stored under."""
        ...

    def exists(self, node_id: str) -> bool:
        """Whether a node with this id is stored."""
        ...

    def edge_files(self, to_id: str, kind: EdgeKind) -> set[str]:
        """Paths whose stored edges of ``kind`` point to ``to_id``."""
        ...

    def agent_status_files(self, status: AgentStatus) -> set[str]:
        """Paths holding stored nodes whose agent has ``status``."""
        ...

    def stored_active(self) -> int:
        """How many stored nodes are active."""
        ...

    def nodes(self, ids: list[str]) -> list[CodeNode]:
        """The stored nodes with these ids (those that are stored)."""
        ...

    def close(self) -> None:
        """Stop reading the store."""
        ...


class CodeGraph:
    """Nodes by id and by file, children, and ``calls``/``imports`` edges."""

    def __init__(self) -> None:
        self._nodes: dict[str, CodeNode] = {}
        """Loaded nodes by id (see :meth:`get` for any node)."""
        self.file_ids: dict[str, str] = {}
        """File path → id of its file node (also for deleted files)."""
        self._by_file: dict[str, list[str]] = {}
        """File path → ids of its definitions in document order (orphans last)."""
        self._edges_by_file: dict[str, list[Edge]] = {}
        self._names: dict[str, dict[tuple[str, str], list[str]]] = {}
        """File path → (parent id, name) → child ids; built lazily per file."""
        self._out: dict[str, dict[EdgeKind, set[str]]] = {}
        self._in: dict[str, dict[EdgeKind, set[str]]] = {}
        self._source: GraphSource | None = None
        """Where unloaded files are read from (None: everything is in memory)."""
        self._pending: set[str] = set()
        """Paths whose definitions and edges are still only in the store."""
        self._present: set[str] = set()
        """Paths not loaded yet whose file node is active (from their records)."""
        self._active_loaded = 0
        """Active nodes read from the store so far (for counting the rest)."""
        self._completed: asyncio.Event | None = None
        """Set once nothing is pending (made by the first :meth:`wait_complete`)."""
        self.last_use = 0.0
        """When (``time.monotonic``) a person last searched or a file was
        last changed: the background load waits for a pause."""
        self.hurried = asyncio.Event()
        """Set when someone waits for the whole graph (a symbol search on a
        warm start): the background load starts without its quiet delay.
        """
        self.symbols = SymbolIndex(self._nodes)
        """Names of the active nodes for :meth:`search`; every change below
        marks its file there.
        """
        self._peeked: dict[str, CodeNode] = {}
        """Nodes :meth:`peek` read from the store (a search's results and
        their parents come again as a person types); trusted only while
        their file is still only in the store."""
        self.snapshot: SymbolSnapshot | None = None
        """The stored name index (``symbol_snapshot.py``): while files are
        still only in the store, it answers for them and :attr:`symbols` for
        the loaded ones."""

    # ---- loading ---------------------------------------------------------------

    def attach(
        self, file_ids: dict[str, str], present: set[str], source: GraphSource
    ) -> None:
        """Start from the stored files' ids (path → id of its file node); their
        nodes and edges are read on first use.

        ``present``: the paths whose record says the file is indexed (its file
        node is active: records are written in the same transaction as their
        nodes).
        """
        self.file_ids.update(file_ids)
        self._pending.update(file_ids)
        self._present = present & self._pending
        self._source = source
        self.snapshot = None
        if self._pending and self._completed is not None and self._completed.is_set():
            self._completed = None  # complete no more: later waits wait again

    def use_snapshot(self, snapshot: SymbolSnapshot) -> None:
        """Answer symbol searches for the files still only in the store from
        ``snapshot`` (read after :meth:`attach`: the files loaded since are
        the live name index's).
        """
        snapshot.exclude(path for path in snapshot.paths if path not in self._pending)
        self.snapshot = snapshot

    def detach(self) -> None:
        """Stop reading the store (everything is loaded, or the project closed)."""
        source, self._source = self._source, None
        self._pending.clear()
        self._present.clear()
        self.snapshot = None
        self._peeked.clear()
        self._note_complete()
        if source is not None:
            source.close()

    @property
    def complete(self) -> bool:
        """Whether every stored file is loaded."""
        return not self._pending

    async def wait_complete(self) -> None:
        """Return once every stored file is loaded (:attr:`complete`): by the
        background load once the workspace is indexed (``graph_loading.py``),
        by a question about the whole project, or because the graph stopped
        reading the store (:meth:`detach`, which closing the project does).
        """
        if self.complete:
            return
        if self._completed is None:
            self._completed = asyncio.Event()
        await self._completed.wait()

    def _note_complete(self) -> None:
        if not self._pending and self._completed is not None:
            self._completed.set()

    def load_some(self, count: int) -> bool:
        """Load up to ``count`` unloaded files; whether any are left."""
        batch = [path for path, _ in zip(self._pending, range(count), strict=False)]
        self._load(batch)
        return bool(self._pending)

    def load_files(self, paths: list[str]) -> None:
        """Load these files now if they are still only in the store."""
        self._load([path for path in paths if path in self._pending])

    def load_all(self) -> None:
        """Load every file still only in the store."""
        self._load(list(self._pending))

    def _ensure(self, path: str) -> None:
        if path in self._pending:
            self._load([path])

    def _load(self, paths: list[str]) -> None:
        if not paths:
            return
        self._pending.difference_update(paths)
        self._present.difference_update(paths)
        if self.snapshot is not None:  # the live name index answers for them
            self.snapshot.exclude(paths)
        self._note_complete()
        if self._source is None:
            return
        nodes = self._nodes
        for path, (stored, edges) in self._source.contents(paths).items():
            self.symbols.touch(path)
            self._active_loaded += sum(
                1 for n in stored if n.status is NodeStatus.ACTIVE
            )
            files = [n for n in stored if n.kind is NodeKind.FILE]
            # The file's record names its file node; a file renamed onto this
            # path may have left another (the latest written wins, as when the
            # whole store was read at once).
            wanted = self.file_ids.get(path)
            file_node = next((n for n in files if n.id == wanted), None)
            if file_node is None and files:
                file_node = files[-1]
            if file_node is None:  # nothing stored can be trusted for it
                self.file_ids.pop(path, None)
                continue
            self.file_ids[path] = file_node.id
            nodes.setdefault(file_node.id, file_node)
            # A node already in memory moved to a loaded file: memory is newer.
            fresh = [
                n for n in stored if n.kind is not NodeKind.FILE and n.id not in nodes
            ]
            for node in fresh:
                nodes[node.id] = node
            self._by_file[path] = [n.id for n in _in_order(fresh)]
            kept = [e for e in edges if e.from_id in nodes]
            self._edges_by_file[path] = kept
            for edge in kept:
                self._link(edge)

    # ---- reading -------------------------------------------------------------

    def get(self, node_id: str) -> CodeNode | None:
        """The node with ``node_id``, active or orphaned."""
        node = self._nodes.get(node_id)
        if node is None and self._pending and self._source is not None:
            path = self._source.file_of(node_id)
            if path is not None and path in self._pending:
                self._load([path])
                node = self._nodes.get(node_id)
        return node

    def known(self, node_id: str) -> bool:
        """Whether ``node_id`` is taken (in memory or in the store)."""
        if node_id in self._nodes:
            return True
        return bool(self._pending) and (
            self._source is not None and self._source.exists(node_id)
        )

    def file_node(self, path: str) -> CodeNode | None:
        """The node of the file at ``path``."""
        self._ensure(path)
        file_id = self.file_ids.get(path)
        return self._nodes.get(file_id) if file_id else None

    def file_nodes(self, path: str, *, orphans: bool = False) -> list[CodeNode]:
        """Definitions of ``path`` in document order (file node excluded)."""
        self._ensure(path)
        # ``map`` over the dict's lookup, a third faster than a generator:
        # asked for every file several times while indexing (applying,
        # resolving, writing; 459k nodes read at 1.7 M lines).
        nodes = map(self._nodes.__getitem__, self._by_file.get(path, ()))
        if orphans:
            return list(nodes)
        return [n for n in nodes if n.status is NodeStatus.ACTIVE]

    def has_active_file(self, path: str) -> bool:
        """Whether ``path``'s file node is active, without loading the file (a
        file not loaded yet is as its record says).
        """
        if path in self._pending:
            return path in self._present
        node = self.file_node(path)
        return node is not None and node.status is NodeStatus.ACTIVE

    def paths(self) -> list[str]:
        """Every file path the graph knows, including deleted ones."""
        return list(self.file_ids)

    def active(self) -> Iterator[CodeNode]:
        """Every active node, file nodes included."""
        self.load_all()
        return (n for n in self._nodes.values() if n.status is NodeStatus.ACTIVE)

    def search(self, query: str, limit: int) -> list[CodeNode]:
        """The ``limit`` active nodes best matching ``query``, ranked as
        :func:`~remora_core.index.search.search_nodes` ranks them, from the
        name index (``symbol_index.py``) instead of looking at every node;
        while files are still only in the store, from the stored name index
        for those (:attr:`snapshot`) and the live one for the others.
        """
        self.last_use = time.monotonic()
        wanted = query.strip().lower()
        if not wanted or SEPARATOR in wanted:
            return search_nodes(self.active(), query, limit)
        if self.snapshot is not None and self._pending:
            try:
                return self._search_split(self.snapshot, wanted, limit)
            except (IndexError, ValueError, OverflowError) as error:
                log.warning("the stored names are damaged (%r): not used", error)
                self.snapshot = None
        self.load_all()
        self.catch_up_symbols()
        return self.symbols.search(wanted, limit)

    @property
    def searchable(self) -> bool:
        """Whether :meth:`search` answers without loading the whole graph."""
        return self.complete or self.snapshot is not None

    def _search_split(
        self, snapshot: SymbolSnapshot, wanted: str, limit: int
    ) -> list[CodeNode]:
        self.catch_up_symbols()  # the loaded files
        nodes = self._nodes
        live = self.symbols.ranked(wanted, limit)
        stored = snapshot.search(wanted, limit, nodes.__contains__)
        best = sorted(live + stored)[:limit]
        found = self.peek([hit[4] for hit in best])
        return [found[hit[4]] for hit in best if hit[4] in found]

    def peek(self, ids: list[str]) -> dict[str, CodeNode]:
        """The nodes with these ids that exist, without loading their files:
        those in memory, and the others as the store holds them (a file not
        loaded is exactly what the store holds).
        """
        found = {i: node for i in ids if (node := self._nodes.get(i)) is not None}
        if not self._pending or self._source is None:
            return found
        pending, peeked = self._pending, self._peeked
        rest = []
        for node_id in ids:
            if node_id not in found:
                node = peeked.get(node_id)
                if node is not None and node.file_path in pending:
                    found[node_id] = node
                else:
                    rest.append(node_id)
        for node in self._source.nodes(rest) if rest else ():
            if node.file_path in pending:
                found[node.id] = peeked[node.id] = node
        return found

    def catch_up_symbols(self, count: int | None = None) -> bool:
        """Bring up to ``count`` changed files (all: None) up to date in the
        name index; whether any are left.
        """
        self.symbols.catch_up(self._searchable, count)
        return bool(self.symbols.behind)

    def _searchable(self, path: str) -> list[CodeNode]:
        file_id = self.file_ids.get(path)
        file_node = self._nodes.get(file_id) if file_id else None
        if file_node is not None and file_node.file_path != path:
            file_node = None
        return active_nodes(file_node, self.file_nodes(path))

    def active_count(self) -> int:
        """How many nodes are active, file nodes included (loads nothing)."""
        loaded = sum(1 for n in self._nodes.values() if n.status is NodeStatus.ACTIVE)
        if self._pending and self._source is not None:
            loaded += self._source.stored_active() - self._active_loaded
        return loaded

    def all_nodes(self) -> Iterator[CodeNode]:
        """Every node, active or orphaned."""
        self.load_all()
        return iter(self._nodes.values())

    def with_agent_status(self, status: AgentStatus) -> list[CodeNode]:
        """Every node whose agent has ``status``."""
        if self._pending and self._source is not None:
            wanted = self._source.agent_status_files(status) & self._pending
            self._load(sorted(wanted))
        return [n for n in self._nodes.values() if n.agent_status is status]

    def children(self, node_id: str) -> list[CodeNode]:
        """Active nodes whose parent is ``node_id``, in document order."""
        node = self.get(node_id)
        if node is None:
            return []
        return [n for n in self.file_nodes(node.file_path) if n.parent_id == node_id]

    def children_named(self, node_id: str, name: str) -> list[CodeNode]:
        """Active children of ``node_id`` called ``name`` (indexed per file)."""
        node = self.get(node_id)
        if node is None:
            return []
        names = self._names.get(node.file_path)
        if names is None:
            names = defaultdict(list)
            for child in self.file_nodes(node.file_path):
                if child.parent_id:
                    names[(child.parent_id, child.name)].append(child.id)
            self._names[node.file_path] = names
        return [self._nodes[i] for i in names.get((node_id, name), ())]

    def targets(self, node_id: str, kind: EdgeKind) -> set[str]:
        """Ids ``node_id`` points to with edges of ``kind``."""
        if self._pending and (node := self.get(node_id)) is not None:
            self._ensure(node.file_path)  # its file holds its edges
        return self._out.get(node_id, {}).get(kind, set())

    def sources(self, node_id: str, kind: EdgeKind) -> set[str]:
        """Ids pointing to ``node_id`` with edges of ``kind``."""
        if self._pending and self._source is not None:
            wanted = self._source.edge_files(node_id, kind) & self._pending
            self._load(sorted(wanted))
        return self._in.get(node_id, {}).get(kind, set())

    def callers(self, node_id: str) -> list[CodeNode]:
        """Active nodes that call ``node_id``, sorted by qualified name."""
        return self._resolve(self.sources(node_id, EdgeKind.CALLS))

    def callees(self, node_id: str) -> list[CodeNode]:
        """Active nodes ``node_id`` calls, sorted by qualified name."""
        return self._resolve(self.targets(node_id, EdgeKind.CALLS))

    def _resolve(self, ids: Iterable[str]) -> list[CodeNode]:
        found = [n for i in list(ids) if (n := self.get(i)) is not None]
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
            node = self._nodes.get(source)
            if node is not None and node.kind is NodeKind.FILE:
                found.append(node.file_path)
        return found

    # ---- writing -------------------------------------------------------------

    def put_file(self, file_node: CodeNode, definitions: list[CodeNode]) -> None:
        """Record the current nodes of one file (orphans included)."""
        path = file_node.file_path
        self.last_use = time.monotonic()
        self._ensure(path)
        self._nodes[file_node.id] = file_node
        self.file_ids[path] = file_node.id
        for node in definitions:
            before = self._nodes.get(node.id)
            if before is not None and before.file_path != node.file_path:
                # A node claimed by another file (its inline id moved with it)
                # no longer belongs to the file it came from.
                self._drop_from_file(before.file_path, node.id)
            self._nodes[node.id] = node
        self._by_file[path] = [n.id for n in _in_order(definitions)]
        self._names.pop(path, None)
        self.symbols.touch(path)

    def _drop_from_file(self, path: str, node_id: str) -> None:
        ids = self._by_file.get(path)
        if ids is not None and node_id in ids:
            ids.remove(node_id)
            self._names.pop(path, None)
            self.symbols.touch(path)

    def set_agent_status(self, node_id: str, status: AgentStatus) -> None:
        """Record what a node's agent is doing."""
        node = self.get(node_id)
        if node is not None:
            self._nodes[node_id] = node.with_changes(agent_status=status)

    def move_file(self, old: str, new: str) -> None:
        """Re-key a renamed file; callers then ``put_file`` its new nodes."""
        self._ensure(old)
        self._ensure(new)
        if old in self.file_ids:
            self.file_ids[new] = self.file_ids.pop(old)
        if old in self._by_file:
            self._by_file[new] = self._by_file.pop(old)
        if old in self._edges_by_file:
            self._edges_by_file[new] = self._edges_by_file.pop(old)
        self._names.pop(old, None)
        self.symbols.touch(old)
        self.symbols.touch(new)

    def set_file_edges(self, path: str, edges: list[Edge]) -> None:
        """Replace the ``calls``/``imports`` edges produced by parsing ``path``."""
        self._ensure(path)
        for edge in self._edges_by_file.get(path, ()):
            self._out.get(edge.from_id, {}).get(edge.kind, set()).discard(edge.to_id)
            self._in.get(edge.to_id, {}).get(edge.kind, set()).discard(edge.from_id)
        self._edges_by_file[path] = edges
        for edge in edges:
            self._link(edge)

    def file_edges(self, path: str) -> list[Edge]:
        """The edges produced by parsing ``path``."""
        self._ensure(path)
        return self._edges_by_file.get(path, [])

    def _link(self, edge: Edge) -> None:
        # ``get`` first: ``setdefault`` would build a defaultdict per edge.
        out = self._out.get(edge.from_id)
        if out is None:
            out = self._out[edge.from_id] = defaultdict(set)
        out[edge.kind].add(edge.to_id)
        into = self._in.get(edge.to_id)
        if into is None:
            into = self._in[edge.to_id] = defaultdict(set)
        into[edge.kind].add(edge.from_id)

    def load(self, nodes: Iterable[CodeNode], edges: Iterable[Edge]) -> None:
        """Fill an empty graph from the store, all at once."""
        per_file: dict[str, list[CodeNode]] = defaultdict(list)
        files: dict[str, CodeNode] = {}
        for node in nodes:
            if node.kind is NodeKind.FILE:
                files[node.file_path] = node
            else:
                per_file[node.file_path].append(node)
        for path, file_node in files.items():
            self.put_file(file_node, per_file.get(path, []))
        by_id = self._nodes
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
        self._ensure(path)
        keep = {file_node.id, *(node.id for node in definitions)}
        for node_id in [*self._by_file.get(path, ()), self.file_ids.get(path)]:
            node = self._nodes.get(node_id) if node_id else None
            if node is not None and node.id not in keep and node.file_path == path:
                del self._nodes[node.id]
        self.symbols.touch(path)
        self.set_file_edges(path, edges)
        self.put_file(file_node, definitions)

    def _drop_file(self, path: str) -> None:
        """Forget a file and its nodes entirely."""
        self._ensure(path)
        for node_id in [*self._by_file.pop(path, ()), self.file_ids.pop(path, None)]:
            node = self._nodes.get(node_id) if node_id else None
            if node is not None and node.file_path == path:
                del self._nodes[node.id]
        self.set_file_edges(path, [])
        self._edges_by_file.pop(path, None)
        self._names.pop(path, None)
        self.symbols.touch(path)

    def parent_edges(self, path: str) -> list[Edge]:
        """``parent_of`` edges of one file (derived from ``parent_id``)."""
        return [
            Edge(node.parent_id, node.id, EdgeKind.PARENT_OF)
            for node in self.file_nodes(path, orphans=True)
            if node.parent_id
        ]


def _in_order(definitions: Iterable[CodeNode]) -> list[CodeNode]:
    """Active definitions in document order, then orphans."""
    return sorted(
        definitions,
        key=lambda n: (n.status is not NodeStatus.ACTIVE, n.span.start_byte),
    )
