"""The backend contract: one way in for the command line and the MCP server.

::

    backend = await open_backend(project_dir)
    backend.via                      # "server" or "local"
    card = await backend.call("remora.node.get", {"node_id": "rm_ab"})
    async for event in backend.follow(since_seq):   # events as JSON, forever
        ...
    await backend.close()

- :func:`open_backend` connects to the control socket of the ``remora-lsp``
  that owns the project when one is live (``via == "server"``: one engine, one
  writer; an accept of a file open in the editor goes through the editor).
  Otherwise it opens the project in-process (``via == "local"``): a warm start
  from the store, holding the store's one-writer lock
  (``store/ownership.py``) until :meth:`Backend.close`, with an on-disk editor
  that writes atomically (temp file + rename, re-read and verify). When another
  process holds the lock without a socket, the local project is read-only and
  writes fail with a :class:`BackendError` naming the owner.
- :meth:`Backend.call` takes the command names of DESIGN §11 (and those of
  :mod:`remora_core.front.commands`) with one JSON object and returns the JSON
  result; failures raise :class:`BackendError` (``kind`` ``invalid``,
  ``not_found``, ``ambiguous`` with ``candidates``, ``not_owner``, ``failed``).
- :meth:`Backend.follow` yields every event after ``since_seq`` (None: from
  now on), as JSON with its ``seq``, until the caller stops iterating.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal, Protocol

from remora_core.front.errors import FrontError, error_data

from remora_cli.control import wire

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 2.0
CLOSE_TIMEOUT_S = 2.0
"""How long hanging up may wait for the socket to close (a command that is
over, or interrupted with Ctrl-C, never stays alive for the server's sake)."""


class NoProject(Exception):
    """The directory is not a project Remora can open."""


class BackendError(Exception):
    """A command failed; ``str(error)`` is for a person."""

    def __init__(
        self, message: str, kind: str = "failed", candidates: list[Any] | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.candidates = candidates or []


class ServerGone(BackendError):
    """The owning server's socket closed or is not there (it stopped)."""

    def __init__(self, message: str = "the Remora server stopped") -> None:
        super().__init__(message, "failed")


class Backend(Protocol):
    """A project's engine, in this process or in the owning server."""

    via: Literal["server", "local"]
    root: Path

    async def call(self, command: str, arguments: dict[str, Any]) -> Any:
        """Run a command (DESIGN §11 names); its JSON result."""
        ...

    def follow(self, since_seq: int | None) -> AsyncIterator[dict[str, Any]]:
        """Events after ``since_seq`` (None: from now on), live, as JSON."""
        ...

    async def close(self) -> None:
        """Disconnect, or write what is pending and release the store."""
        ...


def find_root(start: Path) -> Path:
    """The project directory: ``start`` itself (no walking up: a project is
    the directory you name, as an editor's workspace folder is).
    """
    root = start.expanduser().resolve()
    if not root.is_dir():
        raise NoProject(f"{start} is not a directory")
    return root


async def open_backend(project_dir: Path) -> Backend:
    """The owning server's engine if one is live, else the project in-process."""
    root = find_root(project_dir)
    server = await ServerBackend.connect(root)
    if server is not None:
        return server
    return await LocalBackend.open(root)


# ---- through the owning server ------------------------------------------------------


class ServerBackend:
    """The engine of the ``remora-lsp`` that owns the project, over its socket."""

    via: Literal["server", "local"] = "server"

    def __init__(
        self, root: Path, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.root = root
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)
        self._lock = asyncio.Lock()

    @classmethod
    async def connect(cls, root: Path) -> ServerBackend | None:
        """Connected to ``root``'s control socket; None if nobody serves it."""
        reader_writer = await _open(root)
        return cls(root, *reader_writer) if reader_writer is not None else None

    async def call(self, command: str, arguments: dict[str, Any]) -> Any:
        """One request, one answer (requests on this connection take turns)."""
        async with self._lock:
            request_id = next(self._ids)
            self._writer.write(wire.request(request_id, command, arguments))
            await self._writer.drain()
            while True:
                message = await _read(self._reader)
                if message.get("id") == request_id:
                    return _result(message)

    def follow(self, since_seq: int | None) -> AsyncIterator[dict[str, Any]]:
        """Events over a connection of their own."""
        return follow_server(self.root, since_seq)

    async def close(self) -> None:
        """Hang up."""
        self._writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._writer.wait_closed(), CLOSE_TIMEOUT_S)


async def follow_server(
    root: Path, since_seq: int | None
) -> AsyncIterator[dict[str, Any]]:
    """Events of ``root``'s owning server after ``since_seq``, over a connection
    of their own; :class:`ServerGone` when it stops (or none serves ``root``).
    """
    opened = await _open(root)
    if opened is None:
        raise ServerGone()
    reader, writer = opened
    try:
        writer.write(wire.request(1, "events.follow", {"since_seq": since_seq}))
        await writer.drain()
        _result(await _read(reader))
        while True:
            message = await _read(reader)
            if message.get("method") == "event":
                yield message["params"]
    except OSError as problem:  # reset by a server that died
        raise ServerGone(f"the Remora server stopped ({problem})") from None
    finally:
        writer.close()


async def _open(
    root: Path,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
    path = wire.connect_path(root)
    if path is None:
        return None
    try:
        return await asyncio.wait_for(
            asyncio.open_unix_connection(os.fspath(path), limit=wire.MAX_LINE),
            CONNECT_TIMEOUT_S,
        )
    except (OSError, TimeoutError) as problem:  # a stale socket of a killed server
        log.info("no server answers on %s (%s)", path, problem)
        return None


async def _read(reader: asyncio.StreamReader) -> dict[str, Any]:
    line = await reader.readline()
    if not line:
        raise ServerGone("the Remora server closed the connection")
    message = json.loads(line)
    if not isinstance(message, dict):
        raise BackendError("the Remora server sent garbage", "failed")
    return message


def _result(message: dict[str, Any]) -> Any:
    error = message.get("error")
    if error is None:
        return message.get("result")
    data = error.get("data") or {}
    raise BackendError(
        str(error.get("message")), data.get("kind", "failed"), data.get("candidates")
    )


# ---- in this process ---------------------------------------------------------------


class LocalBackend:
    """The project opened in this process (no server owns it)."""

    via: Literal["server", "local"] = "local"

    def __init__(self, app: Any) -> None:
        self.app = app
        self.root: Path = app.root

    @classmethod
    async def open(cls, root: Path) -> LocalBackend:
        """Open and start the project at ``root`` (a warm start from its store)."""
        from remora_cli.control.local import open_local_app

        return cls(await open_local_app(root))

    async def call(self, command: str, arguments: dict[str, Any]) -> Any:
        """Run a command on the in-process engine."""
        from remora_core.front import commands

        try:
            result = await commands.call(self.app, command, arguments)
        except FrontError as problem:
            data = error_data(problem)
            raise BackendError(
                str(problem), data["kind"], data.get("candidates")
            ) from None
        # The same JSON a socket would carry (no tuples, no enums).
        return json.loads(json.dumps(result))

    async def follow(self, since_seq: int | None) -> AsyncIterator[dict[str, Any]]:
        """Events of the in-process engine."""
        async for stored in self.app.history.follow(since_seq):
            yield stored.to_json()

    async def close(self) -> None:
        """Write what is pending, stop the agents and release the store."""
        await self.app.close()
