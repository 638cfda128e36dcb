"""Helpers for end-to-end tests: waiting on the server, opening and editing files."""

from __future__ import annotations

import asyncio
from typing import Any

from pytest_lsp import LanguageClient

# Moved into the pytest kit (remora_lsp.testing); re-exported for the tests.
from remora_lsp.testing.buffers import (  # noqa: F401
    Buffer,
    edit,
    flatten,
    open_file,
    symbols,
    to_index,
)
from remora_lsp.testing.buffers import node_id_of as node_id  # noqa: F401
from remora_lsp.testing.waiting import (  # noqa: F401
    TIMEOUT_S,
    eventually,
    indexing_runs,
    wait_indexed,
)


def uri(client: LanguageClient, relative: str) -> str:
    """URI of a file of the test workspace."""
    return (client.root / relative).as_uri()  # type: ignore[attr-defined]


async def raw_request(client: LanguageClient, method: str, params: Any) -> Any:
    """Send a request exactly as given, bypassing the client's type checks."""
    import uuid
    from concurrent.futures import Future

    msg_id = str(uuid.uuid4())
    future: Future[Any] = Future()
    client.protocol._request_futures[msg_id] = future
    client.protocol._send_data(
        {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
    )
    return await asyncio.wrap_future(future)
