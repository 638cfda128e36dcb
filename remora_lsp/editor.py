"""The engine's :class:`~remora_core.editor.Editor` port, implemented over LSP.

- ``apply``: ``workspace/applyEdit`` with a versioned ``WorkspaceEdit`` (undo
  works in the editor); the accept use case in core then waits until the edit
  comes back as ``didChange`` and records it.
- ``ask``: ``window/showMessageRequest`` with options, else ``remora/askUser``.
- ``progress``: work-done progress when the client supports it.
- ``document_text``: the open buffer.
- ``notify``: ``window/showMessage``, once per message.

:class:`ControlEditor` is what the control socket uses: the LSP editor for a
file the editor holds open, the disk (atomically) for any other file.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsprotocol import types
from remora_core.editor import Applied
from remora_core.front.disk_editor import DiskEditor
from remora_core.text import LineIndex

from remora_lsp.progress import LspProgress, supports_progress

if TYPE_CHECKING:
    from remora_core.agents.questions import Question
    from remora_core.progress import ProgressSink
    from remora_core.project import Project
    from remora_core.review.decisions import PlannedEdit

    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)

ASK_USER_REQUEST = "remora/askUser"


def workspace_edit(
    ls: RemoraLanguageServer, project: Project, planned: PlannedEdit
) -> types.WorkspaceEdit:
    """The versioned ``WorkspaceEdit`` of a planned edit."""
    lines = LineIndex(planned.before)
    start = lines.position(planned.start_byte, ls.encoding)
    end = lines.position(planned.end_byte, ls.encoding)
    edit = types.TextEdit(
        range=types.Range(
            start=types.Position(line=start[0], character=start[1]),
            end=types.Position(line=end[0], character=end[1]),
        ),
        new_text=planned.new_text,
    )
    document = types.OptionalVersionedTextDocumentIdentifier(
        uri=ls.projects.uri(project, planned.path), version=planned.version
    )
    return types.WorkspaceEdit(
        document_changes=[types.TextDocumentEdit(text_document=document, edits=[edit])]
    )


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

    def __init__(self, ls: RemoraLanguageServer, project: Project) -> None:
        self.ls = ls
        self.project = project

    async def apply(self, planned: PlannedEdit) -> Applied:
        """``workspace/applyEdit``; raises if the editor answers an error."""
        result = await self.ls.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(
                edit=workspace_edit(self.ls, self.project, planned),
                label=f"Remora: accept {planned.proposal_id}",
            )
        )
        return Applied(bool(result.applied), result.failure_reason)

    async def ask(self, question: Question) -> str | None:
        """Show an agent's question in the editor; the answer or None."""
        return await present(self.ls, question)

    def progress(self) -> ProgressSink | None:
        """Work-done progress, when the client shows it."""
        return LspProgress(self.ls) if supports_progress(self.ls) else None

    def document_text(self, path: str) -> bytes | None:
        """The open buffer of ``path``."""
        document = self.project.documents.get(path)
        return document.text if document is not None else None

    def notify(self, message: str) -> None:
        """A warning shown once per session."""
        self.ls.tell_user(message)


class ControlEditor(LspEditor):
    """For requests from the control socket: through the editor when it holds
    the file open, else written on disk atomically (re-indexed once the
    acceptance is recorded: ``remora_core.front.proposals``).
    """

    def __init__(self, ls: RemoraLanguageServer, project: Project) -> None:
        super().__init__(ls, project)
        assert project.root is not None
        self.disk = DiskEditor(project.root)

    async def apply(self, planned: PlannedEdit) -> Applied:
        """The editor's buffer if open, else the file."""
        if planned.path in self.project.documents:
            return await super().apply(planned)
        return await self.disk.apply(planned)
