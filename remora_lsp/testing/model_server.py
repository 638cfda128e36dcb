"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1.

Tests fake the model only here, at its HTTP boundary, so the real client code
(pydantic-ai's OpenAI model, the OpenAI SDK, our retries and cancellation) runs.

Queue replies in order; each request takes the next one (or the default when
the script is empty)::

    with ModelServer() as server:
        server.reply_text("Here you go:\\n```python\\ndef f():\\n    return 1\\n```")
        server.reply_tool_call("rewrite_self", {"new_source": "def f(): ..."})
        server.reply_status(500, "boom")
        server.reply_delay(30)            # answers nothing for 30 s
        server.reply_echo_headers(401)    # an error whose body repeats the headers
        ...
        server.requests                   # every request body received (dicts)
        server.headers                    # the HTTP headers of each request
        server.closed_early               # requests whose client hung up first

Or answer by rule (:mod:`remora_lsp.testing.replies`), whatever the order of
requests::

        server.on("docstring", rewrite(NEW_SOURCE))
        server.on("why", text("Because."))

A ``responder`` callable (request body → :class:`Reply`) may replace the script
(benchmarks, the editor tests). Streaming requests (``"stream": true``) are
answered as server-sent events, tool calls included.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from remora_lsp.testing.replies import Match, Reply, Rule, make_rule

__all__ = ["ModelServer", "Reply", "Responder", "chunks", "completion"]


Responder = Callable[[dict[str, Any]], Reply]


class ModelServer:
    """The scripted server; a context manager that serves in a thread."""

    def __init__(self, responder: Responder | None = None, model: str = "scripted"):
        self.model = model
        self.responder = responder
        self.script: deque[Reply] = deque()
        self.default = Reply(text="Done.")
        self.rules: list[Rule] = []
        """Replies by rule (:meth:`on`), tried before the script."""
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        """The HTTP headers of each request, in the order of ``requests``."""
        self.closed_early = 0
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    # -- script --------------------------------------------------------------

    def on(self, match: Match, *replies: Reply | list[Reply]) -> Rule:
        """Answer requests matching ``match`` by rule (see :mod:`.replies`).

        ``match`` is a substring of the last user message or a predicate over
        the request; ``replies`` come from ``rewrite``/``text``/``tool_call``/
        ``error`` and answer the turn's requests in order.
        """
        rule = make_rule(match, replies)
        with self.lock:
            self.rules.append(rule)
        return rule

    def reply_text(self, text: str, **kwargs: Any) -> None:
        """Queue a plain assistant message."""
        self.script.append(Reply(text=text, **kwargs))

    def reply_tool_call(self, name: str, arguments: Any, **kwargs: Any) -> None:
        """Queue a reply that calls one tool."""
        self.script.append(Reply(tool_calls=[(name, arguments)], **kwargs))

    def reply_status(self, status: int, message: str = "error") -> None:
        """Queue an HTTP error answer."""
        body = json.dumps({"error": {"message": message, "type": "server_error"}})
        self.script.append(Reply(status=status, body=body.encode()))

    def reply_echo_headers(self, status: int = 401) -> None:
        """Queue an error whose message repeats every request header."""
        self.script.append(Reply(status=status, echo_headers=True))

    def reply_raw(self, body: bytes, status: int = 200) -> None:
        """Queue a raw body (e.g. invalid JSON)."""
        self.script.append(Reply(status=status, body=body))

    def reply_delay(self, seconds: float, then: Reply | None = None) -> None:
        """Queue a reply that waits ``seconds`` first."""
        reply = then or Reply(text="Late.")
        reply.delay_s = seconds
        self.script.append(reply)

    @property
    def url(self) -> str:
        """The base URL clients use (``…/v1``)."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def messages(self, index: int = -1) -> list[dict[str, Any]]:
        """The messages of request ``index``."""
        return self.requests[index]["messages"]

    def text_of(self, index: int = -1) -> str:
        """Every message content of request ``index``, joined (for asserts)."""
        parts = []
        for message in self.messages(index):
            content = message.get("content")
            if isinstance(content, list):
                content = " ".join(str(c.get("text", "")) for c in content)
            parts.append(str(content or ""))
            for call in message.get("tool_calls") or ():
                parts.append(json.dumps(call))
        return "\n".join(parts)

    # -- lifecycle -----------------------------------------------------------

    def __enter__(self) -> ModelServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving."""
        self.httpd.shutdown()
        self.httpd.server_close()

    def _next(self, request: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self.lock:
            self.requests.append(request)
            self.headers.append(headers)
            for rule in self.rules:
                if rule.matches(request):
                    return rule.reply(request)
            if self.responder is not None:
                return self.responder(request)
            return self.script.popleft() if self.script else self.default

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet tests
                pass

            def do_GET(self) -> None:
                body = {"object": "list", "data": [{"id": server.model}]}
                self._send(200, json.dumps(body).encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    request = json.loads(raw)
                except ValueError:
                    self._send(400, b'{"error": {"message": "bad json"}}')
                    return
                headers = dict(self.headers.items())
                reply = server._next(request, headers)
                if reply.echo_headers:
                    message = f"request refused; it came with headers {headers}"
                    error = {"error": {"message": message, "type": "auth_error"}}
                    reply = Reply(status=reply.status, body=json.dumps(error).encode())
                if reply.delay_s and not self._wait(reply.delay_s):
                    with server.lock:
                        server.closed_early += 1
                    self.close_connection = True
                    return
                if reply.body is not None or reply.status != 200:
                    self._send(reply.status, reply.body or b"{}")
                elif request.get("stream"):
                    self._stream(reply)
                else:
                    self._send(
                        200, json.dumps(completion(reply, server.model)).encode()
                    )

            def _wait(self, seconds: float) -> bool:
                """Sleep, watching for the client hanging up; False if it did."""
                deadline = time.monotonic() + seconds
                sock = self.connection
                while (left := deadline - time.monotonic()) > 0:
                    readable, _, _ = select.select([sock], [], [], min(left, 0.05))
                    if readable:
                        try:
                            if sock.recv(1, socket.MSG_PEEK) == b"":
                                return False
                        except OSError:
                            return False
                return True

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _stream(self, reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                sent = chunks(reply, server.model)
                if reply.cut_short:
                    sent = sent[:-1]  # the chunk with the finish_reason
                for chunk in sent:
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                if not reply.cut_short:
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()

        return Handler


def _tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {
            "id": f"call_{uuid.uuid4().hex[:8]}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": args if isinstance(args, str) else json.dumps(args),
            },
        }
        for name, args in reply.tool_calls
    ]


def _usage(reply: Reply) -> dict[str, Any]:
    prompt, completion_tokens = reply.usage
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
    }
    if reply.cached:
        usage["prompt_tokens_details"] = {"cached_tokens": reply.cached}
    return usage


def completion(reply: Reply, model: str) -> dict[str, Any]:
    """A non-streaming chat completion for ``reply``."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = _tool_calls(reply)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:8]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _finish(reply),
            }
        ],
        "usage": _usage(reply),
    }


def _finish(reply: Reply) -> str:
    if reply.finish_reason is not None:
        return reply.finish_reason
    return "tool_calls" if reply.tool_calls else "stop"


def chunks(reply: Reply, model: str) -> list[dict[str, Any]]:
    """The streamed chunks for ``reply``."""
    base = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:8]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    out: list[dict[str, Any]] = []
    if reply.text:
        pieces = [reply.text[i : i + 16] for i in range(0, len(reply.text), 16)]
        for piece in pieces:
            delta = {"role": "assistant", "content": piece}
            out.append({**base, "choices": [{"index": 0, "delta": delta}]})
    for index, call in enumerate(_tool_calls(reply)):
        delta = {"tool_calls": [{"index": index, **call}]}
        out.append({**base, "choices": [{"index": 0, "delta": delta}]})
    finish = _finish(reply)
    out.append(
        {
            **base,
            "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
            "usage": _usage(reply),
        }
    )
    return out
