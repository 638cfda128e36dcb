"""``textDocument/hover``: the node card of the definition under the cursor.

Hover answers on a definition's header (its decorators and ``def``/``class``
line), not anywhere in its body, so it does not drown the hovers of other
servers (types, docs) on ordinary code. The card ends with the node's latest
events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from remora_lsp.convert import card_markdown, needs_lines, to_range

if TYPE_CHECKING:
    from remora_lsp.server import RemoraLanguageServer

RECENT_EVENTS = 5


def register(server: RemoraLanguageServer) -> None:
    """Register the hover handler."""

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(
        ls: RemoraLanguageServer, params: types.HoverParams
    ) -> types.Hover | None:
        app, path = ls.projects.known(params.text_document.uri)
        await app.loaded()
        position = params.position
        node = app.nodes.at(path, position.line, position.character, ls.encoding)
        on_header = node is not None and (
            node.span.start_line <= position.line <= node.name_span.end_line
        )
        if node is None or not on_header:
            return None
        needed = needs_lines([node.name_span], ls.encoding)
        lines = app.documents.lines(path) if needed else None
        card = await app.nodes.card(node, RECENT_EVENTS)
        return types.Hover(
            contents=types.MarkupContent(
                kind=types.MarkupKind.Markdown,
                value=card_markdown(card),
            ),
            range=to_range(node.name_span, ls.encoding, lines),
        )
