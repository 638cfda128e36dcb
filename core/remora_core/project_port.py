"""What the parts a project is made of see of it (a protocol, not the class).

``disk.py`` (indexing files on disk), ``following.py`` (following another
server's store) and ``agents/runtime.py`` (the agents' services) each hold the
project they belong to. They name this protocol instead of
:class:`remora_core.project.Project`, which builds them — naming the class
would be an import cycle (``tests/core/test_import_cycles.py``), and the
protocol says exactly which part of the project each of them relies on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from remora_core.agents.questions import Presenter
    from remora_core.changes import Changes
    from remora_core.codegraph import CodeGraph
    from remora_core.config import RemoraConfig
    from remora_core.discovery import FileExtraction, FileFilter
    from remora_core.documents import OpenDocument
    from remora_core.indexer import Extractor
    from remora_core.progress import ProgressSink
    from remora_core.resolve import ModuleMap
    from remora_core.store import Database, FileRecord, NodeStore
    from remora_core.swarm.engine import Swarm
    from remora_core.tasks import TaskSet
    from remora_core.trust import Trust
    from remora_core.updates import FileUpdate


class DiskPort(Protocol):
    """What the store follower asks of the disk indexer."""

    async def files_changed(
        self,
        created: list[str] = ...,
        changed: list[str] = ...,
        deleted: list[str] = ...,
    ) -> None:
        """Re-index files changed outside the editor."""
        ...


class ProjectPort(Protocol):
    """The project as its indexer, store follower and agents see it."""

    root: Path | None
    config: RemoraConfig
    trust: Trust
    graph: CodeGraph
    modules: ModuleMap
    documents: dict[str, OpenDocument]
    records: dict[str, FileRecord]
    database: Database | None
    store: NodeStore | None
    swarm: Swarm
    tasks: TaskSet
    lock: asyncio.Lock
    indexed: asyncio.Event
    closed: bool
    filter: FileFilter
    extractor: Extractor
    progress: Callable[[], ProgressSink | None] | None
    question_presenter: Presenter | None
    disk: DiskPort
    agents: Any
    """The project's ``AgentRuntime`` once started, else None (naming the
    class here would be an import cycle with ``agents/runtime.py``)."""

    @property
    def following(self) -> bool:
        """Whether another server owns the store."""
        ...

    async def ready(self) -> bool:
        """Wait until the stored graph is loaded."""
        ...

    async def until(self, event: asyncio.Event) -> bool:
        """Wait for one of the project's events or its closing."""
        ...

    def absolute(self, path: str) -> Path:
        """The filesystem path of a project path."""
        ...

    def apply(
        self, path: str, extraction: FileExtraction, *, resolve: bool = True
    ) -> FileUpdate:
        """Make ``extraction`` the current state of ``path``."""
        ...

    def resolve(self, path: str, extraction: FileExtraction, ids: list[str]) -> None:
        """Recompute the edges of ``path``."""
        ...

    def forget(self, path: str) -> FileUpdate | None:
        """A file was deleted: orphan its nodes."""
        ...

    def skip(self, path: str, reason: str) -> FileUpdate | None:
        """A file is not indexed: orphan its nodes, remember why."""
        ...

    def rename(self, old: str, new: str) -> bool:
        """Move a file's nodes to ``new``."""
        ...

    def refresh_document(
        self, path: str, *, with_references: bool
    ) -> FileUpdate | None:
        """Re-extract an open document."""
        ...

    def dependents(self, paths: set[str]) -> set[str]:
        """Files whose edges may change when ``paths`` change."""
        ...

    async def announce(self, changes: Changes) -> None:
        """Emit the events of ``changes``."""
        ...

    async def save_dirty(self, only: Iterable[str] | None = None) -> None:
        """Write every changed file (of ``only``, when given) to the store."""
        ...
