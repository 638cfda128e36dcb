"""A project under test: a real :class:`RemoraApp` whose parts a test may read.

Engine tests (the swarm, the index, the store, agents) look inside the
project they drive; :class:`Project` builds a real app with a recording
editor and names its parts through :mod:`remora_core.inspection`, so the
tests keep reading ``project.swarm`` or ``project.graph``. Consumers never
do this: they call the app's facades.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from remora_core import inspection
from remora_core.editor import Applied
from remora_core.front.app import RemoraApp

if TYPE_CHECKING:
    from pathlib import Path

    from remora_core.config import RemoraConfig
    from remora_core.progress import ProgressSink


class RecordingEditor:
    """An editor with nobody at it: problems go to ``notify``, questions are
    unanswered, edits refused, events kept.
    """

    def __init__(
        self,
        notify: Callable[[str], object] | None = None,
        progress: Callable[[], ProgressSink | None] | None = None,
    ) -> None:
        self._notify = notify
        self._progress = progress
        self.events: list[Any] = []

    async def apply(self, files: Any, label: str) -> Applied:
        """No editor to apply edits."""
        return Applied(False, "no editor in this test")

    async def ask(self, question: Any) -> str | None:
        """Nobody to ask."""
        return None

    def progress(self) -> ProgressSink | None:
        """The test's progress display, if it gave one."""
        return self._progress() if self._progress is not None else None

    def notify(self, message: str) -> None:
        """Pass problems to the test."""
        if self._notify is not None:
            self._notify(message)

    def on_event(self, stored: Any) -> None:
        """Keep every event."""
        self.events.append(stored)


class Project:
    """A real app and its parts, for engine tests."""

    def __init__(
        self,
        root: Path | None,
        config: RemoraConfig,
        *,
        notify: Callable[[str], object] | None = None,
        progress: Callable[[], ProgressSink | None] | None = None,
        **options: Any,
    ) -> None:
        self.editor = RecordingEditor(notify, progress)
        self.app = RemoraApp(root, config, self.editor, **options)
        self.root = root

    async def start(self) -> None:
        """Start the app."""
        await self.app.start()

    async def close(self) -> None:
        """Close the app."""
        await self.app.close()

    async def ready(self) -> bool:
        """Wait until the stored graph is loaded."""
        return await self.app.ready()

    # ---- the parts ------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        # The parts on the store first (swarm, agents, database, graphs,
        # checkpoints, statuses, store, follower), then the index's own
        # (graph, documents, tasks, config, outline, search, ...).
        if name in _PARTS:
            return getattr(inspection.parts(self.app), name)
        return getattr(inspection.index(self.app), name)

    @property
    def index(self) -> Any:
        """The code index."""
        return inspection.index(self.app)

    @property
    def disk(self) -> Any:
        """The disk synchronisation."""
        return inspection.disk(self.app)

    @property
    def documents_sync(self) -> Any:
        """The open-document synchronisation."""
        return inspection.document_sync(self.app)

    @property
    def watchers(self) -> Any:
        """The loops that live as long as the app."""
        return inspection.watchers(self.app)

    @property
    def following(self) -> bool:
        """Whether another server owns the store."""
        return self.app.read_only

    def open_document(self, path: str, version: int, text: str) -> None:
        """The editor opened ``path``."""
        self.app.documents.open(path, version, text)

    def change_document(self, path: str, version: int, changes: Any, encoding: Any):
        """An edit in the editor."""
        return self.documents_sync.change(path, version, changes, encoding)

    def close_document(self, path: str) -> None:
        """The editor closed ``path``."""
        self.app.documents.close(path)

    def save_document(self, path: str) -> None:
        """The editor saved ``path``."""
        self.app.documents.save(path)


_PARTS = frozenset(
    {
        "swarm",
        "agents",
        "database",
        "store",
        "graphs",
        "checkpoints",
        "statuses",
        "follower",
        "records",
    }
)
