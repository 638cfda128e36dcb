"""The control socket of a project this server owns.

:func:`serve_control` runs as one of the project's store watchers (so it ends
when the project closes): it binds ``.remora/control.sock`` (mode 0600; see
:mod:`.wire` for long paths), accepts connections and removes the socket when
it ends. A socket left by a killed server is detected (nobody answers a
connect) and replaced; only the store's owner listens, so a live socket of
another process means that process lost the store's lock — it is replaced too,
with a warning. Only a socket the person owns is ever removed, and a link only
as a link (a repository can ship ``.remora/control.sock`` pointing at any of
the person's files); anything else there is left alone and no socket served.

Requests go to the same facades as the editor's commands; an ``accept`` goes
through the editor when it holds the file open, else to the disk
(:class:`remora_lsp.editor.ControlEditor`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from remora_core.store import folder

from remora_cli.control import wire
from remora_cli.control.dispatch import Connection

if TYPE_CHECKING:
    from remora_core.editor import Editor
    from remora_core.front.app import RemoraApp

log = logging.getLogger(__name__)


def is_live(path: Path) -> bool:
    """Whether a process accepts connections on the Unix socket at ``path``."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(os.fspath(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def clear_stale(path: Path) -> bool:
    """Make way for the socket at ``path``: remove a link there (the link,
    never its target) or a socket of the person's that nobody serves; False
    (and a warning) when something else is there, which is left alone.
    """
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return True
    if stat.S_ISLNK(found.st_mode):
        log.info("removing the link %s (not what it points to)", path)
    elif not stat.S_ISSOCK(found.st_mode):
        log.warning("%s is not a socket: left alone; no control socket", path)
        return False
    elif found.st_uid != os.geteuid():
        log.warning(
            "%s is owned by uid %d, not by you: left alone; no control socket",
            path,
            found.st_uid,
        )
        return False
    elif is_live(path):
        log.warning("replacing the control socket %s of another live process", path)
    else:
        log.info("removing the stale control socket %s", path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as problem:
        log.warning("cannot remove %s (%s): no control socket", path, problem)
        return False
    return True


async def serve_control(app: RemoraApp, editor: Editor | None) -> None:
    """Listen on the project's control socket until cancelled."""
    root = app.root
    assert root is not None
    announced = wire.socket_path(root)
    try:
        folder.check(announced.parent)  # never through a link, nor in theirs
        bound = wire.bind_path(root)
    except OSError as problem:  # StoreRefused, SocketRefused: not the person's
        log.warning("no control socket for %s: %s", root, problem)
        return
    if not all(clear_stale(path) for path in dict.fromkeys((announced, bound))):
        return

    async def connected(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await Connection(app, editor, reader, writer).serve()

    old_mask = os.umask(0o177)  # the socket is created 0600, never wider
    try:
        server = await asyncio.start_unix_server(
            connected, path=os.fspath(bound), limit=wire.MAX_LINE
        )
    except OSError as problem:  # a read-only project, a full disk: no socket
        log.warning("no control socket at %s: %s", announced, problem)
        return
    finally:
        os.umask(old_mask)
    os.chmod(bound, 0o600)
    if bound != announced:
        os.symlink(bound, announced)
    log.info("control socket listening on %s", announced)
    try:
        async with server:
            await server.serve_forever()
    finally:
        server.close()
        for path in {announced, bound}:
            with contextlib.suppress(OSError):
                path.unlink()
        log.info("control socket %s closed", announced)
