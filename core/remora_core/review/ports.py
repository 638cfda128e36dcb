"""What the review needs of the project it reviews in (a protocol).

The agents' services (``agents/context.AgentServices``) are built above the
review — agents propose, the review decides — so the review names this
protocol instead of them: exactly the parts its decisions and the tests'
verification read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from remora_core.config import RemoraConfig
    from remora_core.index.codegraph import CodeGraph
    from remora_core.index.text_watch import TextWatch
    from remora_core.review.proposals import ProposalStore


class ReviewServices(Protocol):
    """The project as the review sees it."""

    @property
    def root(self) -> Path | None:
        """The project root (None: files outside every workspace folder)."""
        ...

    @property
    def config(self) -> RemoraConfig:
        """The project's settings."""
        ...

    @property
    def graph(self) -> CodeGraph:
        """Nodes and edges."""
        ...

    @property
    def proposals(self) -> ProposalStore:
        """Every proposal of the project."""
        ...

    @property
    def read_text(self) -> Callable[[str], bytes | None]:
        """Current bytes of a project file: the open buffer, else the disk."""
        ...

    @property
    def document_version(self) -> Callable[[str], int | None]:
        """Version of the open document of a path, None if it is not open."""
        ...

    @property
    def text_watch(self) -> TextWatch:
        """Wakes whoever waits for a file's text to change (an edit landing)."""
        ...
