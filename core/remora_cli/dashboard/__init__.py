"""``remora dashboard``: the project's swarm in a local web page.

A consumer of the front door like the rest of the command line: every answer
comes from the project's backend (``remora_cli.control.backend``) — the
owning server's control socket, or the project opened here. The rooms:

- :mod:`.guard` — who may talk to the page (token, ``Host``, headers);
- :mod:`.web` — the Starlette app: the page, its one ``call`` endpoint and
  the stream of events;
- ``static/`` — the page itself (plain modules, no build step) and the graph
  library vendored from npm (``static/vendor/``, checked against its
  lockfile by ``tests/dashboard/test_vendored.py``).
"""
