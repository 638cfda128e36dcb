"""Every use of pygls's private attributes, in one place.

pygls 2.1 offers no public hook for these; each is named here so that a pygls
upgrade that renames or removes one fails ``tests/lsp/test_pygls_private.py``
at once instead of breaking a code path at run time:

- ``JsonRPCProtocol._converter`` — the cattrs converter (scrubbing messages,
  structuring requests ourselves to answer InvalidParams instead of dropping);
- ``JsonRPCProtocol._include_headers`` — whether messages are framed with
  ``Content-Length`` (stdio, TCP) or not (websockets), for the fast path that
  writes plain-JSON results without cattrs;
- ``JsonRPCProtocol._send_response(msg_id, result, error)`` — overridden by
  :class:`remora_lsp.protocol.RemoraProtocol`;
- ``JsonRPCServer._stop_event``, ``._thread_pool``, ``._server`` — stopping the
  transport without waiting for the thread blocked on stdin, and serving stdio
  with our own reader (``remora_lsp/stdio.py``), which sets the stop event as
  pygls's ``start_io`` does;
- ``JsonRPCClient._server`` — the server process a client started (the test
  kit, ``remora_lsp/testing/client.py``, kills it when a test failed half-way
  instead of waiting for an exit that never comes).
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

PROTOCOL_ATTRIBUTES = ("_converter", "_include_headers")
PROTOCOL_METHODS = ("_send_response",)
SERVER_ATTRIBUTES = ("_stop_event", "_thread_pool", "_server")
CLIENT_ATTRIBUTES = ("_server",)


def server_process(client: Any) -> Any:
    """The ``asyncio`` subprocess a pygls client started (None before)."""
    return client._server


def converter(protocol: Any) -> Any:
    """The protocol's cattrs converter."""
    return protocol._converter


def includes_headers(protocol: Any) -> bool:
    """Whether the protocol frames messages with ``Content-Length`` headers."""
    return bool(protocol._include_headers)


def set_stop_event(server: Any, event: Any) -> None:
    """Give the server the event that ends its message loop (``shutdown``
    and ``exit`` set it).
    """
    server._stop_event = event


def stop_transport(server: Any) -> None:
    """Stop the server's transport without joining the stdin reader thread."""
    if server._stop_event is not None:
        server._stop_event.set()
    if server._thread_pool is not None:
        server._thread_pool.shutdown(wait=False, cancel_futures=True)
    if server._server is not None:
        server._server.close()
