"""An :class:`~remora_core.editor.Editor` on disk, for use without an editor.

The command line (no server running) and the control socket (for files no
editor holds open) apply an accepted edit to the file itself:

1. the file must still hold the text the edit was planned against (else
   nothing is written: someone changed it meanwhile);
2. the new text goes to a temporary file in the same directory, flushed and
   ``fsync``-ed, which then replaces the file with ``os.replace`` (atomic: a
   reader sees the old file or the new one, never half of each; the file's
   permission bits are kept);
3. the file is read back and must hold exactly the expected text.

A new file (``FileEdit.create``) is created, folders and all, and never
replaces a file that appeared meanwhile (:func:`create_exclusively`).

A file that is a symbolic link is written through to its target when that
is inside the project — the link stays a link — and refused, saying why,
when it leads outside (``project_paths.real_project_file``, resolved at the
moment of writing: the file may have become a link after it was indexed).

It does not re-index the file: the accept use case records the acceptance
first (``rewrite_applied``), then the project reads the file again, and the
``content_changed`` that follows triggers subscribers — the order an editor's
``didChange`` gives (DESIGN §9).

There is no person to ask (:meth:`ask` answers None) and no progress display;
problems are logged (and collected in :attr:`told` for the caller to show).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from remora_core.editor import Applied
from remora_core.project_paths import PathRefused, real_project_file

if TYPE_CHECKING:
    from collections.abc import Sequence

    from remora_core.agents.questions import Question
    from remora_core.events.store import StoredEvent
    from remora_core.progress import ProgressSink
    from remora_core.review.edits import FileEdit

log = logging.getLogger(__name__)


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path``'s content with ``data`` in one step (temp + rename)."""
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    handle, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".remora-tmp", dir=path.parent
    )
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with_suppressed_unlink(temporary)
        raise


def create_exclusively(path: Path, data: bytes) -> None:
    """Create ``path`` holding ``data``, never replacing a file that exists
    (FileExistsError): written to a temporary file, then hard-linked into
    place — the link fails if the name was taken meanwhile — so a reader
    never sees half of it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".remora-tmp", dir=path.parent
    )
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o644)
        os.link(temporary, path)
    finally:
        with_suppressed_unlink(temporary)


def with_suppressed_unlink(path: str) -> None:
    """Remove a temporary file, ignoring that it may be gone already."""
    with contextlib.suppress(OSError):
        os.unlink(path)


class _Refused(Exception):
    """A file is not as its edit was planned on; ``reason`` says how."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class DiskEditor:
    """Applies edits to files on disk (see the module doc)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.told: list[str] = []

    async def check(self, files: Sequence[FileEdit]) -> str | None:
        """Why the edits cannot be written now (a file changed on disk, a new
        one exists, a path leads outside), or None; nothing is written.
        """
        try:
            await self._targets(files)
        except _Refused as refused:
            return refused.reason
        except PathRefused as refused:
            return f"not written: {refused}"
        except OSError as error:
            return f"cannot write: {error.strerror} ({error.filename})"
        return None

    async def _targets(self, files: Sequence[FileEdit]) -> list[Path]:
        """The real file of each edit, each checked against what it was
        planned on (:class:`_Refused` saying why not).
        """
        targets = [real_project_file(self.root, file.path) for file in files]
        for file, path in zip(files, targets, strict=True):
            if file.create:
                if path.exists() or path.is_symlink():
                    raise _Refused(f"{file.path} exists now")
                continue
            current = await asyncio.to_thread(path.read_bytes)
            if current != file.before:
                raise _Refused(f"{file.path} changed on disk meanwhile")
        return targets

    async def apply(self, files: Sequence[FileEdit], label: str) -> Applied:
        """Write every file atomically and read each back; nothing is written
        when one of them changed on disk since its edits were planned.
        """
        try:
            targets = await self._targets(files)
            for file, path in zip(files, targets, strict=True):
                if (reason := await self._write(file, path)) is not None:
                    return Applied(False, reason)
        except _Refused as refused:
            return Applied(False, refused.reason)
        except PathRefused as refused:
            return Applied(False, f"not written: {refused}")
        except OSError as error:
            return Applied(False, f"cannot write: {error.strerror} ({error.filename})")
        return Applied(True)

    async def _write(self, file: FileEdit, path: Path) -> str | None:
        """Write one file's edits to ``path`` (the real file, links followed);
        why it does not hold them, or None.
        """
        after = file.after()
        if file.create:
            try:
                await asyncio.to_thread(create_exclusively, path, after)
            except FileExistsError:
                return f"{file.path} exists now: not overwritten"
        else:
            await asyncio.to_thread(write_atomically, path, after)
        if await asyncio.to_thread(path.read_bytes) != after:
            return f"{file.path} does not hold the edit after writing"
        log.info("wrote %s (%d bytes)", file.path, len(after))
        return None

    async def ask(self, question: Question) -> str | None:
        """Nobody to ask on disk."""
        return None

    def progress(self) -> ProgressSink | None:
        """No progress display."""
        return None

    def notify(self, message: str) -> None:
        """Log the problem and keep it for the caller."""
        if message not in self.told:
            self.told.append(message)
            log.warning("%s", message)

    def on_event(self, stored: StoredEvent) -> None:
        """Nothing shows events on disk."""
