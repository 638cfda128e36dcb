"""How long-running engine work reports progress, without knowing the editor."""

from __future__ import annotations

from typing import Protocol


class ProgressSink(Protocol):
    """Receives the progress of one piece of work (begin, reports, end)."""

    def begin(self, title: str, message: str | None = None) -> None:
        """The work starts."""

    def report(self, message: str, percentage: int | None = None) -> None:
        """The work advanced."""

    def end(self, message: str | None = None) -> None:
        """The work is over."""
