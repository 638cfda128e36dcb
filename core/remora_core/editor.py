"""The ``Editor`` port: what only the person's editor (or its stand-in) can do.

The engine never talks to an editor directly. Whoever opens an app
(:class:`remora_core.front.app.RemoraApp`) passes one object implementing
:class:`Editor`, and that is all a consumer contributes to the engine:

- ``remora_lsp`` implements it over LSP (``workspace/applyEdit``,
  ``window/showMessageRequest`` / ``remora/askUser``, work-done progress,
  ``window/showMessage``, and the ``remora/event`` stream with the progress
  and diagnostics that follow events);
- the command line implements it on disk (:mod:`remora_core.front.disk_editor`:
  atomic writes — temp file + rename — then a re-read to verify; no person to
  ask, no progress, problems logged).

:meth:`Editor.apply` only *applies*: deciding whether proposals may be
applied, checking that the edit landed and recording the decision is the
accept use case (:mod:`remora_core.front.accepting`), the same for every
editor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from remora_core.agents.questions import Question
    from remora_core.events.store import StoredEvent
    from remora_core.progress import ProgressSink
    from remora_core.review.edits import FileEdit


@dataclass(frozen=True)
class Applied:
    """What an editor answered to an edit: applied, or why not."""

    applied: bool
    reason: str | None = None


class Editor(Protocol):
    """What the engine asks of the person's editor."""

    async def apply(self, files: Sequence[FileEdit], label: str) -> Applied:
        """Apply the edits of every file in one step (an open buffer or the
        file itself; ``label`` names the change for the person's undo); raise
        if the editor answered with an error.
        """
        ...

    async def ask(self, question: Question) -> str | None:
        """Ask the person ``question``; their answer, or None if they cannot."""
        ...

    def progress(self) -> ProgressSink | None:
        """A new progress display for one piece of work (None: not shown)."""
        ...

    def notify(self, message: str) -> None:
        """Tell the person about a problem (once per problem)."""
        ...

    def on_event(self, stored: StoredEvent) -> None:
        """See an event as soon as it is persisted (start-up ones included);
        must return at once — it runs on the engine's bus.
        """
        ...
