"""The pygls private attributes Remora relies on still exist (see
``remora_lsp/pygls_private.py``): a pygls upgrade that breaks one fails here.
"""

from __future__ import annotations

import inspect

from pygls.protocol import JsonRPCProtocol

from remora_lsp import pygls_private
from remora_lsp.assembly import create_server
from remora_lsp.testing.client import make_client


def test_the_private_attributes_used_exist_on_a_real_server():
    server = create_server()
    for name in pygls_private.PROTOCOL_ATTRIBUTES:
        assert hasattr(server.protocol, name), f"pygls protocol lost {name}"
    for name in pygls_private.SERVER_ATTRIBUTES:
        assert hasattr(server, name), f"pygls server lost {name}"
    assert pygls_private.converter(server.protocol) is not None
    # set when a transport starts (stdio, TCP: True); a bool either way
    assert pygls_private.includes_headers(server.protocol) in (True, False)


def test_the_overridden_private_method_keeps_its_signature():
    for name in pygls_private.PROTOCOL_METHODS:
        method = getattr(JsonRPCProtocol, name, None)
        assert method is not None, f"pygls protocol lost {name}"
        assert list(inspect.signature(method).parameters) == [
            "self",
            "msg_id",
            "result",
            "error",
        ]


def test_the_private_attributes_used_exist_on_a_real_client():
    client = make_client()
    for name in pygls_private.CLIENT_ATTRIBUTES:
        assert hasattr(client, name), f"pygls client lost {name}"
    assert pygls_private.server_process(client) is None  # nothing started yet
