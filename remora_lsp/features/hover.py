"""``textDocument/hover``: the node card of the definition under the cursor.

Hover answers on a definition's header (its decorators and ``def``/``class``
line), not anywhere in its body, so it does not drown the hovers of other
servers (types, docs) on ordinary code. The card ends with the node's latest
events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from remora_core.history import last_answer

from remora_lsp.convert import card_markdown, needs_lines, to_range
from remora_lsp.projects import loaded

if TYPE_CHECKING:
    from remora_lsp.server import RemoraLanguageServer

RECENT_EVENTS = 5


def register(server: RemoraLanguageServer) -> None:
    """Register the hover handler."""

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(
        ls: RemoraLanguageServer, params: types.HoverParams
    ) -> types.Hover | None:
        project, path = ls.projects.known(params.text_document.uri)
        await loaded(project)
        position = params.position
        node = project.node_at(path, position.line, position.character, ls.encoding)
        on_header = node is not None and (
            node.span.start_line <= position.line <= node.name_span.end_line
        )
        if node is None or not on_header:
            return None
        needed = needs_lines([node.name_span], ls.encoding)
        lines = project.line_index(path) if needed else None
        card = project.card(node)
        recent = await project.swarm.events.for_node(node.id, RECENT_EVENTS)
        card["recent_events"] = [stored.to_json() for stored in recent]
        card["last_answer"] = await last_answer(project.swarm.events, node.id)
        return types.Hover(
            contents=types.MarkupContent(
                kind=types.MarkupKind.Markdown,
                value=card_markdown(card),
            ),
            range=to_range(node.name_span, ls.encoding, lines),
        )
