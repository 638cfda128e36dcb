"""``textDocument/hover``: the node card of the definition under the cursor.

Hover answers on a definition's header (its decorators and ``def``/``class``
line), not anywhere in its body, so it does not drown the hovers of other
servers (types, docs) on ordinary code. The card ends with the node's latest
events. Markdown when the client announced it (``hover.contentFormat``), plain
text otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from remora_lsp.convert import card_markdown, needs_lines, to_range

if TYPE_CHECKING:
    from remora_lsp.server import RemoraLanguageServer

RECENT_EVENTS = 5


def _takes_markdown(ls: RemoraLanguageServer) -> bool:
    """Whether the client announced Markdown hovers (else plain text)."""
    document = ls.client_capabilities.text_document
    hover = document.hover if document else None
    formats = hover.content_format if hover else None
    return bool(formats and types.MarkupKind.Markdown in formats)


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
        text = card_markdown(card)
        kind = types.MarkupKind.Markdown
        if not _takes_markdown(ls):  # plain text: no emphasis marks, no ticks
            text = text.replace("**", "").replace("`", "")
            kind = types.MarkupKind.PlainText
        return types.Hover(
            contents=types.MarkupContent(kind=kind, value=text),
            range=to_range(node.name_span, ls.encoding, lines),
        )
