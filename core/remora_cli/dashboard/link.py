"""The dashboard's way to the project, which outlives the editor's server.

A command line verb opens its backend once and ends; the dashboard stays up
for hours, while editors open and close. :class:`Link` is what its web app
talks to instead of a bare backend:

- **The project opened here** (no server owned it when the dashboard started):
  every call goes to the in-process engine, which lives as long as the
  dashboard.
- **The owning server**, over its control socket: each call borrows a
  connection of its own from a small pool and connects anew when the pool
  is empty (a :class:`ServerBackend` takes one request at a time: a person's
  accept waiting for the editor must not hold up the page's lists). When
  the server stops, calls fail with :class:`ServerGone` and so does the
  event stream; the page keeps asking for the stream after the last ``seq``
  it has, and once a server serves the project again (the editor reopened)
  calls connect to it and the stream resumes there: no event lost, none
  twice. The dashboard never opens the store itself then: the editor's
  server owns it when it comes back.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

from remora_cli.control.backend import (
    Backend,
    BackendError,
    ServerBackend,
    ServerGone,
    follow_server,
)

IDLE_KEPT = 4
"""Connections kept open between calls (more are opened while calls overlap)."""
MAX_OPEN = 16
"""Calls in flight at once; more wait their turn (200 clicks at once must not
open 200 sockets on the editor's server)."""
GONE = (
    "the Remora server stopped (its editor closed?); the dashboard reconnects "
    "by itself when a server serves the project again"
)


class Link:
    """Commands and events of the project, through whatever serves it now."""

    def __init__(self, backend: Backend) -> None:
        self.root: Path = backend.root
        self.via: Literal["server", "local"] = backend.via
        # The project opened here: it is the engine, for as long as we run.
        self._local = backend if backend.via == "local" else None
        self._idle: list[ServerBackend] = []
        self._slots = asyncio.Semaphore(MAX_OPEN)
        self._closed = False

    async def call(self, command: str, arguments: dict[str, Any]) -> Any:
        """Run a command; :class:`ServerGone` while no server serves the project."""
        if self._local is not None:
            return await self._local.call(command, arguments)
        async with self._slots:
            connection = self._idle.pop() if self._idle else await self._connect()
            reusable = False
            try:
                result = await connection.call(command, arguments)
                reusable = True
                return result
            except ServerGone:
                await self._drop_idle()  # they all went with the server
                raise ServerGone(GONE) from None
            except OSError as problem:  # reset mid-call by a server that died
                await self._drop_idle()
                raise ServerGone(f"{GONE} ({problem})") from None
            except BackendError:
                reusable = True  # the command failed; the connection is fine
                raise
            finally:
                # A call interrupted half-way (the page went away) may still
                # get its answer on this connection: never lend it again.
                if reusable and not self._closed and len(self._idle) < IDLE_KEPT:
                    self._idle.append(connection)
                else:
                    await connection.close()

    def follow(self, since_seq: int) -> AsyncIterator[dict[str, Any]]:
        """Events after ``since_seq``, live; :class:`ServerGone` when the server
        stops (the page then asks again, after the last ``seq`` it has, until
        a server is back).
        """
        if self._local is not None:
            return self._local.follow(since_seq)
        return follow_server(self.root, since_seq)

    async def serving(self) -> bool:
        """Whether the project can be reached now (a call would not fail with
        :class:`ServerGone`).
        """
        if self._local is not None or self._idle:
            return True
        connection = await ServerBackend.connect(self.root)
        if connection is None:
            return False
        self._idle.append(connection)
        return True

    async def close(self) -> None:
        """Hang up the pool's connections (the backend itself is the caller's)."""
        self._closed = True
        await self._drop_idle()

    async def _connect(self) -> ServerBackend:
        connection = await ServerBackend.connect(self.root)
        if connection is None:
            raise ServerGone(GONE)
        return connection

    async def _drop_idle(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            with contextlib.suppress(Exception):
                await connection.close()
