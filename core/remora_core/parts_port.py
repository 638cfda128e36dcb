"""What graphs and checkpoints see of the engine they belong to (a protocol).

``graphs/facade.py`` and ``history/checkpoints.py`` are built by
:class:`remora_core.parts.ProjectParts` and use a few of its parts. They name this
protocol instead of the class that builds them — naming it would be an import
cycle (``tests/core/test_import_cycles.py``) — and it says exactly which parts
they rely on. (Graphs take a checkpoint before each run through the parts'
``checkpoints``, looked up when needed.)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from remora_core.agents.runtime import AgentRuntime
    from remora_core.index.codegraph import CodeGraph
    from remora_core.store import Database, FileRecord
    from remora_core.swarm.pipeline import Swarm


class PartsPort(Protocol):
    """The engine as its graphs and checkpoints see it."""

    root: Path | None
    graph: CodeGraph
    database: Database | None
    swarm: Swarm
    agents: AgentRuntime

    @property
    def records(self) -> dict[str, FileRecord]:
        """The project's files by path."""
        ...
