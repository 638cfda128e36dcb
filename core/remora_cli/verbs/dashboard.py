"""``remora dashboard [--port N] [--open]``: the project in a local web page.

Prints ``http://127.0.0.1:PORT/?token=…`` and serves the page there until
Ctrl-C (see ``docs/dashboard.md``). It talks to the project like every verb:
through the owning server's control socket when one runs, else the project
is opened here — and then the dashboard serves the control socket itself,
so ``remora ask`` in another terminal reaches this engine (one writer).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import threading
import webbrowser
from collections.abc import Iterator

import uvicorn

from remora_cli import output
from remora_cli.control.backend import LocalBackend
from remora_cli.dashboard import guard, web
from remora_cli.dashboard.link import Link

log = logging.getLogger(__name__)

NAME = "dashboard"
HELP = "watch the swarm in a local web page (until Ctrl-C)"
UNTIL_CTRL_C = True
"""Ctrl-C is how a dashboard ends: exit 0 (``main.py``)."""
HOST = "127.0.0.1"


class _Server(uvicorn.Server):
    """uvicorn's server, ended by Ctrl-C (or SIGTERM) without re-raising it.

    uvicorn raises the signal again once it has shut down; here that would
    interrupt closing the project (its store, its workers) half-way. The verb
    returns instead, and the project closes whole.
    """

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        logging.getLogger("uvicorn.error").addFilter(self._quiet_on_exit)

    def _quiet_on_exit(self, record: logging.LogRecord) -> bool:
        """Drop uvicorn's complaint about open event streams when stopping:
        sse-starlette ends them as the server exits, without a last frame
        (the browser's EventSource just loses its connection), which uvicorn
        logs as an incomplete response — not an error of anyone's.
        """
        return not (self.should_exit and "without completing" in record.getMessage())

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        wanted = (signal.SIGINT, signal.SIGTERM)
        before = {sig: signal.signal(sig, self.handle_exit) for sig in wanted}
        try:
            yield
        finally:
            for sig, handler in before.items():
                signal.signal(sig, handler)


def add_arguments(parser) -> None:
    """``--port`` and ``--open``."""
    parser.add_argument(
        "--port", type=int, default=0, help="the port (default: any free one)"
    )
    parser.add_argument(
        "--open", action="store_true", help="open the page in the browser"
    )


async def run(args, backend) -> int:
    """Serve the page until interrupted."""
    if isinstance(backend, LocalBackend) and not backend.app.read_only:
        from remora_cli.control.server import serve_control

        # No server owns the project: this process does; let the CLI in.
        backend.app.keep(serve_control(backend.app, None), name="control socket")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((HOST, args.port))
    listener.listen(128)  # connections wait from now on, before uvicorn serves
    port = listener.getsockname()[1]
    token = guard.new_token()
    url = f"http://{HOST}:{port}/?token={token}"
    link = Link(backend)
    config = uvicorn.Config(
        web.build(link, token, port),
        log_level="warning",
        lifespan="off",
        server_header=False,
        proxy_headers=False,
        access_log=False,
    )
    output.say(f"Remora dashboard of {backend.root} (via {backend.via}):")
    output.say(url)
    if args.open:
        webbrowser.open(url)
    try:
        await _Server(config).serve(sockets=[listener])
    finally:
        await link.close()
    return 0
