"""What the server writes for answers the fast path cannot encode: every
request is answered, with text the standard encoder escapes.
"""

from __future__ import annotations

import json

from remora_lsp.assembly import create_server
from remora_lsp.protocol import PlainJson


class Collected:
    """A transport writer that keeps what the server writes."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.frames.append(data)


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
