"""``docs/reference/clients.md``: every command of the table × the clients.

Rows are the command table (``remora_core.front.commands.COMMANDS``); columns
are VS Code, Neovim, the command line, MCP and the dashboard's page; a cell
names the client's own commands that reach the table command (read from the
clients' manifests and sources by :mod:`client_reach`, which says how). A
cell a person would expect filled (:data:`EXPECTED`) that no command fills
shows "—"; one nobody expects stays empty.
"""

from __future__ import annotations

from collections.abc import Callable

import client_reach
from client_reach import Client
from remora_core.front.commands import COMMANDS

CLIENTS: dict[str, Callable[[set[str]], Client]] = {
    "VS Code": client_reach.vscode,
    "Neovim": client_reach.neovim,
    "CLI": client_reach.command_line,
    "MCP": client_reach.mcp,
    "Dashboard": client_reach.dashboard,
}
"""Column → the reader of that client."""

EDITORS = ("VS Code", "Neovim")
PAGE = "Dashboard"
EXPECTED: dict[str, tuple[str, ...]] = {
    "remora.nodes.graph": (PAGE,),
    "remora.graph.runs": (PAGE,),
    "remora.node.get": (*EDITORS, "MCP", PAGE),
    "remora.node.events": EDITORS,
    "remora.nodes.search": ("CLI", "MCP"),
    "remora.events.list": ("CLI", PAGE),
    "remora.agent.chat": (*EDITORS, "CLI", "MCP", PAGE),
    "remora.agent.cancel": (*EDITORS, PAGE),
    "remora.agent.history": (*EDITORS, "MCP", PAGE),
    "remora.runs.list": (*EDITORS, "CLI", PAGE),
    "remora.proposal.accept": (*EDITORS, "CLI", PAGE),
    "remora.proposal.reject": (*EDITORS, "CLI", PAGE),
    "remora.proposal.diff": (*EDITORS, "CLI", "MCP"),
    "remora.proposals.list": (*EDITORS, "CLI", "MCP", PAGE),
    "remora.proposals.accept": (*EDITORS, "CLI"),
    "remora.agent.retry": (*EDITORS, "CLI"),
    "remora.graph.resume": (*EDITORS, "CLI"),
    "remora.proposal.revert": (*EDITORS, "CLI"),
    "remora.graph.revert": (*EDITORS, "CLI"),
    "remora.graph.run": (*EDITORS, "CLI"),
    "remora.graphs.list": EDITORS,
    "remora.graph.status": (*EDITORS, "CLI", PAGE),
    "remora.graph.cancel": (*EDITORS, "CLI", PAGE),
    "remora.checkpoint.create": (*EDITORS, "CLI"),
    "remora.checkpoint.list": (*EDITORS, "CLI"),
    "remora.checkpoint.restore": (*EDITORS, "CLI"),
    "remora.attribution": (*EDITORS, "CLI"),
    "remora.trailers": ("CLI",),
    "remora.usage": (*EDITORS, "CLI", "MCP", PAGE),
    "remora.subscriptions.list": (*EDITORS, "CLI"),
    "remora.trust.get": (*EDITORS, "CLI"),
    "remora.trust.revoke": (*EDITORS, "CLI"),
    "remora.subscriptions.add": ("CLI", PAGE),
    "remora.subscriptions.remove": (*EDITORS, "CLI", PAGE),
    "remora.node.mute": (*EDITORS, "CLI", PAGE),
    "remora.node.unmute": (*EDITORS, "CLI", PAGE),
    "remora.node.instructions.set": (*EDITORS, "CLI"),
}
"""Table command → the clients a person would expect to reach it (DESIGN §11,
§11b, §13, §15 and issues 26, 27, 28 and 29). Nothing through MCP writes or
decides (§11b); plumbing a client uses without a person asking (``remora.node.at``,
``remora.events.last_seq``) is expected nowhere."""

MISSING = "—"
INTRO = """\
Which command of each client reaches each command of the
[command table](commands.md): in VS Code the command ids of its palette (ids
are the contract; the titles are in the extension's README), in Neovim the
`:Remora…` user commands, on the command line the `remora` verbs, through MCP
the tools. "✓ (no command)" is a command the client sends from no command of
its own (a view, a lens, a code action). "—" is a cell a person would expect
filled that no command of the client fills yet; an empty cell is not expected
(MCP never writes or decides, the command line has no views). The Dashboard
column names the parts of the [`remora dashboard`](../dashboard.md) page
that send the command (its node page, runs panel, graph, …); the page sends
nothing else.

Any LSP client also gets the "Accept", "Reject with feedback…" and "Show diff"
code actions (and a change set's "Reject member N of the change set …") and
the code lenses from the server itself ([Other editors](../other-editors.md)).
"""


def cells() -> dict[str, dict[str, list[str]]]:
    """Table command → column → the client's commands for it (:func:`_own`),
    ``["✓ (no command)"]`` when only something else of the client sends it,
    ``[]`` when nothing does.
    """
    table = set(COMMANDS)
    found: dict[str, dict[str, list[str]]] = {name: {} for name in COMMANDS}
    for column, read in CLIENTS.items():
        client = read(table)
        own = {command: _own(reached) for command, reached in client.commands.items()}
        for name in COMMANDS:
            listed = sorted(c for c, names in own.items() if name in names)
            if not listed and name in client.literals:
                listed = ["✓ (no command)"]
            found[name][column] = listed
    return found


def _own(reached: dict[str, int]) -> set[str]:
    """What a client command is for: the table commands it reaches in the
    fewest calls (the lookups it makes on the way — the node at the cursor —
    are further).
    """
    nearest = min(reached.values(), default=0)
    return {name for name, depth in reached.items() if depth == nearest}


def clients_page() -> str:
    """The page's Markdown."""
    lines = [
        "# Commands in each client",
        "",
        "<!-- Generated by scripts/reference_docs.py from the command table and "
        "the clients' manifests and sources. Do not edit: change the code and run "
        "the script (a test fails while this page is stale). -->",
        "",
        INTRO,
        "| command | " + " | ".join(CLIENTS) + " |",
        "|---|" + "---|" * len(CLIENTS),
    ]
    for name, row in cells().items():
        shown = []
        for column in CLIENTS:
            listed = row[column]
            if listed and listed[0].startswith("✓"):
                shown.append(listed[0])
            elif listed:
                shown.append(", ".join(f"`{c}`" for c in listed))
            else:
                shown.append(MISSING if column in EXPECTED.get(name, ()) else "")
        lines.append(f"| [`{name}`](commands.md#{name}) | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"
