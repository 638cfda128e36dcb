"""Several workspace folders: one app each, and every command reaches the
right one (``remora_lsp/commands.py`` routes by what the arguments name).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from remora_lsp.testing.actions import command
from remora_lsp.testing.client import start_session
from remora_lsp.testing.waiting import wait_indexed
from tests.conftest import WORKSPACES

HELPER = "pkg/service.py::Service.helper"


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    first, second = tmp_path / "first", tmp_path / "second"
    shutil.copytree(WORKSPACES / "basic", first)
    shutil.copytree(WORKSPACES / "basic", second)
    return first, second


def both(first: Path, second: Path):
    def prepare(params: types.InitializeParams) -> None:
        params.workspace_folders = [
            types.WorkspaceFolder(uri=root.as_uri(), name=root.name)
            for root in (first, second)
        ]

    return prepare


async def test_commands_reach_the_folder_that_has_what_they_name(folders):
    first, second = folders
    async with start_session(
        "visual-studio-code", first, prepare=both(first, second)
    ) as client:
        await wait_indexed(client, runs=2)
        where = {"line": 19, "character": 8}  # in ``def helper``
        in_second = await command(
            client,
            "remora.node.at",
            {"uri": (second / "pkg/service.py").as_uri(), "position": where},
        )
        in_first = await command(
            client,
            "remora.node.at",
            {"uri": (first / "pkg/service.py").as_uri(), "position": where},
        )
        assert in_second["uri"] == (second / "pkg/service.py").as_uri()
        assert in_first["uri"] == (first / "pkg/service.py").as_uri()
        assert in_second["id"] != in_first["id"]  # ids are minted per project

        # An id, or a unique prefix of it, finds its folder whichever it is.
        for reference in (in_second["id"], in_second["id"][:8]):
            card = await command(client, "remora.node.get", {"node_id": reference})
            assert card["uri"] == in_second["uri"]
        # A name both folders have is the first folder's.
        named = await command(client, "remora.node.get", {"node_id": HELPER})
        assert named["id"] == in_first["id"]
        history = await command(
            client, "remora.agent.history", {"node_id": in_second["id"]}
        )
        assert history == []

        # Listings join every folder's answers; the first folder runs graphs
        # and keeps checkpoints.
        found = await command(client, "remora.nodes.search", {"query": "helper"})
        assert {n["id"] for n in found} >= {in_first["id"], in_second["id"]}
        trust = await command(client, "remora.trust.get", {})
        assert sorted(row["root"] for row in trust) == sorted(
            root.as_uri() for root in (first, second)
        )
        one = await command(
            client, "remora.trust.get", {"uri": (second / "pkg").as_uri()}
        )
        assert [row["root"] for row in one] == [second.as_uri()]
        await command(client, "remora.checkpoint.create", {"label": "here"})
        assert (first / ".remora" / "remora.db").exists()
        listed = await command(client, "remora.checkpoint.list", {})
        assert [c["label"] for c in listed] == ["here"]

        # What no folder knows is an error naming it.
        with pytest.raises(JsonRpcInvalidParams, match="no node with id rm_zzzzzzzz"):
            await command(client, "remora.node.get", {"node_id": "rm_zzzzzzzz"})
        assert await command(
            client, "remora.agent.cancel", {"run_id": "run_000000000000"}
        ) == {"cancelled": False}
