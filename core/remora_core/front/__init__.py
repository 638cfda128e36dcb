"""Use-case facades of the engine (DESIGN §3 "One front door").

:class:`remora_core.front.app.RemoraApp` builds them; every consumer — the language
server, the ``remora`` command line, the control socket, the MCP server — calls
them (``app.runs.chat(...)``) and never reaches through them.

- :mod:`.nodes` finds nodes (id, unique prefix, ``path::qualified.name``,
  position) and gives cards and search results;
- :mod:`.runs` sends agents requests, cancels runs, answers questions, lists runs;
- :mod:`.proposals` lists, diffs, accepts (:mod:`.accepting`) and rejects;
- :mod:`.history` queries the event log, follows it live from a ``seq`` and
  gives a node's conversation;
- :mod:`.attribution` says which lines came from which agent (and the commit
  trailers);
- :mod:`.commands` maps the command names of DESIGN §11 onto the facades, with
  pydantic argument models (the control socket and the CLI speak it);
- :mod:`.errors` is the one family of errors the facades raise.
"""
