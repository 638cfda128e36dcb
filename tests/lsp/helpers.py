"""Helpers for end-to-end tests: waiting on the server, opening and editing files."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

TIMEOUT_S = 30.0


async def eventually(check, timeout: float = TIMEOUT_S, interval: float = 0.05):
    """Wait until ``check()`` (sync or async) returns something truthy."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return result
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {check}")
        await asyncio.sleep(interval)


def indexing_runs(client: LanguageClient) -> list[list[Any]]:
    """Progress reports of every indexing run so far (begin first)."""
    runs = []
    for reports in client.progress_reports.values():
        if reports and getattr(reports[0], "title", "") == "Remora: indexing":
            runs.append(reports)
    return runs


async def wait_indexed(client: LanguageClient, runs: int = 1) -> list[Any]:
    """Wait until ``runs`` indexing runs have ended; return the last one."""

    def done():
        finished = [
            r
            for r in indexing_runs(client)
            if isinstance(r[-1], types.WorkDoneProgressEnd)
        ]
        return finished if len(finished) >= runs else None

    return (await eventually(done))[-1]


def uri(client: LanguageClient, relative: str) -> str:
    """URI of a file of the test workspace."""
    return (client.root / relative).as_uri()  # type: ignore[attr-defined]


def open_file(client: LanguageClient, relative: str, text: str | None = None) -> str:
    """Send ``didOpen`` for a workspace file (its disk text unless given)."""
    path: Path = client.root / relative  # type: ignore[attr-defined]
    document_uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=document_uri,
                language_id="python",
                version=1,
                text=text if text is not None else path.read_text(encoding="utf-8"),
            )
        )
    )
    return document_uri


def edit(
    client: LanguageClient,
    document_uri: str,
    version: int,
    start: tuple[int, int],
    end: tuple[int, int],
    text: str,
) -> None:
    """Send one incremental ``didChange``."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=document_uri, version=version
            ),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=start[0], character=start[1]),
                        end=types.Position(line=end[0], character=end[1]),
                    ),
                    text=text,
                )
            ],
        )
    )


async def symbols(client: LanguageClient, document_uri: str):
    """The document's outline."""
    return await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(
            text_document=types.TextDocumentIdentifier(uri=document_uri)
        )
    )


def flatten(tree, prefix: str = "") -> dict[str, Any]:
    """``{qualified name: DocumentSymbol}`` of a hierarchical outline."""
    found: dict[str, Any] = {}
    for symbol in tree or []:
        name = f"{prefix}{symbol.name}"
        found.setdefault(name, symbol)
        found.update(flatten(symbol.children, name + "."))
    return found


def node_id(symbol) -> str:
    """The node id shown in a symbol's detail."""
    return symbol.detail.split(" ")[0]


def to_index(text: str, line: int, character: int, editor: str) -> int:
    """String index of an editor position (Neovim counts UTF-8, VS Code UTF-16)."""
    lines = text.splitlines(keepends=True)
    start = sum(len(x) for x in lines[:line])
    content = lines[line].rstrip("\r\n") if line < len(lines) else ""
    codec = "utf-8" if editor == "neovim" else "utf-16-le"
    width = 1 if editor == "neovim" else 2
    encoded = content.encode(codec)[: character * width]
    return start + len(encoded.decode(codec, errors="ignore"))


class Buffer:
    """A document as the editor holds it: edits go to the server and to ``text``."""

    def __init__(self, client: LanguageClient, relative: str) -> None:
        self.client = client
        self.text = (client.root / relative).read_text(encoding="utf-8")  # type: ignore[attr-defined]
        self.uri = open_file(client, relative, self.text)
        self.version = 1

    def position(self, needle: str, occurrence: int = 0, after: bool = False):
        """Editor ``(line, character)`` of ``needle`` (or just after it)."""
        index = -1
        for _ in range(occurrence + 1):
            index = self.text.index(needle, index + 1)
        if after:
            index += len(needle)
        line = self.text.count("\n", 0, index)
        prefix = self.text[self.text.rfind("\n", 0, index) + 1 : index]
        editor = self.client.editor  # type: ignore[attr-defined]
        if editor == "neovim":
            return line, len(prefix.encode("utf-8"))
        return line, len(prefix.encode("utf-16-le")) // 2

    def replace(self, start, end, text: str) -> None:
        """Replace the range ``start``..``end`` (editor positions) with ``text``."""
        editor = self.client.editor  # type: ignore[attr-defined]
        a = to_index(self.text, *start, editor)
        b = to_index(self.text, *end, editor)
        self.version += 1
        edit(self.client, self.uri, self.version, start, end, text)
        self.text = self.text[:a] + text + self.text[b:]

    def replace_text(self, old: str, new: str, occurrence: int = 0) -> None:
        """Replace one occurrence of ``old``."""
        self.replace(
            self.position(old, occurrence), self.position(old, occurrence, True), new
        )

    def insert(self, before: str, text: str) -> None:
        """Insert ``text`` right before ``before``."""
        at = self.position(before)
        self.replace(at, at, text)

    async def outline(self) -> dict[str, Any]:
        """``{qualified name: symbol}`` of the current version."""
        return flatten(await symbols(self.client, self.uri))


async def raw_request(client: LanguageClient, method: str, params: Any) -> Any:
    """Send a request exactly as given, bypassing the client's type checks."""
    import uuid
    from concurrent.futures import Future

    msg_id = str(uuid.uuid4())
    future: Future[Any] = Future()
    client.protocol._request_futures[msg_id] = future
    client.protocol._send_data(
        {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
    )
    return await asyncio.wrap_future(future)
