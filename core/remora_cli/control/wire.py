"""The control socket's wire format: JSON-RPC 2.0, one message per line.

Each message is one JSON object encoded as UTF-8 on a single line ending with
``\\n`` (newline-delimited JSON: JSON never needs a raw newline, and a person
can talk to the socket with ``socat - UNIX-CONNECT:.remora/control.sock``).
A line may be at most :data:`MAX_LINE` bytes.

- Request ``{"jsonrpc": "2.0", "id": 1, "method": "remora.node.get",
  "params": {"node_id": "rm_ab"}}`` → response with ``result`` or ``error``
  (``{code, message, data?}``; ``data.kind`` is ``invalid``, ``not_found``,
  ``ambiguous`` (with ``data.candidates``), ``not_owner`` or ``failed``).
- Methods: the command names of DESIGN §11 (see
  :mod:`remora_core.front.commands`), ``server.info`` → ``{pid, root,
  version}``, and ``events.follow {since_seq?}`` → ``{following: true,
  last_seq}``, after which every event after ``since_seq`` (or from now on)
  arrives on that connection as a notification ``{"method": "event",
  "params": <event JSON>}`` until the client hangs up.

The socket lives at ``.remora/control.sock`` (mode 0600). A Unix socket path
is limited to ~104 bytes; when the project's path is longer the server binds
a short path under ``$XDG_RUNTIME_DIR`` (or ``/tmp/remora-<uid>``, mode 0700)
and makes ``.remora/control.sock`` a symbolic link to it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SOCKET_NAME = "control.sock"
MAX_LINE = 16 * 1024 * 1024
MAX_SOCKET_PATH = 100
"""Unix socket paths must fit ``sun_path`` (104–108 bytes with the NUL)."""

INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
PARSE_ERROR = -32700
INTERNAL_ERROR = -32603
REQUEST_FAILED = -32803


def socket_path(root: Path) -> Path:
    """Where the control socket of the project at ``root`` is announced."""
    return root / ".remora" / SOCKET_NAME


def bind_path(root: Path) -> Path:
    """Where the server binds its socket: the announced path, or a short one
    when that is too long for a Unix socket.
    """
    announced = socket_path(root)
    if len(os.fsencode(announced)) <= MAX_SOCKET_PATH:
        return announced
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    directory = Path(base) / f"remora-{os.getuid()}"
    directory.mkdir(mode=0o700, exist_ok=True)
    digest = hashlib.sha256(os.fsencode(root.resolve())).hexdigest()[:16]
    return directory / f"{digest}.sock"


def connect_path(root: Path) -> Path:
    """The path a client connects to (following the link to a short path)."""
    announced = socket_path(root)
    if announced.is_symlink():
        return Path(os.readlink(announced))
    return announced


def encode(message: dict[str, Any]) -> bytes:
    """One message as one line."""
    return json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n"


def request(request_id: int, method: str, params: Any) -> bytes:
    """A request line."""
    return encode(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    )


def error(code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error object."""
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return body
