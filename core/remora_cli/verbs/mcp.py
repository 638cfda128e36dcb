"""``remora mcp``: serve the project's nodes to an MCP host over stdio.

See ``core/remora_cli/mcp_server.py``: tools ``search_nodes``, ``node_card``,
``node_history``, ``ask_node``, ``list_proposals``, ``proposal_diff`` and the
resource ``remora://node/{id}``. Stdout carries MCP only; logs go to stderr.
The project is opened once per call (through the owning server when one
runs), never held between calls.
"""

from __future__ import annotations

import logging

from remora_cli import output
from remora_cli.control.backend import NoProject, find_root

log = logging.getLogger(__name__)

NAME = "mcp"
HELP = (
    "serve the project's nodes to an MCP host (Claude Code, Cursor, VS Code) on stdio"
)
OWN_BACKEND = True


def add_arguments(parser) -> None:
    """No options beyond ``--project``."""


async def run(args, backend) -> int:
    """Serve until the host hangs up."""
    from remora_cli.mcp_server import serve  # the SDK loads only for this verb

    try:
        root = find_root(args.project)
    except NoProject as problem:
        output.tell(f"remora: {problem}")
        return 3
    await serve(root)
    return 0
