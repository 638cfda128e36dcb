"""A project's parts as the facades reach them: awaited, never half-built.

:class:`~remora_core.front.app.RemoraApp` exists from the moment a consumer
builds it (an editor opens documents while the store loads); its parts on the
store (:class:`~remora_core.parts.ProjectParts`) exist once it started. The
facades hold a :class:`Startup` and either wait for the parts
(:meth:`Startup.parts`: a request during start-up waits, and is answered with
:class:`ProjectClosed` if the project closes first) or, for what an editor
reads on every keystroke (lenses, diagnostics), look without waiting
(:meth:`Startup.now`: nothing yet is an empty answer).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from remora_core.front.errors import FrontError, NotOwner

if TYPE_CHECKING:
    from pathlib import Path

    from remora_core.index.code_index import CodeIndex
    from remora_core.parts import ProjectParts

log = logging.getLogger(__name__)


class ProjectClosed(FrontError):
    """The project closed (a shutdown or a restart) before it finished loading."""

    code = "closed"


class Startup:
    """The parts of one project, once it started."""

    def __init__(self, index: CodeIndex) -> None:
        self._index = index
        self._parts: ProjectParts | None = None

    def started(self, parts: ProjectParts) -> None:
        """The app built its parts (just before the index counts as loaded)."""
        self._parts = parts

    def now(self) -> ProjectParts | None:
        """The parts if the project started, without waiting."""
        return self._parts

    async def parts(self) -> ProjectParts:
        """The parts, once the stored graph is loaded (waits during start-up)."""
        if not await self._index.ready() or self._parts is None:
            raise ProjectClosed(
                f"Remora: the project {self.name} closed (shutdown or restart) "
                "before it finished loading; ask again"
            )
        return self._parts

    async def indexed_parts(self) -> ProjectParts:
        """The parts, once the workspace is indexed: what a snapshot of the
        project files' hashes needs (one taken earlier recorded none).
        """
        parts = await self.parts()
        if not await self._index.until(self._index.indexed):
            raise ProjectClosed(
                f"Remora: the project {self.name} closed (shutdown or restart) "
                "before it finished indexing; ask again"
            )
        return parts

    @property
    def name(self) -> str:
        """The project's name for messages."""
        root: Path | None = self._index.root
        return root.name if root is not None else "loose files"

    def ensure_owner(self, what: str) -> None:
        """Refuse ``what`` (e.g. "run agents") when another server owns the store."""
        parts = self._parts
        database = parts.database if parts is not None else None
        owner = database.owner if database is not None else None
        if owner is None:
            return
        raise NotOwner(
            f"Remora cannot {what} here: another Remora server ({owner.describe()}) "
            f"owns this project's store, and agents run and proposals are decided "
            "in its editor. This server serves the project read-only and takes "
            "over when that server stops."
        )
