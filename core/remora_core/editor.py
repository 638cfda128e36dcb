"""The ``Editor`` port: what only the person's editor (or its stand-in) can do.

The engine never talks to an editor directly. Whoever composes it
(:class:`remora_core.front.app.RemoraApp`) passes one object implementing
:class:`Editor`:

- ``remora_lsp`` implements it over LSP (``workspace/applyEdit``,
  ``window/showMessageRequest``, work-done progress, open buffers);
- the command line implements it on disk (:mod:`remora_core.front.disk_editor`:
  an atomic write — temp file + rename — then a re-read to verify).

:meth:`Editor.apply` only *applies*: deciding whether a proposal may be applied,
checking that the edit landed and recording the decision is the accept use case
(:mod:`remora_core.front.accepting`), the same for every editor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from remora_core.agents.questions import Question
    from remora_core.progress import ProgressSink
    from remora_core.review.decisions import PlannedEdit


@dataclass(frozen=True)
class Applied:
    """What an editor answered to an edit: applied, or why not."""

    applied: bool
    reason: str | None = None


class Editor(Protocol):
    """What the engine asks of the person's editor."""

    async def apply(self, planned: PlannedEdit) -> Applied:
        """Apply ``planned`` to the document (an open buffer or the file);
        raise if the editor answered with an error.
        """
        ...

    async def ask(self, question: Question) -> str | None:
        """Ask the person ``question``; their answer, or None if they cannot."""
        ...

    def progress(self) -> ProgressSink | None:
        """A new progress display for one piece of work (None: not shown)."""
        ...

    def document_text(self, path: str) -> bytes | None:
        """The text of ``path`` when the editor holds it open, else None."""
        ...

    def notify(self, message: str) -> None:
        """Tell the person about a problem (once per problem)."""
        ...
