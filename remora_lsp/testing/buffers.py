"""Documents as an editor holds them: open, edit, and apply the server's edits.

A :class:`Buffer` is one open document: its edits go to the server as
incremental ``didChange`` (positions in the client's encoding: UTF-8 for
Neovim, UTF-16 for VS Code) and to ``text``. :func:`apply_workspace_edits`
makes the client answer ``workspace/applyEdit`` as an editor does: the edit
lands in the open buffer (a file not yet open is opened first, like VS Code),
then ``didChange`` goes to the server; a ``CreateFile`` creates the empty file
on disk (never over an existing one) and its text arrives as an edit of it.
Nothing is saved to disk, as in an editor before the person saves.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from lsprotocol.converters import get_converter

if TYPE_CHECKING:
    from pytest_lsp import LanguageClient

    from remora_lsp.testing.client import RemoraClient

log = logging.getLogger(__name__)


def open_file(client: RemoraClient, relative: str, text: str | None = None) -> str:
    """Send ``didOpen`` for a workspace file (its disk text unless given)."""
    path = client.root / relative
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


def node_id_of(symbol) -> str:
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

    def __init__(self, client: RemoraClient, relative: str) -> None:
        self.client = client
        self.text = (client.root / relative).read_text(encoding="utf-8")
        self.uri = open_file(client, relative, self.text)
        self.version = 1
        buffers = getattr(client, "buffers", None)
        if isinstance(buffers, dict):  # a RemoraClient: its applyEdit finds us
            buffers[self.uri] = self

    def position(
        self, needle: str, occurrence: int = 0, after: bool = False
    ) -> tuple[int, int]:
        """Editor ``(line, character)`` of ``needle`` (or just after it)."""
        index = -1
        for _ in range(occurrence + 1):
            index = self.text.index(needle, index + 1)
        if after:
            index += len(needle)
        line = self.text.count("\n", 0, index)
        prefix = self.text[self.text.rfind("\n", 0, index) + 1 : index]
        editor = self.client.editor
        if editor == "neovim":
            return line, len(prefix.encode("utf-8"))
        return line, len(prefix.encode("utf-16-le")) // 2

    def replace(self, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
        """Replace the range ``start``..``end`` (editor positions) with ``text``."""
        editor = self.client.editor
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


def apply_edits(buffer: Buffer, edit: dict) -> None:
    """Apply a WorkspaceEdit (JSON) the way an editor does: buffer, then didChange."""
    for change in edit["documentChanges"]:
        version = change["textDocument"]["version"]
        assert version is None or version == buffer.version
        # Every edit's range is in the text before any of them (LSP): applied
        # last first, each leaves the ranges before it where they were. Two
        # inserts at one place appear in the order of the array (LSP; as
        # Neovim and VS Code do): the later one goes in first.
        ordered = sorted(
            enumerate(change["edits"]),
            key=lambda pair: (
                pair[1]["range"]["start"]["line"],
                pair[1]["range"]["start"]["character"],
                pair[0],
            ),
            reverse=True,
        )
        for _index, text_edit in ordered:
            start, end = text_edit["range"]["start"], text_edit["range"]["end"]
            buffer.replace(
                (start["line"], start["character"]),
                (end["line"], end["character"]),
                text_edit["newText"],
            )


def _refused_creation(changes: list[dict]) -> str | None:
    """Why a ``CreateFile`` of the edit cannot be applied (the file exists and
    may not be overwritten), or None.
    """
    for change in changes:
        if change.get("kind") != "create":
            continue
        options = change.get("options") or {}
        path = Path(unquote(urlparse(change["uri"]).path))
        if path.exists() and not (
            options.get("overwrite") or options.get("ignoreIfExists")
        ):
            return f"{path.name} exists already"
    return None


def _create(document_uri: str) -> None:
    """Create an empty file, as an editor does for ``CreateFile`` (its text
    follows as an edit of the new, empty document).
    """
    path = Path(unquote(urlparse(document_uri).path))
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_bytes(b"")


def buffer_for(client: Any, document_uri: str) -> Buffer:
    """The open buffer of ``document_uri``, opening the file if needed."""
    found = client.buffers.get(document_uri)
    if found is None:
        path = Path(unquote(urlparse(document_uri).path))
        found = Buffer(client, str(path.relative_to(client.root)))
    return found


def apply_workspace_edits(client: Any) -> list[dict]:
    """Answer ``workspace/applyEdit`` like an editor; the edits received (JSON).

    Every document change must name the version the buffer has (an editor
    refuses an edit made for another version); the answer says so.
    """
    received: list[dict] = []
    converter = get_converter()

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams):
        edit = converter.unstructure(params.edit)
        received.append(edit)
        changes = edit.get("documentChanges") or []
        refused = _refused_creation(changes)
        if refused is not None:  # checked first: an editor applies all or nothing
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason=refused)
        for change in changes:
            if change.get("kind") == "create":
                _create(change["uri"])
                continue
            buffer = buffer_for(client, change["textDocument"]["uri"])
            expected = change["textDocument"].get("version")
            if expected is not None and expected != buffer.version:
                reason = f"the buffer is at version {buffer.version}, not {expected}"
                return types.ApplyWorkspaceEditResult(
                    applied=False, failure_reason=reason
                )
            apply_edits(buffer, {"documentChanges": [change]})
        return types.ApplyWorkspaceEditResult(applied=True)

    return received
