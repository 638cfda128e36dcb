"""Text document synchronisation: open, incremental change, save, close.

The engine keeps the open buffers (``remora_core.index.documents``); these handlers
only route each notification to the right project. Documents that are not
Python (by language id or file name) are ignored.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsprotocol import types
from remora_core.index.documents import TextChange

from remora_lsp.features.proposals import publish

if TYPE_CHECKING:
    from remora_core.project import Project

    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)

PYTHON_SUFFIXES = (".py", ".pyi")


def _change(change: types.TextDocumentContentChangeEvent) -> TextChange:
    if isinstance(change, types.TextDocumentContentChangePartial):
        start, end = change.range.start, change.range.end
        return TextChange(
            change.text, (start.line, start.character), (end.line, end.character)
        )
    return TextChange(change.text)


def _show_proposals(ls: RemoraLanguageServer, project: Project, path: str) -> None:
    """Keep pending proposals' diagnostics on their (possibly moved) lines."""
    app = ls.app(project)
    if app.started and app.proposals.pending(path=path):
        publish(ls, project, path)


def register(server: RemoraLanguageServer) -> None:
    """Register the synchronisation handlers."""

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(
        ls: RemoraLanguageServer, params: types.DidOpenTextDocumentParams
    ) -> None:
        document = params.text_document
        if document.language_id != "python" and not document.uri.endswith(
            PYTHON_SUFFIXES
        ):
            return
        project, path = ls.projects.locate(document.uri)
        project.open_document(path, document.version, document.text)
        _show_proposals(ls, project, path)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(
        ls: RemoraLanguageServer, params: types.DidChangeTextDocumentParams
    ) -> None:
        project, path = ls.projects.locate(params.text_document.uri)
        if path not in project.documents:
            log.warning(
                "ignoring a change to %s: it was never opened",
                params.text_document.uri,
            )
            return
        project.change_document(
            path,
            params.text_document.version,
            [_change(change) for change in params.content_changes],
            ls.encoding,
        )
        _show_proposals(ls, project, path)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(
        ls: RemoraLanguageServer, params: types.DidSaveTextDocumentParams
    ) -> None:
        project, path = ls.projects.locate(params.text_document.uri)
        project.save_document(path)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(
        ls: RemoraLanguageServer, params: types.DidCloseTextDocumentParams
    ) -> None:
        project, path = ls.projects.locate(params.text_document.uri)
        project.close_document(path)
