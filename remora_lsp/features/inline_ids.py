"""The code action that writes missing ``# rm_…`` id comments (DESIGN §4).

Offered only when ``ids.inline_comments`` is on and the file lacks some: one
"Remora: add node id comments" action whose versioned edit inserts them all.
The server never writes them itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from remora_core.index.inline_ids import missing_id_comments
from remora_core.model import NodeStatus

if TYPE_CHECKING:
    from remora_core.project import Project

    from remora_lsp.server import RemoraLanguageServer


def inline_id_action(
    ls: RemoraLanguageServer, project: Project, path: str
) -> types.CodeAction | None:
    """The action adding every missing id comment of ``path``, if any."""
    if not project.config.ids.inline_comments:
        return None
    document = project.documents.get(path)
    file_node = project.graph.file_node(path)
    if document is None or file_node is None or file_node.status != NodeStatus.ACTIVE:
        return None
    insertions = missing_id_comments(
        document.text, project.graph.file_nodes(path), document.lines
    )
    if not insertions:
        return None
    lines = document.lines
    edits = []
    for offset, text in insertions:
        line, character = lines.position(offset, ls.encoding)
        at = types.Position(line=line, character=character)
        edits.append(types.TextEdit(range=types.Range(start=at, end=at), new_text=text))
    identifier = types.OptionalVersionedTextDocumentIdentifier(
        uri=ls.projects.uri(project, path), version=document.version
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
