"""The ``remora-lsp`` command.

Usage: ``remora-lsp [--tcp HOST:PORT] [--log-file PATH] [-v|-vv] [--version]``.
Over stdio (the default) the protocol owns file descriptor 1: before anything
else runs, the real stdout is kept for the protocol and fd 1 is pointed at
stderr, so a stray ``print`` or a child process's output can never corrupt the
stream.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from remora_lsp import __version__

if TYPE_CHECKING:
    from typing import BinaryIO

    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        prog="remora-lsp",
        description="Remora: a Python language server where every node is an agent.",
    )
    parser.add_argument("--tcp", metavar="HOST:PORT", help="serve over TCP")
    parser.add_argument("--log-file", metavar="PATH", help="log here, not stderr")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="-v info, -vv debug"
    )
    parser.add_argument("--version", action="version", version=__version__)
    return parser.parse_args(argv)


def protocol_stream(fd: int) -> BinaryIO:
    """The stream protocol messages are written to, on file descriptor ``fd``.

    Buffered, on purpose: pygls writes each message with one ``write`` and a
    ``flush``. An unbuffered file's ``write`` is one system call, and a write
    to a full pipe interrupted by a signal (a profiler attaching, a handler
    running) returns having written only part of the message — pygls ignores
    the count, the rest was lost, and the editor's reader choked on the next
    message. A buffered file's ``flush`` writes until every byte is out.
    """
    return os.fdopen(fd, "wb")


def _protocol_stdout() -> BinaryIO:
    """Keep the real stdout for the protocol; send fd 1 to stderr."""
    protocol_out = protocol_stream(os.dup(sys.stdout.fileno()))
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return protocol_out


def _created(create_server: Callable[[], RemoraLanguageServer]):
    """The server, with the heap built so far frozen and collection back on."""
    try:
        return create_server()
    finally:
        gc.freeze()
        gc.enable()


def main(argv: list[str] | None = None) -> None:
    """Entry point of the console script."""
    args = parse_args(argv)
    # Importing the server builds ~half a million long-lived objects (protocol
    # types, models): collecting while they pile up finds nothing and cost tens
    # of milliseconds of every start, and frozen they stay out of later
    # collections (``features/lifecycle.py`` freezes the project's heap too).
    gc.disable()
    from remora_lsp.generated_code import generated_code_cached

    # The protocol's types are built here (lsprotocol, through the logs' and
    # the server's imports): their generated code compiled once per user.
    with generated_code_cached():
        from remora_lsp.logs import configure

        configure(args.verbose, args.log_file)
        from remora_lsp.assembly import create_server

    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit():
            sys.exit(f"remora-lsp: --tcp wants HOST:PORT, got {args.tcp!r}")
        server = _created(create_server)
        server.start_tcp(host or "127.0.0.1", int(port))
        return
    protocol_out = _protocol_stdout()
    server = _created(create_server)
    log.info("remora-lsp %s starting on stdio", __version__)
    from remora_lsp.stdio import serve_stdio

    serve_stdio(server, sys.stdin.buffer, protocol_out)
    # Worker threads blocked on stdin must not keep a finished server alive.
    logging.shutdown()
    os._exit(server.exit_code)
