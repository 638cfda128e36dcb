"""The engine's vocabulary: nodes, their kinds and states, spans and edges.

These are frozen dataclasses and named tuples (cheap to build by the ten
thousand, hashable, picklable across worker processes). The LSP adapter
converts them with pure functions in ``remora_lsp/convert.py``; nothing here
knows about the protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from enum import StrEnum
from typing import Any, NamedTuple


class NodeKind(StrEnum):
    """What a node is; a ``method`` is a function directly in a class."""

    FILE = "file"
    CLASS = "class"
    FUNCTION = "function"
    METHOD = "method"


class NodeStatus(StrEnum):
    """Whether the node still exists in its file (orphans are kept, never deleted)."""

    ACTIVE = "active"
    ORPHANED = "orphaned"


class AgentStatus(StrEnum):
    """What the node's agent is doing."""

    IDLE = "idle"
    RUNNING = "running"
    BLOCKED = "blocked"
    AWAITING_REVIEW = "awaiting_review"
    ERROR = "error"


class ProposalStatus(StrEnum):
    """Where a proposal stands (stored as its value)."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    STALE = "stale"
    SUPERSEDED = "superseded"


class RunStatus(StrEnum):
    """How a run stands (stored as its value in ``runs.status``)."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"


class EdgeKind(StrEnum):
    """Relations between nodes."""

    PARENT_OF = "parent_of"
    CALLS = "calls"
    IMPORTS = "imports"


class Span(NamedTuple):
    """A byte range with its zero-based LSP lines and byte columns.

    ``ascii`` says both line prefixes (line start up to each end of the span) are
    ASCII, so the byte columns are also the character columns in every position
    encoding and no text is needed to convert them. When it is false, the
    converter needs the file's :class:`~remora_core.text.LineIndex`.

    A named tuple, like :class:`Definition`: a warm start builds ~150k spans of
    the stdlib and workers pickle them back; tuples cost a third of a frozen
    dataclass to build and much less to pickle.
    """

    start_byte: int
    end_byte: int
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    ascii: bool = True

    def contains(self, offset: int) -> bool:
        """Whether ``offset`` lies inside the span (end inclusive, as a cursor can)."""
        return self.start_byte <= offset <= self.end_byte


class Definition(NamedTuple):
    """A class or function found in a parse, before it has an identity.

    ``span`` runs from the first decorator to the end of the last statement of the
    body (trailing comments excluded, as Python's ``ast`` does); ``name_span`` is
    the identifier. ``parent`` indexes the enclosing definition in the same list,
    or is ``-1`` for a top-level definition.
    """

    kind: NodeKind
    name: str
    qualified_name: str
    span: Span
    name_span: Span
    parent: int
    source_hash: str
    inline_id: str | None = None
    has_error: bool = False
    """Tree-sitter recovered from a syntax error somewhere inside."""


@dataclass(frozen=True, slots=True)
class CodeNode:
    """A node with its identity: what the outline, hover and agents see."""

    id: str
    kind: NodeKind
    name: str
    qualified_name: str
    file_path: str
    span: Span
    name_span: Span
    parent_id: str | None
    source_hash: str
    status: NodeStatus = NodeStatus.ACTIVE
    agent_status: AgentStatus = AgentStatus.IDLE

    def with_changes(self, **changes: Any) -> CodeNode:
        """A copy with some fields replaced."""
        return replace(self, **changes)


def _slot_setters(cls: type) -> tuple[Any, ...]:
    """The setter of each field's slot, in declaration order."""
    return tuple(getattr(cls, f.name).__set__ for f in fields(cls))


assert tuple(f.name for f in fields(CodeNode)) == (
    "id",
    "kind",
    "name",
    "qualified_name",
    "file_path",
    "span",
    "name_span",
    "parent_id",
    "source_hash",
    "status",
    "agent_status",
), "build_node sets the fields in this order"
(
    _set_id,
    _set_kind,
    _set_name,
    _set_qualified_name,
    _set_file_path,
    _set_span,
    _set_name_span,
    _set_parent_id,
    _set_source_hash,
    _set_status,
    _set_agent_status,
) = _slot_setters(CodeNode)


def build_node(
    id: str,
    kind: NodeKind,
    name: str,
    qualified_name: str,
    file_path: str,
    span: Span,
    name_span: Span,
    parent_id: str | None,
    source_hash: str,
    status: NodeStatus = NodeStatus.ACTIVE,
    agent_status: AgentStatus = AgentStatus.IDLE,
) -> CodeNode:
    """``CodeNode(...)`` at half the cost, for building nodes by the hundred
    thousand (indexing, loading the store): a frozen dataclass's ``__init__``
    goes through ``object.__setattr__`` per field; this sets each slot
    directly. Same fields, same object.
    """
    node = object.__new__(CodeNode)
    _set_id(node, id)
    _set_kind(node, kind)
    _set_name(node, name)
    _set_qualified_name(node, qualified_name)
    _set_file_path(node, file_path)
    _set_span(node, span)
    _set_name_span(node, name_span)
    _set_parent_id(node, parent_id)
    _set_source_hash(node, source_hash)
    _set_status(node, status)
    _set_agent_status(node, agent_status)
    return node


class Edge(NamedTuple):
    """A directed relation between two node ids.

    A named tuple, as spans are: edges live in sets by the ten thousand, and a
    tuple is built, hashed and compared in C (a frozen dataclass ran Python
    code for each).
    """

    from_id: str
    to_id: str
    kind: EdgeKind
