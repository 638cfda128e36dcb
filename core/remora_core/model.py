"""The engine's vocabulary: nodes, their kinds and states, spans and edges.

These are plain frozen dataclasses (cheap to build by the ten thousand, hashable,
picklable across worker processes). The LSP adapter converts them with pure
functions in ``remora_lsp/convert.py``; nothing here knows about the protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
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


@dataclass(frozen=True, slots=True)
class Edge:
    """A directed relation between two node ids."""

    from_id: str
    to_id: str
    kind: EdgeKind
