"""Serving over stdio with the editor's messages read by the event loop itself.

pygls reads stdin in a worker thread: every line of every message (the
``Content-Length`` header, the blank line, the body) is one hand-over to a
thread and back. While the loop runs Python code — agents' turns during a
storm — each hand-over waits for the interpreter lock, up to the switch
interval (5 ms) and longer on a busy machine, so a keystroke's request took
three such waits before it was even read (``bench/storm.py``: py-spy showed
the loop's largest own cost in handing reads to the thread). Here stdin is a
non-blocking pipe the loop watches (``connect_read_pipe``): a message is
read where it is handled, with no thread.

Where the loop cannot watch stdin (Windows, a regular file), reads go to
pygls's worker thread as before. Everything else is pygls's own
loop (``run_async``) and writer.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from typing import TYPE_CHECKING, BinaryIO

from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async

from remora_lsp.pygls_private import set_stop_event

if TYPE_CHECKING:
    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)

READ_LIMIT = 1 << 24
"""The stream's buffer limit (a header line never comes near it)."""


class LoopStdinReader:
    """pygls's reader interface (``readline``, ``readexactly``) over stdin
    watched by the running loop; the worker thread when it cannot be.
    """

    def __init__(self, stdin: BinaryIO, fallback: StdinAsyncReader) -> None:
        self.stdin = stdin
        self.fallback = fallback
        self._stream: asyncio.StreamReader | None = None
        self._tried = False

    async def _reader(self) -> asyncio.StreamReader | None:
        if not self._tried:
            self._tried = True
            if sys.platform == "win32":  # a console or anonymous pipe handle
                return None  # is not one the proactor loop can read
            stream = asyncio.StreamReader(limit=READ_LIMIT)
            loop = asyncio.get_running_loop()
            try:
                await loop.connect_read_pipe(
                    lambda: asyncio.StreamReaderProtocol(stream), self.stdin
                )
            except (OSError, ValueError, NotImplementedError) as error:
                log.info("stdin is read in a thread: %s", error)
            else:
                self._stream = stream
        return self._stream

    async def readline(self) -> bytes:
        """One line, with its end of line; ``b""`` at the end of the input."""
        stream = await self._reader()
        if stream is None:
            return await self.fallback.readline()
        return await stream.readline()

    async def readexactly(self, n: int) -> bytes:
        """``n`` bytes, or what was left at the end of the input."""
        stream = await self._reader()
        if stream is None:
            return await self.fallback.readexactly(n)
        try:
            return await stream.readexactly(n)
        except asyncio.IncompleteReadError as short:
            return short.partial


def serve_stdio(
    server: RemoraLanguageServer, stdin: BinaryIO, stdout: BinaryIO
) -> None:
    """Serve the editor on ``stdin``/``stdout`` until it exits (what pygls's
    ``start_io`` does, with :class:`LoopStdinReader`).
    """
    stop = threading.Event()
    set_stop_event(server, stop)
    reader = LoopStdinReader(stdin, StdinAsyncReader(stdin, server.thread_pool))
    server.protocol.set_writer(StdoutWriter(stdout))
    try:
        asyncio.run(
            run_async(
                stop_event=stop,
                reader=reader,
                protocol=server.protocol,
                logger=log,
                error_handler=server.report_server_error,
            )
        )
    except BrokenPipeError:
        log.error("the connection to the editor is lost; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
