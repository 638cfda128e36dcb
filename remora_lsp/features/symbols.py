"""``textDocument/documentSymbol`` and ``workspace/symbol``.

The outline is hierarchical: ``range`` is the whole node including its
decorators, ``selectionRange`` its name, ``detail`` its id and agent status.
A client that did not announce ``hierarchicalDocumentSymbolSupport`` gets the
flat ``SymbolInformation`` list instead (the id in ``containerName``, as in
workspace symbols). Workspace symbols cover every active node of every
project, open or not.
"""

from __future__ import annotations

from functools import cache, partial
from typing import TYPE_CHECKING

from lsprotocol import types

from remora_lsp.convert import (
    document_symbols,
    needs_lines,
    symbol_information,
    symbol_information_json,
)
from remora_lsp.protocol import PlainJson

if TYPE_CHECKING:
    from remora_lsp.server import RemoraLanguageServer

WORKSPACE_SYMBOL_LIMIT = 500


def _hierarchical(ls: RemoraLanguageServer) -> bool:
    """Whether the client takes a nested outline (``DocumentSymbol``)."""
    document = ls.client_capabilities.text_document
    symbol = document.document_symbol if document else None
    return bool(symbol and symbol.hierarchical_document_symbol_support)


def register(server: RemoraLanguageServer) -> None:
    """Register the symbol handlers."""

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def document_symbol(
        ls: RemoraLanguageServer, params: types.DocumentSymbolParams
    ) -> PlainJson | list[types.SymbolInformation] | None:
        app, path = ls.projects.known(params.text_document.uri)
        await app.loaded()
        nodes = app.nodes.outline(path)
        if nodes is None and await app.indexed():
            nodes = app.nodes.outline(path)
        if nodes is None:
            return None
        spans = [s for n in nodes for s in (n.span, n.name_span)]
        lines = app.documents.lines(path) if needs_lines(spans, ls.encoding) else None
        if not _hierarchical(ls):
            uri = params.text_document.uri
            names = {n.id: n.qualified_name for n in nodes}
            return [
                symbol_information(
                    n,
                    uri,
                    ls.encoding,
                    lambda _path: lines,
                    names.get(n.parent_id) if n.parent_id else None,
                )
                for n in nodes
            ]
        return PlainJson(document_symbols(nodes, ls.encoding, lines))

    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(
        ls: RemoraLanguageServer, params: types.WorkspaceSymbolParams
    ) -> PlainJson | None:
        found = []
        for app in await ls.projects.all_loaded():
            await app.searchable()
            lines = cache(app.documents.lines)
            # Results crowd into few files: a path's URI is built once.
            uri = cache(partial(ls.projects.uri, app))
            nodes = app.nodes.search(params.query, WORKSPACE_SYMBOL_LIMIT)
            # Not loading a file per parent while the graph loads.
            parents = app.nodes.peek([n.parent_id for n in nodes if n.parent_id])
            for node in nodes:
                parent = parents.get(node.parent_id) if node.parent_id else None
                container = parent.qualified_name if parent else None
                found.append(
                    symbol_information_json(
                        node,
                        uri(node.file_path),
                        ls.encoding,
                        lines,
                        container,
                    )
                )
        return PlainJson(found[:WORKSPACE_SYMBOL_LIMIT]) if found else None
