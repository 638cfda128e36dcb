"""The ``nodes`` facade: find nodes, their cards, search.

A node reference (``NODE`` on the command line, ``node_id`` in commands) is
one of:

- an id (``rm_a1b2c3d4``), active or orphaned;
- a unique id prefix (``rm_a1``): several matches are :class:`Ambiguous` with
  the candidates listed;
- ``path::qualified.name`` (``inventory/pricing.py::Pricing.total``), the path
  relative to the project root; ``path`` alone (or ``path::``) is the file.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from remora_core.agents.instructions import (
    InstructionsTooLong,
    instructions_of,
    set_instructions,
)
from remora_core.discovery.files import secret_glob
from remora_core.front.errors import Ambiguous, InvalidArguments, NotFound
from remora_core.history.conversation import conversation, last_answer
from remora_core.history.subscribed import node_subscriptions
from remora_core.index.cards import node_card, node_ref
from remora_core.index.identity import ID_PREFIX, is_node_id
from remora_core.model import NodeStatus

if TYPE_CHECKING:
    from remora_core.front.startup import Startup
    from remora_core.index.code_index import CodeIndex
    from remora_core.model import CodeNode
    from remora_core.text import PositionEncoding

log = logging.getLogger(__name__)

RECENT_EVENTS = 10
CONVERSATION = 6
"""The conversation's latest entries a card carries (the panel shows them)."""
MAX_CANDIDATES = 20


class Nodes:
    """Finding nodes of one project."""

    def __init__(self, index: CodeIndex, startup: Startup) -> None:
        self._index = index
        self._startup = startup

    def find(self, ref: Any, *, active: bool = False) -> CodeNode:
        """The node ``ref`` names (see the module doc); ``active``: not orphaned."""
        if not isinstance(ref, str) or not ref.strip():
            raise InvalidArguments(
                "a node is named by its id (rm_…), a unique id prefix or "
                f"path::qualified.name, got {ref!r}"
            )
        ref = ref.strip()
        if "::" in ref or ref.endswith(".py"):
            node = self._by_name(ref)
        elif is_node_id(ref):
            node = self._index.graph.get(ref)
            if node is None:
                raise NotFound(f"no node with id {ref} in this project")
        elif ref.startswith(ID_PREFIX[: len(ref)]) or ref.startswith(ID_PREFIX):
            node = self._by_prefix(ref)
        else:
            raise InvalidArguments(
                "a node is named by its id (rm_…), a unique id prefix or "
                f"path::qualified.name, got {ref!r}"
            )
        if active and node.status is not NodeStatus.ACTIVE:
            raise InvalidArguments(
                f"node {node.id} ({node.qualified_name}) no longer exists in the code"
            )
        return node

    def _by_prefix(self, prefix: str) -> CodeNode:
        graph = self._index.graph
        found = [n for n in graph.all_nodes() if n.id.startswith(prefix)]
        if not found:
            raise NotFound(f"no node id starts with {prefix}")
        if len(found) > 1:
            active = [n for n in found if n.status is NodeStatus.ACTIVE]
            if len(active) == 1:
                return active[0]  # orphans do not make a live name ambiguous
            raise Ambiguous(
                f"{prefix} matches {len(found)} nodes; give more of the id",
                [node_ref(n) for n in found[:MAX_CANDIDATES]],
            )
        return found[0]

    def _by_name(self, ref: str) -> CodeNode:
        path, _, name = ref.partition("::")
        graph = self._index.graph
        file_node = graph.file_node(path)
        if file_node is None:
            raise NotFound(f"no indexed file {path} in this project")
        if not name:
            return file_node
        found = [n for n in graph.file_nodes(path) if n.qualified_name == name]
        if not found:
            raise NotFound(f"no definition {name} in {path}")
        if len(found) > 1:
            raise Ambiguous(
                f"{path} defines {name} {len(found)} times; use an id",
                [node_ref(n) for n in found],
            )
        return found[0]

    def get(self, node_id: str) -> CodeNode | None:
        """The node with exactly this id (active or orphaned), or None."""
        return self._index.graph.get(node_id)

    def at(
        self, path: str, line: int, character: int, encoding: PositionEncoding
    ) -> CodeNode | None:
        """The innermost node at an editor position, or None."""
        return self._index.node_at(path, line, character, encoding)

    def outline(self, path: str) -> list[CodeNode] | None:
        """A file's active definitions in text order; None for an unknown file."""
        return self._index.outline(path)

    def file(self, path: str) -> CodeNode | None:
        """The node of a file, if it is indexed (active or orphaned)."""
        return self._index.graph.file_node(path)

    def search(self, query: str, limit: int = 50) -> list[CodeNode]:
        """Active nodes best matching ``query`` (every active node when empty)."""
        if not query:
            nodes = sorted(
                self._index.graph.active(),
                key=lambda n: (n.file_path, n.span.start_line),
            )
            return nodes[:limit]
        return self._index.graph.search(query, limit)

    def peek(self, ids: list[str]) -> dict[str, CodeNode]:
        """The nodes with these ids, without loading their files from the
        store (a search's parents, while the graph loads).
        """
        return self._index.graph.peek(ids)

    def source(self, node: CodeNode) -> dict[str, Any]:
        """The node's current source for a reader outside the editor (an MCP
        host is a model too): ``{node_id, file_path, source, withheld}``, the
        source None and ``withheld`` saying why for a file matching the
        project's resolved ``secrets.exclude`` (the editor's settings
        included) or one that cannot be read safely now (outside the
        project, a link to a secret: ``project_paths.read_project_file``).
        """
        answer: dict[str, Any] = {
            "node_id": node.id,
            "file_path": node.file_path,
            "source": None,
            "withheld": None,
        }
        secrets = self._index.config.secrets.exclude
        if (glob := secret_glob(node.file_path, secrets)) is not None:
            answer["withheld"] = f"{node.file_path} matches secrets.exclude ({glob!r})"
            return answer
        text = self._index.read_text(node.file_path)
        if text is None:
            answer["withheld"] = f"{node.file_path} cannot be read safely now"
            return answer
        start = text.rfind(b"\n", 0, node.span.start_byte) + 1  # whole lines
        answer["source"] = text[start : node.span.end_byte].decode(
            "utf-8", errors="replace"
        )
        return answer

    def graph_page(self, offset: int, limit: int) -> dict[str, Any]:
        """Active nodes ``offset`` to ``offset + limit`` (by file path and line)
        with their container and the calls they make to active nodes.

        Sorted afresh per page: nodes added between pages may shift a few rows
        (a live view refreshes them from events anyway).
        """
        graph = self._index.graph
        ordered = sorted(
            graph.active(), key=lambda n: (n.file_path, n.span.start_byte, n.id)
        )
        page = ordered[offset : offset + limit]
        nodes = [{**self.ref(n), "parent_id": n.parent_id} for n in page]
        calls = [
            [node.id, callee.id] for node in page for callee in graph.callees(node.id)
        ]
        end = offset + len(page)
        return {
            "nodes": nodes,
            "calls": calls,
            "total": len(ordered),
            "next_offset": end if end < len(ordered) else None,
        }

    def ref(self, node: CodeNode) -> dict[str, Any]:
        """A short reference to ``node`` with its agent status."""
        return {**node_ref(node), "agent_status": node.agent_status.value}

    async def card(self, node: CodeNode, recent: int = RECENT_EVENTS) -> dict[str, Any]:
        """The node card: :func:`node_card` + pending proposals + recent events +
        the last answer and the conversation's latest entries (``history.py``),
        what its runs cost, its subscriptions, whether it is muted and a
        person's standing instructions for it.
        """
        parts = await self._startup.parts()
        card = node_card(self._index.graph, node)
        pending = parts.agents.services.proposals.pending(node_id=node.id)
        card["pending_proposals"] = len(pending)
        card["proposals"] = [p.to_json() for p in pending]
        events = await parts.swarm.events.for_node(node.id, recent)
        card["recent_events"] = [stored.to_json() for stored in events]
        card["last_answer"] = await last_answer(parts.swarm.events, node.id)
        card["conversation"] = await conversation(parts.swarm, node.id, CONVERSATION)
        card["usage"] = (await parts.swarm.usage.total(node_id=node.id)).to_json()
        card["muted"] = node.id in parts.swarm.rules.muted
        card["subscriptions"] = await node_subscriptions(parts.swarm, node.id)
        card["instructions"] = await instructions_of(parts.agents.services.kv, node.id)
        return card

    async def set_instructions(self, node: CodeNode, text: str) -> dict[str, Any]:
        """Give ``node``'s agent a person's standing instructions ('' removes
        them): ``{node_id, instructions, changed}``. Kept in its memory
        (``agents/instructions.py``), in every later prompt of its agent.
        """
        parts = await self._startup.parts()
        kv = parts.agents.services.kv
        limit = self._index.config.limits.node_instructions_chars
        try:
            changed = await set_instructions(kv, node.id, text, limit)
        except InstructionsTooLong as error:
            raise InvalidArguments(str(error)) from None
        return {
            "node_id": node.id,
            "instructions": await instructions_of(kv, node.id),
            "changed": changed,
        }
