"""Worker processes of the server: started so that they never disturb it.

A worker (parsing files, ``indexer.py``; building the stored name index,
``symbol_snapshot.py``) is started with ``spawn`` (the server has threads;
``fork`` would copy their locks), gets its stdout pointed at stderr (the LSP
speaks on stdout), runs at a lower CPU priority than the server (on a small
machine the server's own work then keeps pace) and, on Linux, dies with the
server, even when the server is killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import sys

log = logging.getLogger(__name__)

WORKER_NICENESS = 10
"""How much lower than the server's the workers' CPU priority is."""


def start_worker(server_pid: int) -> None:
    """Worker initializer: anything written to fd 1 goes to stderr instead, the
    worker yields the CPU to the server (see the module docstring) and dies
    with it.
    """
    os.dup2(2, 1)
    with contextlib.suppress(OSError):  # not allowed: workers compete as equals
        os.nice(WORKER_NICENESS)
    _die_with(server_pid)


PR_SET_PDEATHSIG = 1


def _die_with(server_pid: int) -> None:
    """Linux: the kernel kills this worker when the server dies, even by
    SIGKILL. Otherwise the worker would wait forever on a queue that nobody
    fills any more, holding the pipes (and so the files) the server held.

    Strictly, the signal comes when the *thread* that started the worker
    ends: pools are made on the event loop's thread, which lives as long as
    the server.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        failed = libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0
    except (OSError, AttributeError):
        failed = True
    if failed:  # orphans may linger after a kill
        log.debug("cannot tie the worker's life to the server's")
    if os.getppid() != server_pid:  # the server died before that
        os._exit(0)
