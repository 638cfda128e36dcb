"""The code action that writes missing ``# rm_…`` id comments (DESIGN §4).

Offered only when ``ids.inline_comments`` is on and the file lacks some: one
"Remora: add node id comments" action whose versioned edit inserts them all.
The server never writes them itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp

    from remora_lsp.server import RemoraLanguageServer


def inline_id_action(
    ls: RemoraLanguageServer, app: RemoraApp, path: str
) -> types.CodeAction | None:
    """The action adding every missing id comment of ``path``, if any."""
    missing = app.documents.missing_ids(path)
    document = app.documents.get(path)
    if missing is None or document is None:
        return None
    version, insertions = missing
    lines = document.lines
    edits = []
    for offset, text in insertions:
        line, character = lines.position(offset, ls.encoding)
        at = types.Position(line=line, character=character)
        edits.append(types.TextEdit(range=types.Range(start=at, end=at), new_text=text))
    identifier = types.OptionalVersionedTextDocumentIdentifier(
        uri=ls.projects.uri(app, path), version=version
    )
    count = len(insertions)
    return types.CodeAction(
        title=f"Remora: add node id comments ({count})",
        kind=types.CodeActionKind.RefactorRewrite,
        edit=types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(text_document=identifier, edits=edits)
            ]
        ),
    )
