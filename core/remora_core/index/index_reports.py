"""What the code index reports, and to whom.

The index (``code_index.py``) calls nothing above it: it tells its
:class:`IndexListener` what changed. The project's parts (``parts.py``)
are the listener once they exist; before, reports go nowhere
(:class:`Unheard`) — nothing is announced before the stored graph is loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from remora_core.index.changes import Changes


class IndexListener(Protocol):
    """What the index reports (the project's parts listen)."""

    def nodes_changed(self, path: str) -> None:
        """The nodes of ``path`` changed (pending proposals may be stale)."""
        ...

    def file_moved(self, old: str, new: str) -> None:
        """A file was renamed; its nodes kept their ids."""
        ...

    async def announce(self, changes: Changes) -> None:
        """Changes of one file to announce (content and topology)."""
        ...


class Unheard:
    """The listener of an index nobody composed yet: reports go nowhere."""

    def nodes_changed(self, path: str) -> None:
        """Nobody to tell."""

    def file_moved(self, old: str, new: str) -> None:
        """Nobody to tell."""

    async def announce(self, changes: Changes) -> None:
        """Nobody to tell."""
