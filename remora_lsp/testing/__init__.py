"""A pytest kit for testing what you build on Remora — bundles, ``.pym`` tools,
extensions, settings — in scripted sessions of the real server, the way
Remora's own end-to-end tests do.

Installed with ``pip install 'remora-lsp[testing]'``; pytest loads the plugin
(:mod:`remora_lsp.testing.plugin`) by itself through its ``pytest11`` entry
point. The fixtures (``remora_client``, ``remora_model``, ``remora_project``,
``remora_settings``, ``remora_editor``) are described there;
``docs/testing-kit.md`` has a complete example.

Importing this package needs pytest-lsp (the ``testing`` extra).
"""

from __future__ import annotations

from remora_lsp.testing.actions import (
    accept,
    ask,
    code_actions,
    command,
    events,
    model_settings,
    node,
    proposal,
    reject,
    wait_for_event,
    wait_for_run,
)
from remora_lsp.testing.buffers import Buffer, apply_workspace_edits
from remora_lsp.testing.client import (
    EDITORS,
    RemoraClient,
    launch,
    remora_converter,
    start_session,
)
from remora_lsp.testing.model_server import ModelServer
from remora_lsp.testing.replies import Reply, error, rewrite, text, tool_call
from remora_lsp.testing.waiting import eventually

__all__ = [
    "EDITORS",
    "Buffer",
    "ModelServer",
    "RemoraClient",
    "Reply",
    "accept",
    "apply_workspace_edits",
    "ask",
    "code_actions",
    "command",
    "error",
    "events",
    "eventually",
    "launch",
    "model_settings",
    "node",
    "proposal",
    "reject",
    "remora_converter",
    "rewrite",
    "start_session",
    "text",
    "tool_call",
    "wait_for_event",
    "wait_for_run",
]
