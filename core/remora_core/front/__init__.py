"""The front door: the one handle, its facades and the command table.

:class:`remora_core.front.app.RemoraApp` is the composition root and the only
engine object a consumer holds — the language server, the ``remora`` command
line, the control socket, the MCP server. It builds the facades; consumers
call them (``app.runs.chat(...)``) and never reach through them.

- :mod:`.nodes` finds nodes (id, unique prefix, ``path::qualified.name``,
  position), outlines, cards and search results;
- :mod:`.documents` takes the editor's buffers and files changed on disk;
- :mod:`.runs` sends agents requests, cancels runs, answers questions, lists runs;
- :mod:`.proposals` lists, diffs, accepts (:mod:`.accepting`,
  :mod:`.accept_many`) and rejects;
- :mod:`.history` queries the event log, follows it live from a ``seq`` and
  gives a node's conversation;
- :mod:`.attribution` says which lines came from which agent (and the commit
  trailers); :mod:`.batches` runs graphs and takes checkpoints;
  :mod:`.trust` says whether the repository is trusted;
- :mod:`.startup` is how the facades wait for the project to start;
- :mod:`.commands` is the command table every door serves (one
  :class:`~.table.Command` per ``remora.*`` command, declared in the topic
  modules ``*_commands.py``; answers typed in :mod:`.answers`; files named by
  :mod:`.locations`);
- :mod:`.errors` is the one family of errors the facades raise;
- :mod:`.disk_editor` is the editor on disk, for doors without an editor.
"""
