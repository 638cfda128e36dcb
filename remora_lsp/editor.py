"""The engine's :class:`~remora_core.editor.Editor` port, implemented over LSP.

- ``apply``: ``workspace/applyEdit`` with one versioned ``WorkspaceEdit`` over
  every file (undo works in the editor; a new file is a ``CreateFile`` that
  never overwrites, then its text — refused, saying so, to a client that did
  not announce ``resourceOperations`` with ``create``); the accept use case in core then
  waits until the edit comes back as ``didChange`` and records it. A client
  that did not announce ``workspace.applyEdit`` is never sent one: the answer
  says to use the code action, which carries the edit. Edits are always
  ``documentChanges`` with the version they were made for, even to a client
  that did not announce ``workspaceEdit.documentChanges`` (Neovim 0.11 applies
  them without announcing it): an unversioned edit landing on a buffer that
  moved meanwhile would corrupt it, a refused one only leaves the proposal
  pending with the reason.
- ``ask``: ``window/showMessageRequest`` with options, else ``remora/askUser``.
- ``progress``: work-done progress when the client supports it.
- ``notify``: ``window/showMessage``, once per message.
- ``on_event``: every persisted event goes to the views given at construction
  (the ``remora/event`` stream, runs' and graph runs' progress, proposals'
  diagnostics: ``remora_lsp/views.py``).

:class:`ControlEditor` is what the control socket uses: the LSP editor for
files the editor holds open, the disk (atomically) for any other file.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from lsprotocol import types
from remora_core.editor import Applied
from remora_core.front.disk_editor import DiskEditor
from remora_core.front.errors import CannotApply
from remora_core.front.locations import file_uri
from remora_core.text import LineIndex

from remora_lsp.progress import LspProgress, supports_progress

if TYPE_CHECKING:
    from pathlib import Path

    from remora_core.agents.questions import Question
    from remora_core.events.store import StoredEvent
    from remora_core.front.app import RemoraApp
    from remora_core.progress import ProgressSink
    from remora_core.review.edits import FileEdit

    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)

ASK_USER_REQUEST = "remora/askUser"
EventView = Callable[["StoredEvent"], None]
NO_CREATE = (
    "this editor cannot create files from the server (it did not announce "
    "workspace.workspaceEdit.resourceOperations with 'create'): accept it from "
    "the command line (remora accept), which writes the new file"
)
NO_APPLY_EDIT = (
    "this editor takes no edits from the server (it did not announce "
    "workspace.applyEdit): choose the code action Accept, which carries the edit"
)


def can_create(ls: RemoraLanguageServer) -> bool:
    """Whether the client applies ``CreateFile`` in a workspace edit
    (``workspace.workspaceEdit.resourceOperations`` holds ``create``).
    """
    workspace = ls.client_capabilities.workspace
    edit = workspace.workspace_edit if workspace else None
    operations = edit.resource_operations if edit else None
    return bool(operations and types.ResourceOperationKind.Create in operations)


def refuse_creation(ls: RemoraLanguageServer) -> None:
    """:class:`CannotApply` when this client cannot create files."""
    if not can_create(ls):
        raise CannotApply(NO_CREATE)


def workspace_edit(
    ls: RemoraLanguageServer, root: Path | None, files: Sequence[FileEdit]
) -> types.WorkspaceEdit:
    """One versioned ``WorkspaceEdit`` over every file's edits (a new file:
    ``CreateFile``, then its text as an edit of the empty document).
    """
    changes: list[
        types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile
    ] = []
    for file in files:
        if file.create:
            changes.append(
                types.CreateFile(
                    uri=file_uri(root, file.path),
                    options=types.CreateFileOptions(
                        overwrite=False, ignore_if_exists=False
                    ),
                )
            )
        lines = LineIndex(file.before)
        edits = []
        for edit in file.edits:
            start = lines.position(edit.start_byte, ls.encoding)
            end = lines.position(edit.end_byte, ls.encoding)
            if file.create and edit.end_byte >= len(file.before):
                # A new file's text ends at the start of the next line: Neovim
                # loads the empty file as one empty line and would keep it
                # after the text (a newline too many, never the proposal);
                # this end tells it the text replaces that line with its end
                # of line. VS Code clamps it to the end, as LSP says.
                end = (end[0] + 1, 0)
            edits.append(
                types.TextEdit(
                    range=types.Range(
                        start=types.Position(line=start[0], character=start[1]),
                        end=types.Position(line=end[0], character=end[1]),
                    ),
                    new_text=edit.new_text,
                )
            )
        document = types.OptionalVersionedTextDocumentIdentifier(
            uri=file_uri(root, file.path), version=file.version
        )
        changes.append(types.TextDocumentEdit(text_document=document, edits=edits))
    return types.WorkspaceEdit(document_changes=changes)


async def present(ls: RemoraLanguageServer, question: Question) -> str | None:
    """Show an agent's question: a message request with options, else
    ``remora/askUser``; the answer, or None.
    """
    if question.options:
        answer = await ls.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Info,
                message=question.question,
                actions=[types.MessageActionItem(title=o) for o in question.options],
            )
        )
        return answer.title if answer is not None else None
    reply = await ls.protocol.send_request_async(
        ASK_USER_REQUEST,
        {"question_id": question.id, "question": question.question},
    )
    answer = getattr(reply, "answer", None)
    if answer is None and isinstance(reply, dict):
        answer = reply.get("answer")
    return answer if isinstance(answer, str) else None


class LspEditor:
    """The person's editor, reached over LSP, for one project."""

    def __init__(
        self,
        ls: RemoraLanguageServer,
        root: Path | None,
        views: Sequence[EventView] = (),
    ) -> None:
        self.ls = ls
        self.root = root
        self.views = tuple(views)
        """What shows events in the editor (see the module doc)."""

    async def apply(self, files: Sequence[FileEdit], label: str) -> Applied:
        """``workspace/applyEdit``; raises if the editor answers an error."""
        workspace = self.ls.client_capabilities.workspace
        if not (workspace and workspace.apply_edit):
            return Applied(False, NO_APPLY_EDIT)
        if any(file.create for file in files) and not can_create(self.ls):
            return Applied(False, NO_CREATE)
        result = await self.ls.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(
                edit=workspace_edit(self.ls, self.root, files), label=label
            )
        )
        return Applied(bool(result.applied), result.failure_reason)

    async def ask(self, question: Question) -> str | None:
        """Show an agent's question in the editor; the answer or None."""
        return await present(self.ls, question)

    def progress(self) -> ProgressSink | None:
        """Work-done progress, when the client shows it."""
        return LspProgress(self.ls) if supports_progress(self.ls) else None

    def notify(self, message: str) -> None:
        """A warning shown once per session."""
        self.ls.tell_user(message)

    def on_event(self, stored: StoredEvent) -> None:
        """Show the event in every view (one failing view never stops another)."""
        for view in self.views:
            try:
                view(stored)
            except Exception:
                log.exception("showing %s failed", stored.event.type)


class ControlEditor:
    """For requests from the control socket: through the editor for the files
    it holds open, written on disk atomically for the others (re-indexed once
    the acceptance is recorded: ``remora_core.front.proposals``).
    """

    def __init__(self, editor: LspEditor, app: RemoraApp) -> None:
        assert app.root is not None
        self.editor = editor
        self.app = app
        self.disk = DiskEditor(app.root)

    async def apply(self, files: Sequence[FileEdit], label: str) -> Applied:
        """The editor's buffers for open files, else the files themselves.

        The files on disk are checked first and written last: the editor (or
        the person) may refuse its part, and then nothing is written — one
        edit across both stays all or nothing unless the disk fails between
        its check and its write.
        """
        documents = self.app.documents
        open_files = [f for f in files if documents.get(f.path) is not None]
        on_disk = [f for f in files if documents.get(f.path) is None]
        if on_disk and (problem := await self.disk.check(on_disk)) is not None:
            return Applied(False, problem)
        if open_files:
            applied = await self.editor.apply(open_files, label)
            if not applied.applied or not on_disk:
                return applied
        return await self.disk.apply(on_disk, label)

    async def ask(self, question: Question) -> str | None:
        """Through the editor."""
        return await self.editor.ask(question)

    def progress(self) -> ProgressSink | None:
        """Through the editor."""
        return self.editor.progress()

    def notify(self, message: str) -> None:
        """Through the editor."""
        self.editor.notify(message)

    def on_event(self, stored: StoredEvent) -> None:
        """Events reach the editor through the app's own editor already."""
