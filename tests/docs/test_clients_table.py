"""The table of commands × clients (``docs/reference/clients.md``).

Generated from the command table and the clients' manifests and sources
(``scripts/clients_page.py``, ``scripts/client_reach.py``). Asserted here:
the cells a person relies on today are filled (:data:`MUST_BE_FILLED`, as on
``main`` when this was written: the lead tightens it as the clients grow
towards ``clients_page.EXPECTED``); every other expected cell shows "—"; and
the reader of each client's sources finds what a command reaches the way the
generator's docstring says — through calls, past shared helpers, not through
a name only compared with.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import client_reach  # noqa: E402
import clients_page  # noqa: E402

MUST_BE_FILLED = [
    ("remora.node.get", "VS Code"),
    ("remora.node.get", "Neovim"),
    ("remora.node.get", "MCP"),
    ("remora.node.events", "Neovim"),
    ("remora.nodes.search", "CLI"),
    ("remora.nodes.search", "MCP"),
    ("remora.events.list", "CLI"),
    ("remora.agent.chat", "VS Code"),
    ("remora.agent.chat", "Neovim"),
    ("remora.agent.chat", "CLI"),
    ("remora.agent.chat", "MCP"),
    ("remora.agent.cancel", "VS Code"),
    ("remora.agent.cancel", "Neovim"),
    ("remora.agent.history", "Neovim"),
    ("remora.agent.history", "MCP"),
    ("remora.runs.list", "Neovim"),
    ("remora.runs.list", "CLI"),
    ("remora.proposal.accept", "VS Code"),
    ("remora.proposal.accept", "Neovim"),
    ("remora.proposal.accept", "CLI"),
    ("remora.proposal.reject", "VS Code"),
    ("remora.proposal.reject", "Neovim"),
    ("remora.proposal.reject", "CLI"),
    ("remora.proposal.diff", "VS Code"),
    ("remora.proposal.diff", "Neovim"),
    ("remora.proposal.diff", "CLI"),
    ("remora.proposal.diff", "MCP"),
    ("remora.proposals.list", "VS Code"),
    ("remora.proposals.list", "CLI"),
    ("remora.proposals.list", "MCP"),
    ("remora.proposals.accept", "CLI"),
    ("remora.graph.run", "CLI"),
    ("remora.graph.status", "CLI"),
    ("remora.graph.cancel", "CLI"),
    ("remora.checkpoint.create", "CLI"),
    ("remora.checkpoint.list", "CLI"),
    ("remora.checkpoint.restore", "CLI"),
    ("remora.attribution", "CLI"),
    ("remora.trailers", "CLI"),
]
"""(table command, client) cells filled on ``main`` today. Still to fill
(issue 26): VS Code and Neovim graph runs, checkpoints, blame, the project's
proposals and accepting several; VS Code history, runs and node events."""


@pytest.fixture(scope="module")
def cells():
    return clients_page.cells()


def test_every_cell_a_person_relies_on_today_is_filled(cells):
    empty = [
        (name, client) for name, client in MUST_BE_FILLED if not cells[name][client]
    ]
    assert empty == []


def test_cells_expected_but_empty_show_a_dash(cells):
    page = clients_page.clients_page()
    rows = {
        line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
        for line in page.splitlines()
        if line.startswith("| [`remora.")
    }
    assert len(rows) == len(cells)
    for name, shown in rows.items():
        command = name.split("`")[1]
        for column, text in zip(clients_page.CLIENTS, shown, strict=True):
            expected = column in clients_page.EXPECTED.get(command, ())
            if cells[command][column]:
                assert text not in ("", "—"), (command, column)
            else:
                assert text == ("—" if expected else ""), (command, column)


def test_each_clients_own_commands_are_read(cells):
    assert cells["remora.proposal.accept"]["VS Code"] == ["remora.acceptProposal"]
    assert cells["remora.proposal.accept"]["Neovim"] == [":RemoraAccept"]
    assert cells["remora.proposals.accept"]["CLI"] == ["remora accept"]
    assert cells["remora.agent.history"]["MCP"] == ["node_history"]


TS_EXTENSION = """\
export class Commands {
  private async exec(command: string, argument: object): Promise<unknown> {
    return send(command, argument);
  }

  async nodeAtCursor(): Promise<unknown> {
    return this.exec("remora.node.at", {});
  }

  async runGraph(args?: object): Promise<unknown> {
    await this.nodeAtCursor();
    const name = await pick();
    return this.exec("remora.graph.run", { graph: name });
  }

  async status(): Promise<unknown> {
    await this.nodeAtCursor();
    return this.exec('remora.graph.status', {});
  }

  register(): void {
    add("remora.runGraph", (a) => this.runGraph(a));
    add("remora.graphStatus", () =>
      this.status(),
    );
    add("remora.showNode", () => this.nodeAtCursor());
  }
}

function rewrite(lens: Lens): Lens {
  if (lens.command === "remora.node.get") return lens;
  return lens;
}
"""
LUA_PLUGIN = """\
local M = {}

local function run_graph(client, name)
  server().execute(client, 'remora.graph.run', { graph = name })
end

function M.graph(args)
  if args.fargs[1] == 'run' then
    run_graph(nil, args.fargs[2])
  end
end

function M.create()
  local function command(name, fn, opts)
    vim.api.nvim_create_user_command(name, fn, opts)
  end
  command('RemoraGraph', function(args)
    M.graph(args)
  end, { nargs = '+' })
  vim.api.nvim_create_user_command('RemoraBlame', function()
    require('remora.blame').toggle()
  end, {})
end

return M
"""
LUA_BLAME = """\
local M = {}

function M.toggle()
  vim.lsp.buf_request(0, 'workspace/executeCommand', {
    command = 'remora.attribution',
  })
end

return M
"""


def test_the_readers_follow_calls_past_shared_helpers(tmp_path: Path):
    table = {
        "remora.node.at",
        "remora.node.get",
        "remora.graph.run",
        "remora.graph.status",
        "remora.attribution",
    }
    vscode = tmp_path / "vscode"
    (vscode / "src").mkdir(parents=True)
    commands = [
        {"command": c, "title": c}
        for c in ("remora.runGraph", "remora.graphStatus", "remora.showNode")
    ]
    (vscode / "package.json").write_text(
        json.dumps({"contributes": {"commands": commands}})
    )
    (vscode / "src" / "commands.ts").write_text(TS_EXTENSION)
    nvim = tmp_path / "nvim" / "lua" / "remora"
    nvim.mkdir(parents=True)
    (nvim / "commands.lua").write_text(LUA_PLUGIN)
    (nvim / "blame.lua").write_text(LUA_BLAME)

    read = client_reach.vscode(table, vscode)
    assert read.commands == {
        "remora.runGraph": {"remora.graph.run": 1},
        "remora.graphStatus": {"remora.graph.status": 1},
        "remora.showNode": {"remora.node.at": 1},  # the shared helper is all it has
    }
    assert "remora.node.get" not in read.literals  # only compared with

    read = client_reach.neovim(table, tmp_path / "nvim")
    assert read.commands == {
        ":RemoraGraph": {"remora.graph.run": 2},
        ":RemoraBlame": {"remora.attribution": 1},
    }
