"""A scripted OpenAI-compatible endpoint with N parallel slots and latency L.

Run by ``bench/scale_model.py`` in a process of its own (so that its work
does not share the engine's interpreter): ``python bench/slot_endpoint.py
--slots N --latency L [--fail-after K]``. It prints its URL on the first line
of stdout, then serves until stdin closes.

Like a vLLM or SGLang server, it answers at most ``--slots`` requests at once
and queues the rest; each answer takes ``--latency`` seconds of a slot. The
answers script a docstring run over functions ``def f<file>_<n>(x): return x
+ <n>`` (``scale_model.py`` writes them): the first request of a turn gets a
``rewrite_self`` call adding a docstring, the next one (after the tool's
result) a closing text.

``--fail-after K``: once K requests were answered, the endpoint stops
listening and drops every connection without an answer (a server that went
away half-way: connections are refused).

``GET /stats`` answers ``{"answered", "first_at", "last_at", "busy_s"}``
(``busy_s``: slot-seconds spent answering; ``first_at``: when the first
request arrived, ``last_at``: when the last answer left, monotonic clock).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
import uuid
from typing import Any

FUNCTION = re.compile(r"def (f\d+_(\d+))\(x\):")


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The scripted chat completion for ``request``."""
    messages = request.get("messages") or []
    message: dict[str, Any]
    if messages and messages[-1].get("role") == "tool":
        message = {"role": "assistant", "content": "Proposed a docstring."}
        finish = "stop"
    else:
        system = "\n".join(
            str(m.get("content") or "") for m in messages if m.get("role") == "system"
        )
        found = FUNCTION.findall(system)
        if not found:
            message = {"role": "assistant", "content": "Nothing to do."}
            finish = "stop"
        else:
            name, number = found[-1]
            source = (
                f'def {name}(x):\n    """Add {number} to x."""\n    return x + {number}'
            )
            call = {
                "id": f"call_{uuid.uuid4().hex[:8]}",
                "type": "function",
                "function": {
                    "name": "rewrite_self",
                    "arguments": json.dumps({"new_source": source}),
                },
            }
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:8]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 30, "total_tokens": 330},
    }


class Endpoint:
    """The server's state: its slots, what it answered, whether it failed."""

    def __init__(self, slots: int, latency: float, fail_after: int | None) -> None:
        self.slots = asyncio.Semaphore(slots)
        self.latency = latency
        self.fail_after = fail_after
        self.answered = 0
        self.first_at: float | None = None
        self.last_at: float | None = None
        self.busy_s = 0.0
        self.failed = False
        self.server: asyncio.Server | None = None
        self.connections: set[asyncio.StreamWriter] = set()

    def fail(self) -> None:
        """Go away: stop listening, drop every connection."""
        self.failed = True
        if self.server is not None:
            self.server.close()
        for writer in list(self.connections):
            writer.transport.abort()

    async def handle(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Serve one keep-alive connection."""
        self.connections.add(writer)
        try:
            while not self.failed:
                head = await reader.readuntil(b"\r\n\r\n")
                line, *fields = head.decode("latin-1").split("\r\n")
                method, path = line.split(" ")[:2]
                length = 0
                for field in fields:
                    name, _, value = field.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                body = await reader.readexactly(length) if length else b""
                if method == "GET" and path.endswith("/stats"):
                    reply = self.stats()
                elif method == "GET":
                    reply = {"object": "list", "data": [{"id": "scripted"}]}
                else:
                    reply = await self.complete(json.loads(body))
                    if reply is None:
                        return
                data = json.dumps(reply).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: " + str(len(data)).encode() + b"\r\n\r\n" + data
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            self.connections.discard(writer)
            writer.transport.abort()

    async def complete(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """A completion after a slot's latency; None once the endpoint failed."""
        if self.first_at is None:
            self.first_at = time.monotonic()
        async with self.slots:
            if self.failed:
                return None
            began = time.monotonic()
            await asyncio.sleep(self.latency)
            if self.failed:
                return None
            self.busy_s += time.monotonic() - began
        self.answered += 1
        self.last_at = time.monotonic()
        if self.fail_after is not None and self.answered >= self.fail_after:
            asyncio.get_running_loop().call_soon(self.fail)
        return answer(request)

    def stats(self) -> dict[str, Any]:
        """What was answered, and when."""
        return {
            "answered": self.answered,
            "first_at": self.first_at,
            "last_at": self.last_at,
            "busy_s": self.busy_s,
        }


async def serve(slots: int, latency: float, fail_after: int | None) -> None:
    """Serve until stdin closes."""
    endpoint = Endpoint(slots, latency, fail_after)
    server = endpoint.server = await asyncio.start_server(
        endpoint.handle, "127.0.0.1", 0, backlog=1024
    )
    port = server.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    await asyncio.to_thread(sys.stdin.read)
    endpoint.fail()
    # Gone at once: cancelling the connections' tasks at the loop's end makes
    # Python 3.11's streams print a traceback for each.
    sys.stdout.flush()
    os._exit(0)


def main() -> None:
    """Parse the options and serve."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, required=True)
    parser.add_argument("--latency", type=float, required=True)
    parser.add_argument("--fail-after", type=int)
    arguments = parser.parse_args()
    asyncio.run(serve(arguments.slots, arguments.latency, arguments.fail_after))


if __name__ == "__main__":
    main()
