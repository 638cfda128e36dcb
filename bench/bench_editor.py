"""The editor side of a benchmark's LSP session: buffers, edits, saving.

``bench/agent_tasks.py`` judges set ``c`` on what lands in files, so its client
must do what an editor does when the server sends ``workspace/applyEdit``:

- a ``CreateFile`` creates the file on disk (parent folders too; an existing
  file is refused unless ``overwrite`` or ``ignoreIfExists`` says otherwise),
  as VS Code does;
- a ``TextDocumentEdit`` lands in the document's buffer — a file not open yet
  is opened first (``didOpen`` with its text on disk), like VS Code — provided
  the version the edit names is the buffer's (an editor refuses an edit made
  for another version); the buffer's new text goes to the server as
  ``didChange``;
- ``RenameFile`` / ``DeleteFile`` are refused (nothing in the benchmark asks
  for them; a refusal is a clear answer the server must report).

An edit is all or nothing (``failureHandling: abort`` checked before any
change): every operation is checked first, then applied. Nothing reaches the
disk but created files until :meth:`Editor.save_all`, as in an editor before
the person saves.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lspclient import LspClient, path_uri, vscode_capabilities


def editor_capabilities() -> dict[str, Any]:
    """VS Code's capabilities plus taking edits from the server."""
    capabilities = vscode_capabilities()
    capabilities["workspace"]["applyEdit"] = True
    capabilities["workspace"]["workspaceEdit"] = {
        "documentChanges": True,
        "resourceOperations": ["create", "rename", "delete"],
        "failureHandling": "abort",
    }
    return capabilities


def uri_path(uri: str) -> Path:
    """The path of a ``file://`` URI."""
    return Path(unquote(urlparse(uri).path))


@dataclass
class Buffer:
    """One open document."""

    uri: str
    text: str
    version: int = 1
    dirty: bool = False


def offset(text: str, line: int, character: int) -> int:
    """String index of an LSP position (UTF-16 code units, as announced)."""
    lines = text.splitlines(keepends=True)
    start = sum(len(x) for x in lines[:line])
    content = lines[line].rstrip("\r\n") if line < len(lines) else ""
    encoded = content.encode("utf-16-le")[: character * 2]
    return start + len(encoded.decode("utf-16-le", errors="ignore"))


def edited(text: str, edits: list[dict[str, Any]]) -> str:
    """``text`` with LSP text edits applied (ranges in the original text;
    inserts at one position appear in the order given, as LSP says).
    """
    spans = []
    for index, edit in enumerate(edits):
        start, end = edit["range"]["start"], edit["range"]["end"]
        spans.append(
            (
                offset(text, start["line"], start["character"]),
                offset(text, end["line"], end["character"]),
                index,
                edit["newText"],
            )
        )
    # Last first: each edit leaves the text before it where it was, and of
    # two inserts at one place the earlier one, applied second, comes first.
    for begin, end, _, new in sorted(spans, reverse=True):
        text = text[:begin] + new + text[end:]
    return text


class Editor:
    """What the benchmark's client holds open, and how it takes edits."""

    def __init__(self, client: LspClient) -> None:
        self.client = client
        self.buffers: dict[str, Buffer] = {}
        self.received: list[dict[str, Any]] = []
        """Every ``WorkspaceEdit`` the server sent."""
        self.created: list[Path] = []
        """Files a ``CreateFile`` made."""
        client.handlers["workspace/applyEdit"] = self.apply_edit

    async def open(self, path: Path) -> Buffer:
        """The buffer of ``path``, opened (``didOpen``) from disk if needed."""
        uri = path_uri(path)
        found = self.buffers.get(uri)
        if found is None:
            text = path.read_text(encoding="utf-8") if path.exists() else ""
            found = self.buffers[uri] = Buffer(uri, text)
            await self.client.open_document(uri, text, found.version)
        return found

    async def apply_edit(self, params: Any) -> dict[str, Any]:
        """Answer ``workspace/applyEdit`` like an editor (see the module doc)."""
        edit = (params or {}).get("edit") or {}
        self.received.append(edit)
        if edit.get("changes"):
            return _refused(
                "unversioned edits (changes) are not taken: send documentChanges"
            )
        operations = edit.get("documentChanges") or []
        problem = self._check(operations)
        if problem:
            return _refused(problem)
        for operation in operations:
            kind = operation.get("kind")
            if kind == "create":
                path = uri_path(operation["uri"])
                path.parent.mkdir(parents=True, exist_ok=True)
                if not path.exists() or (operation.get("options") or {}).get(
                    "overwrite"
                ):
                    path.write_text("", encoding="utf-8")
                    self.created.append(path)
                continue
            document = operation["textDocument"]
            buffer = await self.open(uri_path(document["uri"]))
            buffer.text = edited(buffer.text, operation["edits"])
            buffer.version += 1
            buffer.dirty = True
            await self.client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": buffer.uri, "version": buffer.version},
                    "contentChanges": [{"text": buffer.text}],
                },
            )
        return {"applied": True}

    def _check(self, operations: list[dict[str, Any]]) -> str:
        """Why the edit cannot be applied as a whole ('' if it can)."""
        creating: set[str] = set()
        for operation in operations:
            kind = operation.get("kind")
            if kind in ("rename", "delete"):
                return f"this editor takes no {kind} operations"
            if kind == "create":
                path = uri_path(operation["uri"])
                options = operation.get("options") or {}
                exists = path.exists() or operation["uri"] in self.buffers
                if exists and not (
                    options.get("overwrite") or options.get("ignoreIfExists")
                ):
                    return f"{path.name} exists already"
                creating.add(operation["uri"])
                continue
            document = operation.get("textDocument") or {}
            uri = document.get("uri", "")
            path = uri_path(uri)
            if uri not in creating and uri not in self.buffers and not path.exists():
                return f"{path.name} does not exist"
            expected = document.get("version")
            buffer = self.buffers.get(uri)
            current = buffer.version if buffer else None
            if expected is not None and expected != current:
                return f"{path.name} is at version {current}, not {expected}"
        return ""

    async def save_all(self) -> list[Path]:
        """Write every changed buffer to disk (``didSave``); the files saved."""
        saved = []
        for buffer in self.buffers.values():
            if not buffer.dirty:
                continue
            path = uri_path(buffer.uri)
            path.write_text(buffer.text, encoding="utf-8")
            buffer.dirty = False
            saved.append(path)
            await self.client.notify(
                "textDocument/didSave", {"textDocument": {"uri": buffer.uri}}
            )
        return saved


def _refused(reason: str) -> dict[str, Any]:
    return {"applied": False, "failureReason": reason}
