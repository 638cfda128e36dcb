"""A small raw JSON-RPC client for language servers over stdio, for benchmarks.

Deliberately independent of pygls and lsprotocol so that the same code drives
every server measured (remora-lsp, basedpyright, jedi-language-server) and
adds as little as possible to what is timed. It speaks the base protocol
(``Content-Length`` framing), answers server-to-client requests the way a
plain editor would (``workspace/configuration`` with one ``null`` per item,
everything else with ``null``; a handler may be a coroutine that sends
notifications before it answers, as an editor applying an edit does) and
records when each message arrived, before its JSON is decoded, so timings do
not include the client's own decoding.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Handler = Callable[[dict[str, Any] | list[Any] | None], Any]
Predicate = Callable[[dict[str, Any]], bool]
Arrival = tuple[float, dict[str, Any]]

READ_LIMIT = 1 << 24
"""StreamReader buffer limit: large enough for any header line."""


class LspError(Exception):
    """The server answered a request with a JSON-RPC error."""


def path_uri(path: Path) -> str:
    """Return the ``file://`` URI of a path."""
    return path.resolve().as_uri()


def vscode_capabilities() -> dict[str, Any]:
    """Client capabilities close to what VS Code sends, for what we exercise."""
    return {
        "general": {"positionEncodings": ["utf-16"]},
        "window": {"workDoneProgress": True},
        "workspace": {
            "configuration": True,
            "workspaceFolders": True,
            "didChangeConfiguration": {"dynamicRegistration": True},
            "didChangeWatchedFiles": {
                "dynamicRegistration": True,
                "relativePatternSupport": True,
            },
            "symbol": {"dynamicRegistration": True},
        },
        "textDocument": {
            "synchronization": {
                "dynamicRegistration": True,
                "didSave": True,
                "willSave": True,
                "willSaveWaitUntil": True,
            },
            "documentSymbol": {
                "dynamicRegistration": True,
                "hierarchicalDocumentSymbolSupport": True,
                "labelSupport": True,
                "symbolKind": {"valueSet": list(range(1, 27))},
                "tagSupport": {"valueSet": [1]},
            },
            "publishDiagnostics": {"relatedInformation": True},
        },
    }


class LspClient:
    """One language server process and the JSON-RPC session with it."""

    def __init__(self) -> None:
        self.process: asyncio.subprocess.Process | None = None
        self.handlers: dict[str, Handler] = {
            "workspace/configuration": _configuration,
        }
        """Server-to-client request handlers by method; unknown ones get null."""
        self.notifications: list[tuple[float, dict[str, Any]]] = []
        """Every notification received, with its arrival time (perf_counter)."""
        self.server_requests: list[str] = []
        """Methods of the server-to-client requests received, in order."""
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[tuple[float, Any]]] = {}
        self._waiters: list[tuple[Predicate, asyncio.Future[Arrival]]] = []
        self._reader: asyncio.Task[None] | None = None

    # ---- process ---------------------------------------------------------------

    async def start(
        self,
        command: list[str],
        *,
        cwd: Path,
        stderr: Path,
        env: dict[str, str] | None = None,
    ) -> None:
        """Spawn the server with its stderr appended to ``stderr``."""
        with open(stderr, "ab") as log:
            self.process = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                cwd=cwd,
                env={**os.environ, **(env or {})},
                limit=READ_LIMIT,
            )
        self._reader = asyncio.create_task(self._read_loop(), name="lsp reader")

    @property
    def pid(self) -> int:
        """Process id of the server."""
        assert self.process is not None
        return self.process.pid

    async def stop(self, timeout: float = 10.0) -> int | None:
        """``shutdown`` then ``exit``; kill the server if it does not go.

        Returns the exit code, or None if it had to be killed.
        """
        assert self.process is not None
        if self.process.returncode is None:
            with contextlib.suppress(Exception):
                await self.request("shutdown", None, timeout=timeout)
                await self.notify("exit", None)
        try:
            code = await asyncio.wait_for(self.process.wait(), timeout)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
            code = None
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        return code

    # ---- sending -----------------------------------------------------------------

    async def _send(self, message: dict[str, Any]) -> None:
        assert self.process is not None and self.process.stdin is not None
        body = json.dumps(message, separators=(",", ":")).encode()
        header = f"Content-Length: {len(body)}\r\n\r\n".encode()
        self.process.stdin.write(header + body)
        await self.process.stdin.drain()

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def open_document(self, uri: str, text: str, version: int = 1) -> None:
        """``textDocument/didOpen`` of a Python document."""
        document = {"uri": uri, "languageId": "python", "version": version}
        await self.notify(
            "textDocument/didOpen", {"textDocument": {**document, "text": text}}
        )

    async def send_request(self, method: str, params: Any) -> asyncio.Future:
        """Send a request; the future resolves to ``(arrived_at, result)``."""
        request_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        await self._send(
            {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        )
        return future

    async def request(self, method: str, params: Any, timeout: float = 60.0) -> Any:
        """Send a request and return its result (raises :class:`LspError`)."""
        future = await self.send_request(method, params)
        _, result = await asyncio.wait_for(future, timeout)
        return result

    def wait_for_notification(self, predicate: Predicate) -> asyncio.Future[Arrival]:
        """Wait for the next notification matching: a future of (arrival, message).

        Predicates see each notification after it was added to
        :attr:`notifications`.
        """
        future = asyncio.get_running_loop().create_future()
        self._waiters.append((predicate, future))
        return future

    # ---- receiving ---------------------------------------------------------------

    async def _read_loop(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        stdout = self.process.stdout
        try:
            while True:
                length = await _read_headers(stdout)
                if length is None:
                    break
                body = await stdout.readexactly(length)
                arrived = time.perf_counter()
                await self._dispatch(arrived, json.loads(body))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            gone = ConnectionError("the server closed its output")
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(gone)
            for _, future in self._waiters:
                if not future.done():
                    future.set_exception(gone)

    async def _dispatch(self, arrived: float, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:  # a response to one of our requests
            future = self._pending.pop(message.get("id"), None)
            if future is None or future.done():
                return
            if "error" in message:
                future.set_exception(LspError(json.dumps(message["error"])))
            else:
                future.set_result((arrived, message.get("result")))
        elif "id" in message:  # a request from the server
            self.server_requests.append(method)
            handler = self.handlers.get(method, _null)
            result = handler(message.get("params"))
            if inspect.isawaitable(result):  # an editor's answer that sends first
                result = await result
            await self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        else:
            self.notifications.append((arrived, message))
            for entry in list(self._waiters):
                predicate, future = entry
                if not future.done() and predicate(message):
                    future.set_result((arrived, message))
                    self._waiters.remove(entry)


async def _read_headers(stdout: asyncio.StreamReader) -> int | None:
    """Read one header block; its Content-Length, or None at end of stream."""
    length = None
    while True:
        line = await stdout.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            if length is None:
                continue
            return length
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())


def _configuration(params: Any) -> list[None]:
    """Answer ``workspace/configuration`` like an editor with no settings."""
    items = params.get("items", []) if isinstance(params, dict) else []
    return [None] * len(items)


def _null(params: Any) -> None:
    return None
