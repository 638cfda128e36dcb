"""The README's main job: index a project through a real LSP session.

Starts ``remora-lsp`` over stdio (the console script next to this Python), opens
a project as its workspace folder (``examples/inventory`` by default), waits for
start-up indexing to finish, then prints every file's outline — each node with
its id and agent status, as ``textDocument/documentSymbol`` reports them — and
the hover card of one function (callers and callees).

Usage: ``.venv/bin/python scripts/demo.py [PROJECT_DIR]``. Run it twice: the ids
stay the same, because the project's ``.remora/remora.db`` remembers them.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

REPO = Path(__file__).resolve().parent.parent
SERVER = Path(sys.executable).with_name("remora-lsp")


class DemoClient(LanguageClient):
    """A minimal editor: it accepts progress and remembers when indexing ends."""

    def __init__(self) -> None:
        super().__init__("remora-demo", "0.1.0")
        self.indexed = asyncio.Event()
        self.summary = ""
        self.messages: list[str] = []

        @self.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create_progress(params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @self.feature(types.PROGRESS)
        def progress(params: types.ProgressParams) -> None:
            value = params.value if isinstance(params.value, dict) else {}
            if value.get("kind") == "end":
                self.summary = value.get("message") or ""
                self.indexed.set()

        @self.feature(types.WINDOW_LOG_MESSAGE)
        def log_message(params: types.LogMessageParams) -> None:
            self.messages.append(params.message)

        @self.feature(types.WINDOW_SHOW_MESSAGE)
        def show_message(params: types.ShowMessageParams) -> None:
            self.messages.append(params.message)


def print_outline(symbols, depth: int = 1) -> None:
    """One line per node: kind, name, id and agent status, indented by nesting."""
    for symbol in symbols or []:
        kind = types.SymbolKind(symbol.kind).name.lower()
        node_id, _, status = (symbol.detail or "").partition(" · ")
        line = symbol.range.start.line + 1
        label = f"{'  ' * depth}{kind} {symbol.name}"
        print(f"{label:<40} {node_id:<12} {status:<8} line {line}")
        print_outline(symbol.children, depth + 1)


async def main(project: Path) -> int:
    """Run the session; return the process exit code."""
    if not SERVER.exists():
        print(f"remora-lsp not found next to {sys.executable}; install the project")
        return 1
    client = DemoClient()
    await client.start_io(str(SERVER))
    started = time.perf_counter()
    await client.initialize_async(
        types.InitializeParams(
            process_id=None,
            root_uri=project.as_uri(),
            workspace_folders=[
                types.WorkspaceFolder(uri=project.as_uri(), name=project.name)
            ],
            capabilities=types.ClientCapabilities(
                window=types.WindowClientCapabilities(work_done_progress=True),
                text_document=types.TextDocumentClientCapabilities(
                    document_symbol=types.DocumentSymbolClientCapabilities(
                        hierarchical_document_symbol_support=True
                    )
                ),
            ),
        )
    )
    client.initialized(types.InitializedParams())
    await asyncio.wait_for(client.indexed.wait(), timeout=120)
    print(
        f"Remora indexed {project} ({client.summary}; session up in "
        f"{time.perf_counter() - started:.1f} s)\n"
    )

    files = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=""))
    uris = sorted(
        {s.location.uri for s in files or [] if s.kind == types.SymbolKind.File}
    )
    functions = []
    for uri in uris:
        relative = Path(uri.removeprefix("file://")).relative_to(project)
        file_id = next(
            s.container_name
            for s in files
            if s.location.uri == uri and s.kind == types.SymbolKind.File
        )
        print(f"{relative}  {file_id}")
        outline = await client.text_document_document_symbol_async(
            types.DocumentSymbolParams(
                text_document=types.TextDocumentIdentifier(uri=uri)
            )
        )
        print_outline(outline)
        functions += [
            (uri, s) for s in outline or [] if s.kind == types.SymbolKind.Function
        ]
        print()

    # Show the hover card of the best-connected function (most callers+callees).
    cards = []
    for uri, symbol in functions:
        card = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=symbol.selection_range.start,
            )
        )
        if card is not None:
            text = card.contents.value
            cards.append((text.count("rm_"), symbol.name, text))
    if cards:
        _, name, text = max(cards)
        print(f"Hover on {name}:")
        for line in text.splitlines():
            if line.strip():
                print(f"  {line.replace('**', '').replace('`', '')}")
        print()
    for message in client.messages:
        print(f"server said: {message}")

    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return 0


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "examples" / "inventory"
    sys.exit(asyncio.run(main(target.resolve())))
