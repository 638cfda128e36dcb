"""Edits that apply proposals: one per proposal, gathered per file.

A :class:`PlannedEdit` replaces a node's bytes in the text a proposal is
applied to now; a :class:`FileEdit` is every planned edit of one file against
one text. The accept use cases plan them (``decisions.py``,
``accept_many.py``); an :class:`~remora_core.editor.Editor` applies a list of
file edits in one step.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PlannedEdit:
    """The edit that applies a proposal to the current text."""

    proposal_id: str
    path: str
    version: int | None
    """The open document's version the edit is for (None: not open)."""
    start_byte: int
    end_byte: int
    new_text: str
    before: bytes
    """The whole text the edit applies to."""


@dataclass
class FileEdit:
    """Every accepted edit of one file, against one text."""

    path: str
    version: int | None
    before: bytes
    edits: list[PlannedEdit] = field(default_factory=list)
    """Non-overlapping, in text order."""
    create: bool = False
    """The file does not exist yet: the edit creates it (``before`` is empty;
    an editor sends ``CreateFile`` first, the disk writer never replaces a
    file that appeared meanwhile)."""

    def after(self) -> bytes:
        """The text once every edit is in."""
        text = self.before
        for edit in reversed(self.edits):
            new = edit.new_text.encode("utf-8")
            text = text[: edit.start_byte] + new + text[edit.end_byte :]
        return text

    @classmethod
    def of(cls, planned: PlannedEdit) -> FileEdit:
        """The file edit of one planned edit."""
        return cls(planned.path, planned.version, planned.before, [planned])
