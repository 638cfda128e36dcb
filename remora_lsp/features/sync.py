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

from remora_lsp.diagnostics import show_proposals

if TYPE_CHECKING:
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
        app, path = ls.projects.locate(document.uri)
        app.documents.open(path, document.version, document.text)
        show_proposals(ls, app, path)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(
        ls: RemoraLanguageServer, params: types.DidChangeTextDocumentParams
    ) -> None:
        app, path = ls.projects.locate(params.text_document.uri)
        if app.documents.get(path) is None:
            log.warning(
                "ignoring a change to %s: it was never opened",
                params.text_document.uri,
            )
            return
        app.documents.change(
            path,
            params.text_document.version,
            [_change(change) for change in params.content_changes],
            ls.encoding,
        )
        show_proposals(ls, app, path)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(
        ls: RemoraLanguageServer, params: types.DidSaveTextDocumentParams
    ) -> None:
        app, path = ls.projects.locate(params.text_document.uri)
        app.documents.save(path)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(
        ls: RemoraLanguageServer, params: types.DidCloseTextDocumentParams
    ) -> None:
        app, path = ls.projects.locate(params.text_document.uri)
        app.documents.close(path)
