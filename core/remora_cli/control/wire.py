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
is limited to ~104 bytes; when the project's path is longer the server binds a
short path in a runtime folder of the person's — ``remora-<uid>`` under
``$XDG_RUNTIME_DIR`` when that is a folder of theirs with mode 0700, else
under ``$TMPDIR`` (``/tmp``), whichever is short enough for the socket's path
(neither: no socket, and a warning that says so) — and makes
``.remora/control.sock`` a symbolic link to it for people (``socat``). That
folder is made fresh with mode 0700, or refused when it exists and is not the
person's alone (a link, another owner, any group or other permission: the
rules of ``XDG_RUNTIME_DIR``) — another user who made it first could swap the
socket and read every request. Clients never follow the link: they compute the
same path, check the same folder, and connect only to a socket the person owns
(:func:`connect_path`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import stat
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


class SocketRefused(OSError):
    """No control socket where it would not be the person's alone; the
    message says why and what to do.
    """


def _private(directory: Path) -> os.stat_result:
    """``lstat`` of ``directory``; :class:`SocketRefused` unless it is a real
    directory of the person's that nobody else may enter (mode 0700).
    """
    found = os.lstat(directory)
    if (
        stat.S_ISDIR(found.st_mode)
        and found.st_uid == os.geteuid()
        and not found.st_mode & 0o077
    ):
        return found
    kind = "a symbolic link" if stat.S_ISLNK(found.st_mode) else "a folder"
    raise SocketRefused(
        f"{directory} is not yours alone ({kind} of uid {found.st_uid}, mode "
        f"{stat.S_IMODE(found.st_mode):04o}; it must be your own folder with mode "
        "0700), so no control socket is bound there: remove it, or set "
        "XDG_RUNTIME_DIR to a folder of yours, and restart"
    )


def runtime_directory(*, create: bool) -> Path:
    """The person's folder for sockets too long for the project (see the
    module doc); made with mode 0700 when ``create``; :class:`SocketRefused`
    when it exists and is not theirs alone (``FileNotFoundError`` when it is
    missing and not created).
    """
    base = Path(tempfile.gettempdir())
    if xdg := os.environ.get("XDG_RUNTIME_DIR"):
        try:
            _private(Path(xdg))
            if not _fits(Path(xdg)):
                raise SocketRefused(f"{xdg} is too long for a socket path in it")
            base = Path(xdg)
        except OSError as problem:  # SocketRefused, or missing
            log.info("not using XDG_RUNTIME_DIR: %s", problem)
    if not _fits(base):
        raise SocketRefused(
            f"{base} is too long for a Unix socket path in it (at most "
            f"{MAX_SOCKET_PATH} bytes in all), so no control socket is bound: "
            "set TMPDIR or XDG_RUNTIME_DIR to a shorter folder of yours, and restart"
        )
    directory = base / f"remora-{os.getuid()}"
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, 0o700)
    _private(directory)  # FileNotFoundError when missing and not created
    return directory


def _fits(base: Path) -> bool:
    """Whether a short socket path (:func:`bind_path_in`) under ``base`` fits."""
    example = bind_path_in(base / f"remora-{os.getuid()}", Path("/"))
    return not _too_long(example)


def _too_long(announced: Path) -> bool:
    return len(os.fsencode(announced)) > MAX_SOCKET_PATH


def bind_path(root: Path) -> Path:
    """Where the server binds its socket: the announced path, or a short one
    when that is too long for a Unix socket (:class:`SocketRefused` when its
    folder is not the person's alone).
    """
    announced = socket_path(root)
    if not _too_long(announced):
        return announced
    return bind_path_in(runtime_directory(create=True), root)


def own_socket(path: Path) -> bool:
    """Whether ``path`` itself (not a link's target) is a socket of the
    person's.
    """
    try:
        found = os.lstat(path)
    except OSError:
        return False
    mine = not hasattr(os, "geteuid") or found.st_uid == os.geteuid()
    return stat.S_ISSOCK(found.st_mode) and mine


def connect_path(root: Path) -> Path | None:
    """The socket a client connects to: the project's own socket of the
    person's, computed as the server computes it — never a link's target,
    which a repository could ship (None: nobody serves the project).
    """
    announced = socket_path(root)
    if not _too_long(announced):
        return announced if own_socket(announced) else None
    try:
        path = bind_path_in(runtime_directory(create=False), root)
    except SocketRefused as problem:
        log.warning("%s", problem)
        return None
    except OSError:  # no runtime folder: no server made one
        return None
    return path if own_socket(path) else None


def bind_path_in(directory: Path, root: Path) -> Path:
    """The short socket path of ``root`` in the runtime folder ``directory``."""
    digest = hashlib.sha256(os.fsencode(root.resolve())).hexdigest()[:16]
    return directory / f"{digest}.sock"


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
