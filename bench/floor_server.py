"""The least a pygls language server does before its indexing could end.

Imports pygls (and with it ``lsprotocol.types``), answers ``initialize`` and,
on ``initialized``, creates a work-done progress and reports its ``begin``
and ``end`` at once, with the summary shape ``index_stdlib.py`` expects. It
indexes nothing. ``index_stdlib.py`` times it like a warm start of remora-lsp
(process spawn to the progress ``end``): the floor any Python server built on
pygls pays on this machine, next to the ``ast.parse`` peer of the same run.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("remora-bench-floor", "0")


@server.feature(types.INITIALIZED)
async def initialized(ls: LanguageServer, params: types.InitializedParams) -> None:
    """Report an indexing that did nothing."""
    token = "floor"
    await ls.work_done_progress.create_async(token)
    ls.work_done_progress.begin(
        token, types.WorkDoneProgressBegin(title="Remora: indexing")
    )
    ls.work_done_progress.end(
        token, types.WorkDoneProgressEnd(message="0 files, 0 parsed, 0 nodes in 0.0 s")
    )


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def symbols(
    ls: LanguageServer, params: types.DocumentSymbolParams
) -> list[types.DocumentSymbol]:
    """One symbol, so that a client waiting for an outline gets one."""
    here = types.Range(types.Position(0, 0), types.Position(0, 1))
    return [
        types.DocumentSymbol(
            name="floor",
            kind=types.SymbolKind.Function,
            range=here,
            selection_range=here,
        )
    ]


if __name__ == "__main__":
    server.start_io()
