"""The editor's messages read from stdin by the event loop (``remora_lsp/stdio.py``):
whole, in order, however the pipe splits them; a stdin the loop cannot watch is
read in a thread as before.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pygls.io_ import StdinAsyncReader

from remora_lsp.stdio import LoopStdinReader


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def read_messages(reader: LoopStdinReader) -> list[bytes]:
    """What pygls's loop reads: header lines, then the body."""
    messages = []
    while header := await reader.readline():
        length = int(header.split(b":")[1])
        assert await reader.readline() == b"\r\n"
        messages.append(await reader.readexactly(length))
    return messages


async def test_messages_split_anyhow_arrive_whole_and_in_order():
    read_fd, write_fd = os.pipe()
    bodies = [b'{"id": %d, "text": "%s"}' % (n, b"x" * n * 300) for n in range(1, 40)]
    stream = b"".join(frame(b) for b in bodies)
    executor = ThreadPoolExecutor(1)
    with open(read_fd, "rb", buffering=0) as stdin:
        reader = LoopStdinReader(stdin, StdinAsyncReader(stdin, executor))

        async def editor() -> None:  # writes in odd-sized pieces, with pauses
            for start in range(0, len(stream), 977):
                os.write(write_fd, stream[start : start + 977])
                await asyncio.sleep(0)
            os.close(write_fd)

        writing = asyncio.ensure_future(editor())
        assert await read_messages(reader) == bodies
        await writing
        assert reader._stream is not None, "read by the loop, not a thread"
    executor.shutdown()


async def test_a_stdin_the_loop_cannot_watch_is_read_in_a_thread(tmp_path):
    saved = tmp_path / "messages"
    saved.write_bytes(frame(b'{"id": 1}') + frame(b'{"id": 2}'))
    executor = ThreadPoolExecutor(1)
    with saved.open("rb") as stdin:  # a regular file: no pipe to watch
        reader = LoopStdinReader(stdin, StdinAsyncReader(stdin, executor))
        assert await read_messages(reader) == [b'{"id": 1}', b'{"id": 2}']
        assert reader._stream is None
    executor.shutdown()


def test_a_server_started_on_dev_null_ends_at_once(tmp_path):
    """``remora-lsp < /dev/null``: the loop took /dev/null for a pipe it could
    watch, failed inside (epoll cannot watch it) and the server waited for
    ever. It reads /dev/null in a thread, finds the end of the input and exits
    (1: the editor never asked it to shut down).
    """
    done = subprocess.run(
        [str(Path(sys.executable).with_name("remora-lsp"))],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert (done.returncode, done.stdout) == (1, b""), done.stderr[-2000:]
    assert b"Traceback" not in done.stderr, done.stderr[-2000:]


async def test_the_reader_says_when_the_editors_bytes_wait():
    """Agents' turns give way while this says so (``editor_first.py``)."""
    read_fd, write_fd = os.pipe()
    executor = ThreadPoolExecutor(1)
    with open(read_fd, "rb", buffering=0) as stdin:
        reader = LoopStdinReader(stdin, StdinAsyncReader(stdin, executor))
        os.write(write_fd, frame(b'{"id": 1}'))
        assert await reader.readline() == b"Content-Length: 9\r\n"
        assert reader.unread(), "the rest of the message waits"
        assert await reader.readline() == b"\r\n"
        assert await reader.readexactly(9) == b'{"id": 1}'
        assert not reader.unread(), "everything read"
        os.write(write_fd, frame(b'{"id": 2}'))
        assert reader.unread(), "bytes in the pipe, not yet received"
        os.close(write_fd)
        assert await read_messages(reader) == [b'{"id": 2}']
        assert not reader.unread()
    executor.shutdown()
