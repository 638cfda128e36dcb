"""What one agent turn can reach: the project's services and the turn itself.

:class:`AgentServices` is built once per project (the graph, the proposals,
memory, questions, bundles, extensions, the sandbox, the model resolver and how
to read a file's current text). :class:`AgentContext` is one turn's view of
them — the ``deps`` pydantic-ai hands to every tool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from remora_core.agents.cascade_memory import CascadeSets
from remora_core.discovery.files import secret_glob
from remora_core.model import ProposalStatus
from remora_core.review.definition_edits import at_column_zero
from remora_core.review.indentation import indent_at

if TYPE_CHECKING:
    from remora_core.agents.bundles import Bundle, BundleRegistry
    from remora_core.agents.extensions import ExtensionNode, ExtensionRegistry
    from remora_core.agents.memory import ChatMemory
    from remora_core.agents.providers import ModelResolver
    from remora_core.agents.questions import Questions
    from remora_core.agents.sandbox import Sandbox
    from remora_core.agents.workspace import KeyValueStore, Overlay
    from remora_core.config import RemoraConfig
    from remora_core.index.codegraph import CodeGraph
    from remora_core.index.text_watch import TextWatch
    from remora_core.model import CodeNode
    from remora_core.review.checks import Check
    from remora_core.review.guards import Guard, GuardViolation
    from remora_core.review.proposals import Proposal, ProposalStore
    from remora_core.swarm.turns import Turn


class ProposalVerifier(Protocol):
    """What agents' tools see of ``verification.Verifier`` (named here, not
    imported: the verifier reads the services this module defines).
    """

    def first_check(self, proposal: Proposal) -> Check | None:
        """The ``tests`` check a new proposal is shown with (None: no check)."""
        ...

    def submit(self, proposal: Proposal) -> None:
        """Run the tests selected for ``proposal`` in the background."""
        ...

    def resume(self) -> None:
        """Run again the tests a restart interrupted."""
        ...

    async def close(self) -> None:
        """Stop every run."""
        ...


@dataclass
class AgentServices:
    """The long-lived services of one project's agents."""

    root: Path | None
    config: RemoraConfig
    graph: CodeGraph
    read_text: Callable[[str], bytes | None]
    """Current bytes of a project file: the open buffer, else the disk."""
    document_version: Callable[[str], int | None]
    """Version of the open document of a path, None if it is not open."""
    text_watch: TextWatch
    """Wakes whoever waits for a file's text to change (an edit landing)."""
    proposals: ProposalStore
    kv: KeyValueStore
    overlay: Overlay
    memory: ChatMemory
    questions: Questions
    bundles: BundleRegistry
    extensions: ExtensionRegistry
    sandbox: Sandbox
    models: ModelResolver
    verifier: ProposalVerifier | None = None
    """Runs the project's tests on new proposals (``review.run_tests``)."""
    cascades: CascadeSets = field(default_factory=CascadeSets)
    """The proposals each cascade made: gathered into one set (``cascade_sets``)."""

    def source_of(self, node: CodeNode) -> str:
        """The node's current text ('' if its file cannot be read); never the
        text of a file in ``secrets.exclude`` (every prompt gets source here).
        """
        hidden = _hidden(node, self.config.secrets.exclude)
        if hidden is not None:
            return hidden
        return _slice(node, self.read_text(node.file_path))

    def shown_source(self, node: CodeNode, source: str | None = None) -> str:
        """``source`` (default: the node's current text) at column 0, as an
        agent is shown a definition and writes it back: a method's body is
        not shown indented twice. The file is read once (a prompt's share
        of a turn's CPU, ``bench/scale_model.py``).
        """
        file_text = self.read_text(node.file_path)
        if source is None:
            hidden = _hidden(node, self.config.secrets.exclude)
            source = hidden if hidden is not None else _slice(node, file_text)
        if file_text is None:
            return source
        return at_column_zero(source, indent_at(file_text, node.span.start_byte))


def _hidden(node: CodeNode, exclude: Sequence[str]) -> str | None:
    """What is shown instead of a node in a file of ``secrets.exclude``."""
    glob = secret_glob(node.file_path, exclude)
    if glob is None:
        return None
    return f"(not shown: {node.file_path} matches secrets.exclude ({glob!r}))"


def _slice(node: CodeNode, file_text: bytes | None) -> str:
    """The node's text in its file's ``file_text`` ('' if unreadable)."""
    if file_text is None:
        return ""
    return file_text[node.span.start_byte : node.span.end_byte].decode(
        "utf-8", errors="replace"
    )


@dataclass
class TurnRecord:
    """What a turn did, for its result and for tests."""

    proposals: list[Proposal] = field(default_factory=list)
    messages_sent: list[str] = field(default_factory=list)
    answer: str = ""
    tool_calls: int = 0
    """Tool calls made so far (limits.tool_calls_per_run)."""
    violations: list[GuardViolation] = field(default_factory=list)
    """Proposals the turn's guard refused (the second one ends the turn)."""
    warned_unused: bool = False
    """A rewrite adding parameters its code never uses was refused once."""
    wrote_files: list[str] = field(default_factory=list)
    """``.pym`` tools that wrote to the agent's overlay this turn (their
    writes become a proposal at the turn's end: ``overlay_proposals.py``)."""


@dataclass
class AgentContext:
    """One turn's view of the services (pydantic-ai ``deps``)."""

    turn: Turn
    services: AgentServices
    bundle: Bundle
    extensions: list[ExtensionNode] = field(default_factory=list)
    record: TurnRecord = field(default_factory=TurnRecord)
    deadline: asyncio.Timeout | None = None
    """The run's time limit; pushed back while the agent waits for a person."""
    guard: Guard | None = None
    """What alone this turn's proposals may change (``intent.py``)."""

    base: Proposal | None = None
    """A pending proposal of an earlier step of the same graph run: the agent
    works on its source (its own proposal supersedes it)."""
    project_rules: str = ""
    """The project's ``AGENTS.md`` / ``.remora/rules.md``, bounded
    (``project_rules.py``), read for this turn."""
    instructions: str | None = None
    """A person's standing instructions for this node (``instructions.py``)."""

    def own_source(self) -> str:
        """The source the agent works on: its node's, or the pending base's."""
        if self.base is not None and self.base.status == ProposalStatus.PENDING:
            return self.base.new_source
        return self.services.source_of(self.node)

    def shown_own_source(self) -> str:
        """:meth:`own_source` at column 0, as the agent is shown it."""
        if self.base is not None and self.base.status == ProposalStatus.PENDING:
            return self.services.shown_source(self.node, self.base.new_source)
        return self.services.shown_source(self.node)  # the file read once

    def extend_deadline(self, seconds: float) -> None:
        """Do not count ``seconds`` (spent waiting for a person) against the run."""
        when = self.deadline.when() if self.deadline is not None else None
        if when is not None and self.deadline is not None:
            self.deadline.reschedule(when + seconds)

    @property
    def agent_id(self) -> str:
        """The id of the agent taking the turn."""
        return self.turn.agent_id

    @property
    def node(self) -> CodeNode:
        """The agent's node; ValueError if it vanished during the turn."""
        node = self.services.graph.get(self.turn.agent_id)
        if node is None:
            raise ValueError(f"node {self.turn.agent_id} no longer exists")
        return node

    @property
    def workspaces(self) -> list[str]:
        """Project paths mounted for this agent by its extensions."""
        paths: list[str] = []
        for extension in self.extensions:
            paths.extend(extension.get_workspaces())
        return list(dict.fromkeys(paths))
