"""The child process that serves the embedded model (started by ``local.py``).

``python -m remora_core.agents.local_server --model PATH --address-file FILE
--parent-pid PID`` loads the GGUF into xllamacpp's llama.cpp server on
127.0.0.1 (port 0: the OS picks a free one), writes the listening address to
``FILE`` once the model is loaded, and serves until SIGTERM/SIGINT or until its
parent process is gone. Its stdout and stderr are the parent's log file.

How it shares the CPU with the editor (``--threads``, ``--priority``; the
settings ``model.threads`` and ``model.priority``): by default llama.cpp runs
one thread less than the CPU count at nice 10 while the model loads, then
every thread of this process under Linux's ``SCHED_IDLE`` policy
(``--priority idle``): a core goes to it only when nothing else there wants
to run, so a keystroke's request preempts a token at once. Niceness alone
(``low``: nice 10, the fallback where ``SCHED_IDLE`` is missing) lets a
niced thread keep the core for part of a time slice. ``bench/storm.py --part
model`` measures both: typing while the model generates, documentSymbol p95
against typing quietly.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from remora_core.agents.local import MODEL_NAME, MODEL_NICE, MODEL_PRIORITY

if TYPE_CHECKING:
    from collections.abc import Sequence

log = logging.getLogger("remora_core.agents.local_server")

PARENT_POLL_S = 0.5


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    # ``__doc__`` is None under ``python -OO``.
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--model", required=True, help="the GGUF file")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--ctx", type=int, default=4096, help="context tokens")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument(
        "--template", default="", help="jinja chat template; '' keeps the GGUF's"
    )
    parser.add_argument(
        "--nice", type=int, default=MODEL_NICE, help="niceness added (POSIX)"
    )
    parser.add_argument(
        "--priority",
        choices=PRIORITIES,
        default=MODEL_PRIORITY,
        help="idle: SCHED_IDLE (Linux; elsewhere low); low: --nice; normal: as started",
    )
    parser.add_argument("--alias", default=MODEL_NAME, help="the served name")
    parser.add_argument("--address-file", help="where to write http://HOST:PORT")
    parser.add_argument("--parent-pid", type=int, help="exit when it is gone")
    return parser.parse_args(argv)


def _params(args: argparse.Namespace) -> object:
    """llama.cpp server parameters: one slot, jinja template, loopback only."""
    # The compiled module itself: the package re-exports it with ``import *``,
    # which a type checker cannot follow into a binary.
    from xllamacpp.xllamacpp import CommonParams

    params = CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}  # a set: a plain string splits into letters
    params.n_ctx = args.ctx
    params.use_jinja = True
    if args.template:
        params.chat_template = Path(args.template).read_text(encoding="utf-8")
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.n_parallel = 1  # one request at a time; a 0.5B model on CPU
    params.ui = False  # no web UI; we only need the OpenAI-compatible API
    params.offline = True  # never download anything
    params.cors_origins = ""  # no browser page may call us
    return params


PRIORITIES = ("idle", "low", "normal")


def _lower_priority(priority: str, nice: int) -> None:
    """Yield the CPU to the editor: niceness, for the load and after. Only
    the calling thread changes (Linux schedules threads): call it before any
    other thread starts, and llama.cpp's threads, started after, inherit it.
    """
    if priority == "normal":
        return
    if nice > 0 and hasattr(os, "nice"):
        try:
            os.nice(nice)  # also the fallback when SCHED_IDLE is refused
        except OSError as error:  # a sandbox may refuse it: run as we are
            log.info("could not lower the model's priority: %s", error)


IDLE_PASSES = 10
"""Listings of the threads at most, moving the new ones to ``SCHED_IDLE``."""


def _idle_every_thread(priority: str) -> None:
    """Once the model is loaded, move every thread of this process to
    ``SCHED_IDLE`` (Linux): a person typing while the model generates then
    takes a core from it at once (``bench/storm.py``). Not before: loading
    491 MB is a wait the first ask sits through, and a start-up that gets no
    CPU on a busy machine would look stuck (``local.STARTUP_STALL_S``).
    Threads started later inherit the policy from the thread starting them;
    one started meanwhile by a thread not yet moved does not, so the threads
    are listed again until a listing finds none new (llama.cpp's server
    starts threads while it settles: one stayed at the normal policy once).
    """
    idle = getattr(os, "SCHED_IDLE", None)
    if priority != "idle" or idle is None or not hasattr(os, "sched_setscheduler"):
        return
    moved: set[int] = set()
    for _ in range(IDLE_PASSES):
        try:
            threads = {int(name) for name in os.listdir("/proc/self/task")}
        except OSError:
            threads = {0}  # no /proc: this thread only
        if not threads - moved:
            return
        for thread in threads - moved:
            moved.add(thread)
            try:
                os.sched_setscheduler(thread, idle, os.sched_param(0))
            except OSError as error:  # gone meanwhile, or refused by a sandbox
                log.info("could not run thread %d under SCHED_IDLE: %s", thread, error)


def _write_address(path: str, address: str) -> None:
    """Write atomically: the parent never reads half an address."""
    target = Path(path)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    tmp.write_text(address + "\n", encoding="utf-8")
    os.replace(tmp, target)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _wait_for_windows_process(pid: int) -> None:
    import ctypes

    assert sys.platform == "win32"  # ctypes.windll exists on Windows only
    kernel32 = ctypes.windll.kernel32
    handle = kernel32.OpenProcess(0x00100000, False, pid)  # SYNCHRONIZE
    if handle:
        kernel32.WaitForSingleObject(handle, 0xFFFFFFFF)  # INFINITE
        kernel32.CloseHandle(handle)


def _watch_parent(parent_pid: int) -> None:
    """Exit at once when the parent dies: an orphaned model server is a leak.

    On POSIX an orphan is re-parented, so ``getppid()`` changes; when we were
    not started directly by ``parent_pid`` (a launcher in between) we poll the
    pid instead. Windows waits on a process handle.
    """
    if sys.platform == "win32":
        _wait_for_windows_process(parent_pid)
    elif os.getppid() == parent_pid:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL_S)
    else:
        while _pid_alive(parent_pid):
            time.sleep(PARENT_POLL_S)
    log.warning("parent process %d is gone; exiting", parent_pid)
    logging.shutdown()
    os._exit(0)  # skip cleanup: the model's threads must not keep us alive


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until SIGTERM/SIGINT or the parent's death; the exit status."""
    args = _parse(argv)
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s remora local_server: %(message)s",
    )
    _lower_priority(args.priority, args.nice)  # before any thread starts
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    if args.parent_pid:
        threading.Thread(
            target=_watch_parent, args=(args.parent_pid,), daemon=True
        ).start()
    from xllamacpp.xllamacpp import Server  # see _params

    started = time.monotonic()
    server = Server(_params(args))  # loads the model, serves in threads
    _idle_every_thread(args.priority)
    address = server.listening_address
    log.info("ready at %s in %.2f s", address, time.monotonic() - started)
    if args.address_file:
        _write_address(args.address_file, address)
    # Also on stdout, which the parent sends to the log: one line there shows the
    # redirection works (the language server's own stdout must never see it).
    sys.stdout.write(f"remora local_server: serving {address}\n")
    sys.stdout.flush()
    while not stop.wait(1.0):
        pass
    log.info("stopping")
    del server  # joins llama.cpp's threads and closes the socket
    return 0


if __name__ == "__main__":
    sys.exit(main())
