"""The command table: every ``remora.*`` command, defined once for every door.

:data:`COMMANDS` maps each name to its :class:`~remora_core.front.table.Command`
(argument model, answer type, handler, route). Every door serves exactly this
table: the language server registers each entry for ``workspace/executeCommand``
(``remora_lsp/commands.py``), the control socket and the in-process backend of
the command line dispatch to :func:`call`, the MCP server's tools call it too.
Adding a command is one handler declared with ``@command`` in a topic module,
listed below; it reaches every door without touching them.

- :mod:`.node_commands` — cards, search, events;
- :mod:`.agent_commands` — chat, run, cancel, answer, forget; conversations
  and runs;
- :mod:`.proposal_commands` — accept (one or several), reject, diff, list;
- :mod:`.revert_commands` — revert a proposal, a graph run;
- :mod:`.batch_commands` — graph runs, checkpoints, attribution;
- :mod:`.trust_commands` — whether a repository is trusted;
- :mod:`.cost_commands` — what agents' runs cost;
- :mod:`.wake_commands` — a node's subscriptions, muting;
- :mod:`.instruction_commands` — a person's standing instructions for a node.

Node references may be any reference of :mod:`.nodes` (an id, a unique prefix,
``path::qualified.name``), proposals an id or a unique prefix; files a ``uri``
or a project ``path``. Unknown argument keys are refused, naming the key.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from remora_core.front.agent_commands import AGENT_COMMANDS
from remora_core.front.batch_commands import BATCH_COMMANDS
from remora_core.front.cost_commands import COST_COMMANDS
from remora_core.front.errors import InvalidArguments
from remora_core.front.instruction_commands import INSTRUCTION_COMMANDS
from remora_core.front.node_commands import NODE_COMMANDS
from remora_core.front.proposal_commands import PROPOSAL_COMMANDS
from remora_core.front.revert_commands import REVERT_COMMANDS
from remora_core.front.table import Command, Door, parse
from remora_core.front.trust_commands import TRUST_COMMANDS
from remora_core.front.wake_commands import WAKE_COMMANDS

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp

log = logging.getLogger(__name__)

COMMANDS: dict[str, Command] = {
    entry.name: entry
    for entry in (
        *NODE_COMMANDS,
        *AGENT_COMMANDS,
        *PROPOSAL_COMMANDS,
        *REVERT_COMMANDS,
        *BATCH_COMMANDS,
        *TRUST_COMMANDS,
        *COST_COMMANDS,
        *WAKE_COMMANDS,
        *INSTRUCTION_COMMANDS,
    )
}
"""Command name → its definition."""


def find(name: str) -> Command:
    """The command ``name``; :class:`InvalidArguments` listing the known ones."""
    entry = COMMANDS.get(name)
    if entry is None:
        raise InvalidArguments(
            f"unknown command {name!r}; known: {', '.join(sorted(COMMANDS))}"
        )
    return entry


async def call(
    app: RemoraApp, name: str, arguments: Any, door: Door | None = None
) -> Any:
    """Run the command ``name`` with ``arguments`` on ``app``; its JSON answer.

    It waits until the project's stored graph is loaded (a command sent
    during start-up is answered once the ids are known).
    """
    entry = find(name)
    parsed = parse(entry.arguments, arguments, name)
    await app.loaded()
    return await entry.handler(app, parsed, door or Door())
