"""What the server writes for answers the fast path cannot encode: every
request is answered, with text the standard encoder escapes.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time

from pygls.io_ import StdoutWriter

from remora_lsp.assembly import create_server
from remora_lsp.cli import protocol_stream
from remora_lsp.protocol import PlainJson


class Collected:
    """A transport writer that keeps what the server writes."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.frames.append(data)

    @classmethod
    def of(cls, stream: bytes) -> Collected:
        """The frames of a byte stream (``Content-Length`` framing)."""
        collected = cls()
        while stream:
            header, _, rest = stream.partition(b"\r\n\r\n")
            length = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            collected.frames.append(header + b"\r\n\r\n" + rest[:length])
            stream = rest[length:]
        return collected


def answers(collected: Collected) -> list[dict]:
    """The JSON bodies of the frames written."""
    bodies = [frame.split(b"\r\n\r\n", 1)[1] for frame in collected.frames]
    return [json.loads(body) for body in bodies]


def test_a_plain_json_answer_with_a_lone_surrogate_is_still_sent():
    server = create_server()
    writer = Collected()
    server.protocol.set_writer(writer, include_headers=True)
    outline = [{"name": "odd\ud800name", "kind": 12}]
    server.protocol._send_response(7, result=PlainJson(outline))
    server.protocol._send_response(8, result=PlainJson([{"name": "plain"}]))
    first, second = answers(writer)
    assert first["id"] == 7
    assert first["result"] == outline  # escaped as \ud800, read back the same
    assert second == {"jsonrpc": "2.0", "id": 8, "result": [{"name": "plain"}]}


def test_a_large_answer_arrives_whole_when_signals_interrupt_the_write():
    """A profiler attaching, or any signal with a handler, interrupts a write
    to a full pipe; the answer still reaches the editor whole and the next one
    after it (an unbuffered stream lost the rest of the message).
    """
    read_fd, write_fd = os.pipe()
    server = create_server()
    stream = protocol_stream(write_fd)
    server.protocol.set_writer(StdoutWriter(stream), include_headers=True)
    received = bytearray()
    done = threading.Event()

    def editor() -> None:  # a slow reader: the pipe stays full
        while chunk := os.read(read_fd, 4096):
            received.extend(chunk)
            time.sleep(0.0005)

    def pester(thread: int) -> None:
        while not done.is_set():
            signal.pthread_kill(thread, signal.SIGUSR1)
            time.sleep(0.001)

    before = signal.signal(signal.SIGUSR1, lambda *_: None)
    reader = threading.Thread(target=editor)
    reader.start()
    signals = threading.Thread(target=pester, args=(threading.get_ident(),))
    signals.start()
    outline = [{"name": f"symbol_{n}", "detail": "x" * 200} for n in range(4000)]
    try:
        server.protocol._send_response(1, result=PlainJson(outline))
        server.protocol._send_response(2, result=PlainJson([{"name": "next"}]))
    finally:
        done.set()
        signals.join()
        signal.signal(signal.SIGUSR1, before)
        stream.close()
        reader.join()
    first, second = answers(Collected.of(bytes(received)))
    assert first["result"] == outline
    assert second["result"] == [{"name": "next"}]
