"""The doors that are not LSP: the ``remora`` command line, the control socket
and the MCP server (DESIGN §11b).

Each is a consumer of the one handle (``remora_core.front.app.RemoraApp``) and
its command table (``remora_core.front.commands``):

- :mod:`.main` and :mod:`.verbs` — the ``remora`` command line, printing what
  :mod:`.output` formats;
- :mod:`.control` — the control socket a ``remora-lsp`` serves for the project
  it owns (:mod:`.control.server`), and the backend the command line and MCP
  use to reach it, or to open the project in-process when no server runs
  (:mod:`.control.backend`);
- :mod:`.mcp_server` — ``remora mcp``, the nodes for other agents over MCP.
"""
