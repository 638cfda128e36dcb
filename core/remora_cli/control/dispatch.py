"""Serving one control connection: requests in, answers and events out.

Shared by the server's socket (:mod:`.server`) and usable on any pair of
asyncio streams. Each request runs in its own task (a long ``accept`` does not
hold up a ``ps``); writes to the connection are serialised. Facade errors
become JSON-RPC errors with a readable message; anything else is logged and
answered as an internal error — a bad request never ends the server.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from typing import TYPE_CHECKING, Any

from remora_core import __version__
from remora_core.front import commands
from remora_core.front.errors import (
    FrontError,
    InvalidArguments,
    error_code,
    error_data,
)
from remora_core.front.table import Door

from remora_cli.control import wire

if TYPE_CHECKING:
    from remora_core.editor import Editor
    from remora_core.front.app import RemoraApp

log = logging.getLogger(__name__)


class Connection:
    """One client of the control socket."""

    def __init__(
        self,
        app: RemoraApp,
        editor: Editor | None,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self.app = app
        self.editor = editor
        self.reader = reader
        self.writer = writer
        self._write_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()

    async def serve(self) -> None:
        """Answer requests until the client hangs up."""
        try:
            while True:
                try:
                    line = await self.reader.readline()
                except ValueError:  # longer than the stream's limit
                    await self._send(
                        {
                            "jsonrpc": "2.0",
                            "id": None,
                            "error": wire.error(
                                wire.PARSE_ERROR, f"message over {wire.MAX_LINE} bytes"
                            ),
                        }
                    )
                    return
                if not line:
                    return
                task = asyncio.ensure_future(self._handle(line))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            self.writer.close()

    async def _send(self, message: dict[str, Any]) -> None:
        try:
            line = wire.encode(message)
        except (TypeError, ValueError, RecursionError) as problem:
            # Data JSON cannot carry (bytes in a damaged store's row): a request
            # is still answered, with why; an event is skipped.
            log.warning("cannot send a control message as JSON: %s", problem)
            if "id" not in message:
                return
            line = wire.encode(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "error": wire.error(
                        wire.INTERNAL_ERROR,
                        f"the answer holds data JSON cannot carry ({problem}): "
                        "is the store damaged?",
                    ),
                }
            )
        async with self._write_lock:
            self.writer.write(line)
            await self.writer.drain()

    async def _handle(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError as problem:
            await self._answer(None, error=wire.error(wire.PARSE_ERROR, str(problem)))
            return
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            await self._answer(
                None, error=wire.error(wire.INVALID_PARAMS, "not a JSON-RPC request")
            )
            return
        request_id, method = message.get("id"), message["method"]
        params = message.get("params")
        try:
            if method == "events.follow":
                await self._follow(request_id, params)
                return
            result = await self._call(method, params)
        except FrontError as problem:
            await self._answer(
                request_id,
                error=wire.error(
                    error_code(problem), str(problem), error_data(problem)
                ),
            )
        except (ConnectionError, asyncio.CancelledError):
            raise
        except Exception as problem:
            log.exception("control request %s failed", method)
            await self._answer(
                request_id,
                error=wire.error(wire.INTERNAL_ERROR, f"{method} failed: {problem}"),
            )
        else:
            await self._answer(request_id, result=result)

    async def _call(self, method: str, params: Any) -> Any:
        if method == "server.info":
            return {
                "pid": os.getpid(),
                "root": str(self.app.root),
                "version": __version__,
                "read_only": self.app.read_only,
            }
        return await commands.call(self.app, method, params, Door(self.editor))

    async def _answer(
        self, request_id: Any, *, result: Any = None, error: Any = None
    ) -> None:
        if request_id is None and error is None:
            return  # a notification: no answer
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if error is not None:
            message["error"] = error
        else:
            message["result"] = result
        await self._send(message)

    async def _follow(self, request_id: Any, params: Any) -> None:
        since = (params or {}).get("since_seq") if isinstance(params, dict) else None
        if since is not None and (not isinstance(since, int) or since < 0):
            raise InvalidArguments(
                "events.follow: since_seq must be a seq (an integer ≥ 0)"
            )
        history = self.app.history
        stream = history.follow(since)
        # Subscribed before answering: every event after the answer arrives.
        first = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0)
        await self._answer(
            request_id, result={"following": True, "last_seq": history.last_seq}
        )
        try:
            stored = await first
            while True:
                await self._send(
                    {"jsonrpc": "2.0", "method": "event", "params": stored.to_json()}
                )
                stored = await anext(stream)
        finally:
            first.cancel()
            await stream.aclose()
