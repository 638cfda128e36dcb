"""The control socket: the owning server's engine, reachable from outside.

While ``remora-lsp`` owns a project's store it listens on
``.remora/control.sock`` (:mod:`.server`); the command line and the MCP server
reach it through :func:`.backend.open_backend`, which falls back to opening the
project in-process when no server is live. The wire format is in :mod:`.wire`.
"""
