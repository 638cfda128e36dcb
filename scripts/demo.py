"""The README's main job: a real agent run through a real LSP session.

Starts ``remora-lsp`` over stdio (the console script next to this Python), opens
a project as its workspace folder (``examples/inventory`` by default), waits for
start-up indexing to finish, prints every file's outline — each node with its id
and agent status, as ``textDocument/documentSymbol`` reports them — and the
hover card of the best-connected function. Then it asks that function's agent
for a docstring (``remora.agent.chat``) on the project's configured model — by
default the embedded local model of the ``local`` extra — follows the run's
progress and events, and prints the proposal's diff, what was checked about it
(the docstring guard: only docstrings may change; the project's tests, waited
for up to two minutes) and the edit its "Accept" code action would make — or,
when the agent changed the code twice and wrote no docstring that could be
taken alone, the refusal. On the embedded model the agent writes under a
grammar that keeps the code, so only the docstring is its own. Nothing is
applied: the project's files stay as they are.

Usage: ``.venv/bin/python scripts/demo.py [PROJECT_DIR] [--no-agent]``. Run it
twice: the ids stay the same, because ``.remora/remora.db`` remembers them.
"""

from __future__ import annotations

import asyncio
import contextlib
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
        self.indexing: object = None
        self.messages: list[str] = []
        self.events: list[dict] = []
        self.progress: list[str] = []
        self.changed = asyncio.Event()

        @self.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create_progress(params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @self.feature(types.PROGRESS)
        def progress(params: types.ProgressParams) -> None:
            value = params.value if isinstance(params.value, dict) else {}
            if value.get("title") == "Remora: indexing":
                self.indexing = params.token
            if value.get("kind") == "end" and params.token == self.indexing:
                self.summary = value.get("message") or ""
                self.indexed.set()
            elif params.token != self.indexing:
                text = value.get("title") or value.get("message") or ""
                self.progress.append(f"{value.get('kind')}: {text}")
                print(f"  progress {value.get('kind')}: {text}", flush=True)

        @self.feature("remora/event")
        def remora_event(params) -> None:
            event = _plain(params)
            self.events.append(event)
            self.changed.set()

        @self.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(params: types.PublishDiagnosticsParams) -> None:
            return None  # the proposal is fetched with remora.proposal.diff

        @self.feature(types.WINDOW_LOG_MESSAGE)
        def log_message(params: types.LogMessageParams) -> None:
            self.messages.append(params.message)

        @self.feature(types.WINDOW_SHOW_MESSAGE)
        def show_message(params: types.ShowMessageParams) -> None:
            self.messages.append(params.message)


def _plain(value):
    """JSON-like data from what pygls gives for custom messages (named tuples)."""
    if hasattr(value, "_asdict"):
        return {key: _plain(item) for key, item in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def print_outline(symbols, depth: int = 1) -> None:
    """One line per node: kind, name, id and agent status, indented by nesting."""
    for symbol in symbols or []:
        kind = types.SymbolKind(symbol.kind).name.lower()
        node_id, _, status = (symbol.detail or "").partition(" · ")
        line = symbol.range.start.line + 1
        label = f"{'  ' * depth}{kind} {symbol.name}"
        print(f"{label:<40} {node_id:<12} {status:<8} line {line}")
        print_outline(symbol.children, depth + 1)


async def ask_for_docstring(client: DemoClient, uri: str, symbol) -> None:
    """Ask a function's agent for a docstring; print the run and its proposal."""
    node_id = (symbol.detail or "").partition(" · ")[0]
    request = "Add a docstring that says what this function does."
    print(f"Asking the agent of {symbol.name} ({node_id}): {request!r}", flush=True)
    started = _plain(
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="remora.agent.chat",
                arguments=[{"node_id": node_id, "message": request}],
            )
        )
    )
    run_id = started["run_id"]
    ended = await _wait_for_end(client, run_id)
    for event in client.events:
        if event.get("run_id") == run_id and event["type"] in SHOWN:
            print(f"  event {event['type']}: {SHOWN[event['type']](event)}")
    if ended is None:
        print("The run did not end within 10 minutes.")
        return
    proposed = [
        e
        for e in client.events
        if e["type"] == "rewrite_proposed" and e.get("run_id") == run_id
    ]
    if not proposed:
        print(f"No proposal: the run ended with {ended['type']}.")
        return
    proposal_id = proposed[-1]["proposal_id"]
    diff = await _diff_when_checked(client, proposal_id)
    print(f"\nProposal {proposal_id} ({diff['status']}):\n{diff['diff']}")
    print("What was checked:")
    for check in diff.get("checks") or []:
        print(f"  {_mark(check)} {check['name']}: {check['detail']}")
    if not diff.get("checks"):
        print("  nothing")
    first, last = symbol.range.start.line + 1, symbol.range.end.line + 1
    path = Path(uri.removeprefix("file://")).name
    print(
        f"Accepting it (the 'Accept' code action on line "
        f"{symbol.selection_range.start.line + 1}, or remora.proposal.accept) would "
        f"replace lines {first}-{last} of {path} "
        f"({len(diff['old_source'].splitlines())} lines) with the proposed "
        f"{len(diff['new_source'].splitlines())} lines, as "
        "one edit your editor can undo. Nothing was applied."
    )


SHOWN = {
    "model_response": lambda e: f"usage {e['usage']}",
    "tool_called": lambda e: e["tool"],
    "tool_result": lambda e: f"{'ok' if e['ok'] else 'refused'}: {e['summary']}",
    "rewrite_proposed": lambda e: e["proposal_id"],
    "agent_completed": lambda e: e["result"] or "done",
    "agent_failed": lambda e: e["error"],
}


def _mark(check: dict) -> str:
    if check.get("ok") is True:
        return "✓"
    return "✗" if check.get("ok") is False else "–"


async def _diff_when_checked(client: DemoClient, proposal_id: str) -> dict:
    """The proposal's diff result once its tests ran (at most two minutes)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 120
    while True:
        diff = _plain(
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command="remora.proposal.diff",
                    arguments=[{"proposal_id": proposal_id}],
                )
            )
        )
        running = [c for c in diff.get("checks") or [] if c["status"] == "running"]
        if not running or loop.time() > deadline:
            return diff
        print(f"  tests: {running[0]['detail']}", flush=True)
        client.changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(client.changed.wait(), timeout=5)


async def _wait_for_end(client: DemoClient, run_id: str) -> dict | None:
    ends = ("agent_completed", "agent_failed", "agent_cancelled")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 600
    while loop.time() < deadline:
        for event in client.events:
            if event.get("run_id") == run_id and event["type"] in ends:
                return event
        client.changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(client.changed.wait(), timeout=1)
    return None


async def main(project: Path, ask_agent: bool = True) -> int:
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
    chosen = None
    if cards:
        _, name, text = max(cards)
        chosen = next((u, s) for u, s in functions if s.name == name)
        print(f"Hover on {name}:")
        for line in text.splitlines():
            if line.strip():
                print(f"  {line.replace('**', '').replace('`', '')}")
        print()
    if chosen is not None and ask_agent:
        await ask_for_docstring(client, *chosen)
    for message in client.messages:
        print(f"server said: {message}")

    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return 0


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--no-agent"]
    target = Path(arguments[0]) if arguments else REPO / "examples" / "inventory"
    sys.exit(asyncio.run(main(target.resolve(), "--no-agent" not in sys.argv)))
