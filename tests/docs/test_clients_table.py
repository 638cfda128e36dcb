"""The table of commands × clients (``docs/reference/clients.md``).

Generated from the command table and the clients' manifests and sources
(``scripts/clients_page.py``, ``scripts/client_reach.py``). Asserted here:
every cell a person would expect (``clients_page.EXPECTED``) is filled; an
expected cell left empty would show "—"; each editor's ``reach.json`` says
what its sources do, and one that drifted is named.
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


@pytest.fixture(scope="module")
def cells():
    return clients_page.cells()


def test_every_cell_a_person_expects_is_filled(cells):
    empty = [
        (name, client)
        for name, clients in clients_page.EXPECTED.items()
        for client in clients
        if not cells[name][client]
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
    assert cells["remora.proposal.accept"]["VS Code"] == [
        "remora.acceptChangeSet",
        "remora.acceptMember",
        "remora.acceptProposal",
    ]
    assert cells["remora.proposal.accept"]["Neovim"] == [":RemoraAccept", ":RemoraDiff"]
    assert cells["remora.proposals.accept"]["CLI"] == ["remora accept"]
    assert cells["remora.agent.history"]["MCP"] == ["node_history"]


def test_the_dashboard_lets_through_exactly_what_its_page_sends():
    from remora_cli.dashboard import web

    page = client_reach.dashboard(set(clients_page.COMMANDS))
    assert page.literals == set(web.ALLOWED)
    node_page = page.commands["node page"].keys()
    assert {"remora.proposal.accept", "remora.node.mute"} <= node_page


@pytest.mark.parametrize(
    "read", [client_reach.vscode_declared, client_reach.neovim_declared]
)
def test_each_editors_reach_json_says_what_its_sources_do(read):
    table = set(clients_page.COMMANDS)
    assert client_reach.problems(read(table), table) == []


TS_SOURCE = """\
export async function runGraph(): Promise<unknown> {
  return exec("remora.graph.run", { graph: await pick() });
}
function rewrite(lens: Lens): Lens {
  if (lens.command === "remora.node.get") return lens;  // compared, not sent
  return exec(`remora.attribution`, {});
}
"""
LUA_SOURCE = """\
vim.api.nvim_create_user_command('RemoraGraph', function(args)
  server().execute(nil, 'remora.graph.run', { graph = args.fargs[1] })
end, {})
command('RemoraBlame', function() end, {})
"""


def test_a_reach_json_that_drifted_from_its_client_is_named(tmp_path: Path):
    table = {"remora.graph.run", "remora.node.get", "remora.attribution"}
    vscode = tmp_path / "vscode"
    (vscode / "src").mkdir(parents=True)
    commands = [{"command": c} for c in ("remora.runGraph", "remora.blame")]
    (vscode / "package.json").write_text(
        json.dumps({"contributes": {"commands": commands}})
    )
    (vscode / "src" / "graph.ts").write_text(TS_SOURCE)
    (vscode / "reach.json").write_text(
        json.dumps(
            {
                "commands": {
                    "remora.runGraph": ["remora.graph.run", "remora.node.get"],
                    "remora.gone": ["remora.graph.nope"],
                }
            }
        )
    )
    read = client_reach.vscode_declared(table, vscode)
    assert read.client.commands["remora.runGraph"] == {
        "remora.graph.run": 0,
        "remora.node.get": 0,
    }
    assert client_reach.problems(read, table) == [
        "remora.blame: a command of the client, missing from reach.json",
        "remora.gone: in reach.json, but the client has no such command",
        "remora.graph.nope: in reach.json, but not a command of the table",
        "remora.node.get: in reach.json, but the sources never send it",
        "remora.attribution: sent by the sources, but reach.json does not say where",
    ]

    nvim = tmp_path / "nvim"
    (nvim / "lua" / "remora").mkdir(parents=True)
    (nvim / "lua" / "remora" / "commands.lua").write_text(LUA_SOURCE)
    (nvim / "reach.json").write_text(
        json.dumps({"commands": {":RemoraGraph": ["remora.graph.run"]}})
    )
    read = client_reach.neovim_declared(table, nvim)
    assert client_reach.problems(read, table) == [
        ":RemoraBlame: a command of the client, missing from reach.json"
    ]
