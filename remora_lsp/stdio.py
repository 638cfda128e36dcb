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

Where the loop cannot watch stdin (Windows; anything but a pipe or a socket:
a regular file, ``/dev/null``, a terminal), reads go to
pygls's worker thread as before. Everything else is pygls's own
loop (``run_async``) and writer.

The reader also tells agents' turns when the editor's bytes wait
(:meth:`LoopStdinReader.unread`, the probe of
``remora_core/editor_first.py``): received and not yet taken by the
protocol, or still in the pipe. A turn at a step's end then lets them be
read and answered first.
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
import stat
import sys
import threading
from typing import TYPE_CHECKING, BinaryIO

from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async

from remora_lsp.pygls_private import set_stop_event

if TYPE_CHECKING:
    from collections.abc import Callable

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
        self._received = 0
        self._taken = 0
        self._poll: select.poll | None = None

    def unread(self) -> bool:
        """Whether bytes from the editor wait: in the pipe, or received and
        not yet taken by the protocol (False where the loop does not read).
        """
        if self._stream is None:
            return False
        if self._received > self._taken:
            return True
        if self._poll is None:
            return False
        try:
            return any(mask & select.POLLIN for _, mask in self._poll.poll(0))
        except OSError:  # closed meanwhile: nothing waits
            return False

    def _got(self, data: bytes) -> None:
        self._received += len(data)

    async def _reader(self) -> asyncio.StreamReader | None:
        if not self._tried:
            self._tried = True
            if sys.platform == "win32":  # a console or anonymous pipe handle
                return None  # is not one the proactor loop can read
            if not _pipe_or_socket(self.stdin):
                # A regular file is refused at once; /dev/null or a terminal
                # was accepted, then failed inside the loop (epoll cannot
                # watch /dev/null), and the server waited forever.
                log.info("stdin is read in a thread: not a pipe or a socket")
                return None
            stream = asyncio.StreamReader(limit=READ_LIMIT)
            loop = asyncio.get_running_loop()
            try:
                await loop.connect_read_pipe(
                    lambda: _CountingProtocol(stream, self._got), self.stdin
                )
            except (OSError, ValueError, NotImplementedError) as error:
                log.info("stdin is read in a thread: %s", error)
            else:
                self._stream = stream
                poll = select.poll()
                poll.register(self.stdin.fileno(), select.POLLIN)
                self._poll = poll
        return self._stream

    async def readline(self) -> bytes:
        """One line, with its end of line; ``b""`` at the end of the input."""
        stream = await self._reader()
        if stream is None:
            return await self.fallback.readline()
        line = await stream.readline()
        self._taken += len(line)
        return line

    async def readexactly(self, n: int) -> bytes:
        """``n`` bytes, or what was left at the end of the input."""
        stream = await self._reader()
        if stream is None:
            return await self.fallback.readexactly(n)
        try:
            data = await stream.readexactly(n)
        except asyncio.IncompleteReadError as short:
            data = short.partial
        self._taken += len(data)
        return data


def _pipe_or_socket(stdin: BinaryIO) -> bool:
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class _CountingProtocol(asyncio.StreamReaderProtocol):
    """The stream's protocol, counting the bytes it is given."""

    def __init__(self, stream: asyncio.StreamReader, got: Callable[[bytes], None]):
        super().__init__(stream)
        self._got = got

    def data_received(self, data: bytes) -> None:
        """Count, then hand the bytes to the stream."""
        self._got(data)
        super().data_received(data)


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
    server.editor_first.unread = reader.unread
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
