"""One command table, three doors: the same answer and the same error.

Every command of ``front/commands.COMMANDS`` is called through the language
server (``workspace/executeCommand``), the control socket of that server, and
in-process (the command line's backend with no server), on the same project,
and each door must answer alike.

The in-process door cannot open a project while a server owns it, so the
project is indexed once and copied whole (files and store, so ids are the
same) into two worlds: world A is opened in-process, world B is served by
``remora-lsp`` with its control socket. Each case runs twice in each world —
in B once through the language server and once through the socket, in A
twice in-process — so both worlds go through the same changes, and answers
are compared call by call with what differs by nature (fresh ids, times,
sequence numbers, the worlds' folders) replaced by placeholders.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from remora_cli.control.backend import BackendError, LocalBackend, ServerBackend
from remora_core.config import RemoraConfig
from remora_core.front.app import RemoraApp
from remora_core.front.commands import COMMANDS
from remora_core.front.disk_editor import DiskEditor

from remora_lsp.testing.actions import model_settings
from remora_lsp.testing.model_server import ModelServer
from remora_lsp.testing.replies import rewrite
from tests.lsp.conftest import plain, session
from tests.lsp.helpers import eventually

HELPER = "pkg/service.py::Service.helper"
ORDER = "pkg/service.py::order"
DOCUMENTED_ORDER = '''def order(name, quantity):
    """Order ``quantity`` of the item ``name``."""
    item = make_item(name)
    return item.total(quantity) + models.make_item("x").price'''
WAIT_S = 60.0
DOCS_GRAPH = """name: docs
steps:
  - id: docs
    bundle: docstring
    targets: {path: "pkg/*.py", kind: function}
"""

Args = Callable[["World"], dict[str, Any]]
CASES: list[tuple[str, Args]] = [
    ("remora.node.get", lambda w: {"node_id": HELPER}),
    ("remora.node.get", lambda w: {"node_id": w.helper_id[:7]}),
    ("remora.node.source", lambda w: {"node_id": HELPER}),
    ("remora.node.at", lambda w: {"uri": w.uri("pkg/service.py"), "position": w.at}),
    ("remora.node.at", lambda w: {"path": "pkg/service.py", "position": w.at}),
    ("remora.node.events", lambda w: {"node_id": HELPER, "limit": 5}),
    ("remora.nodes.search", lambda w: {"query": "helper"}),
    ("remora.nodes.graph", lambda w: {}),
    ("remora.nodes.graph", lambda w: {"offset": 2, "limit": 3}),
    ("remora.agent.chat", lambda w: {"node_id": HELPER, "message": "Who are you?"}),
    ("remora.agent.history", lambda w: {"node_id": HELPER}),
    ("remora.runs.list", lambda w: {}),
    ("remora.events.list", lambda w: {"node_id": HELPER, "limit": 3}),
    ("remora.events.last_seq", lambda w: {}),
    ("remora.agent.run", lambda w: {"node_id": ORDER, "instruction": "docstring"}),
    ("remora.proposals.list", lambda w: {"status": "pending"}),
    ("remora.proposals.list", lambda w: {"uri": w.uri("pkg/service.py")}),
    ("remora.proposal.diff", lambda w: {"proposal_id": w.pending()}),
    ("remora.agent.cancel", lambda w: {"run_id": "run_000000000000"}),
    ("remora.agent.respond", lambda w: {"question_id": "q_none", "answer": "yes"}),
    ("remora.agent.retry", lambda w: {"run_id": "run_000000000000"}),
    ("remora.agent.forget", lambda w: {"node_id": HELPER}),
    (  # a member of what is no change set: the same refusal at each door
        "remora.proposal.reject",
        lambda w: {"proposal_id": w.proposals[-1], "members": [0], "feedback": "No."},
    ),
    (
        "remora.proposal.reject",
        lambda w: {"proposal_id": w.proposals[-1], "feedback": "No.", "retry": False},
    ),
    ("remora.proposal.accept", lambda w: {"proposal_id": w.proposals[-1]}),
    (
        "remora.proposals.accept",
        lambda w: {"proposal_ids": [w.proposals[-1], "pr_000000000000"]},
    ),
    ("remora.proposal.revert", lambda w: {"proposal_id": w.proposals[-1]}),
    ("remora.graph.revert", lambda w: {"graph_run_id": "gr_000000000000"}),
    ("remora.graph.run", lambda w: {"graph": {"name": "bad", "steps": []}}),
    ("remora.graph.run", lambda w: {"graph": "no-such-graph"}),
    ("remora.graphs.list", lambda w: {}),
    ("remora.graph.runs", lambda w: {"limit": 5}),
    ("remora.graph.status", lambda w: {"graph_run_id": "gr_000000000000"}),
    ("remora.graph.cancel", lambda w: {"graph_run_id": "gr_000000000000"}),
    ("remora.graph.resume", lambda w: {"graph_run_id": "gr_000000000000"}),
    ("remora.checkpoint.create", lambda w: {"label": "three doors"}),
    ("remora.checkpoint.list", lambda w: {}),
    ("remora.checkpoint.restore", lambda w: {"checkpoint_id": w.checkpoint()}),
    (
        "remora.checkpoint.restore",
        lambda w: {"checkpoint_id": w.checkpoint(), "files": True},
    ),
    ("remora.attribution", lambda w: {"uri": w.uri("pkg/service.py")}),
    ("remora.trailers", lambda w: {}),
    ("remora.usage", lambda w: {}),
    ("remora.usage", lambda w: {"since": "2026-01-01", "limit": 5}),
    ("remora.subscriptions.list", lambda w: {"node_id": HELPER}),
    (
        "remora.subscriptions.add",
        lambda w: {"node_id": HELPER, "pattern": {"event_types": ["agent_failed"]}},
    ),
    (
        "remora.subscriptions.remove",
        lambda w: {"node_id": HELPER, "subscription_id": w.subscription()},
    ),
    ("remora.node.mute", lambda w: {"node_id": ORDER}),
    ("remora.node.unmute", lambda w: {"node_id": ORDER}),
    (
        "remora.node.instructions.set",
        lambda w: {"node_id": ORDER, "text": "Keep prices in integer cents."},
    ),
    ("remora.node.instructions.set", lambda w: {"node_id": ORDER, "text": "x" * 5000}),
    ("remora.node.get", lambda w: {"node_id": ORDER}),
    ("remora.trust.get", lambda w: {}),
    ("remora.trust.set", lambda w: {"trusted": False, "uri": w.uri("pkg")}),
    ("remora.trust.revoke", lambda w: {}),
]
"""Each command with arguments it can answer; ``trust.revoke`` last (it
restarts the language server's project)."""

VOLATILE_KEYS = {
    "timestamp",
    "created_at",
    "started_at",
    "ended_at",
    "decided_at",
    "queued_at",
    "accepted_at",
    "seq",
    "last_seq",
    "seconds",
    "at",
}
FRESH_IDS = re.compile(r"\b(run|pr|cp|gr|ev|co|sub)_[0-9a-f]{8,32}\b")


class World:
    """One copy of the project and what its calls made."""

    def __init__(self, root: Path, helper_id: str) -> None:
        self.root = root
        self.helper_id = helper_id
        self.at = {"line": 19, "character": 8}  # in ``def helper``
        self.proposals: list[str] = []
        self.checkpoints: list[str] = []
        self.subscriptions: list[str] = []

    def uri(self, path: str) -> str:
        return (self.root / path).as_uri()

    def pending(self) -> str:
        return self.proposals[-1]

    def checkpoint(self) -> str:
        return self.checkpoints[0]

    def subscription(self) -> str:
        return self.subscriptions[-1] if self.subscriptions else "sub_none"

    def saw(self, name: str, answer: Any) -> None:
        """Remember what later cases refer to."""
        if name == "remora.proposals.list":
            self.proposals = [p["id"] for p in reversed(answer)] or self.proposals
        elif name == "remora.checkpoint.create":
            self.checkpoints.append(answer["checkpoint_id"])
        elif name == "remora.subscriptions.add":
            self.subscriptions.append(answer["subscription_id"])

    def normal(self, value: Any) -> Any:
        """``value`` with what differs by nature replaced by placeholders."""
        if isinstance(value, dict):
            return {
                k: (0 if k in VOLATILE_KEYS and v is not None else self.normal(v))
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.normal(item) for item in value]
        if isinstance(value, str):
            value = value.replace(self.root.as_uri(), "<root>")
            value = value.replace(str(self.root), "<root>")
            return FRESH_IDS.sub(lambda m: f"{m.group(1)}_*", value)
        return value


Outcome = tuple[str, Any]
"""``("answer", json)`` or ``("error", (kind, message))``."""


def differences(door: Any, in_process: Any, where: str = "") -> list[str]:
    """Where two answers differ, as ``path: door's value != in-process value``."""
    if isinstance(door, dict) and isinstance(in_process, dict):
        return [
            found
            for key in sorted(set(door) | set(in_process))
            for found in differences(
                door.get(key, "<absent>"),
                in_process.get(key, "<absent>"),
                f"{where}.{key}",
            )
        ]
    if isinstance(door, list | tuple) and isinstance(in_process, list | tuple):
        if len(door) != len(in_process):
            return [f"{where}: {len(door)} items != {len(in_process)}: {door!r:.300}"]
        return [
            found
            for index, pair in enumerate(zip(door, in_process, strict=True))
            for found in differences(*pair, f"{where}[{index}]")
        ]
    return (
        [] if door == in_process else [f"{where}: {door!r:.200} != {in_process!r:.200}"]
    )


def assert_alike(name: str, door: str, answer: Outcome, in_process: Outcome) -> None:
    found = differences(answer, in_process)
    assert not found, f"{name} through {door}:\n" + "\n".join(found[:20])


async def answer_of(call) -> Outcome:
    try:
        return "answer", await call
    except BackendError as error:
        return "error", (error.kind, str(error))
    except JsonRpcException as error:
        data = error.data if isinstance(error.data, dict) else {}
        return "error", (data.get("kind"), error.message)


async def via_lsp(client, name: str, arguments: Any) -> Any:
    return plain(
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=[arguments])
        )
    )


async def settle(call) -> None:
    """Wait until no run is queued, running or waiting (answers do not move)."""

    async def idle() -> bool:
        runs = await call("remora.runs.list", {})
        return not [r for r in runs if r["status"] in ("queued", "running", "waiting")]

    await eventually(idle, timeout=WAIT_S)


def person_settings(person_files: Path, model: ModelServer) -> None:
    """Agents of both worlds (the person's own settings) go to ``model``."""
    settings = model_settings(model)
    settings["model"]["preload"] = False
    (person_files / "config" / "config.yaml").write_text(yaml.safe_dump(settings))


@pytest.fixture
async def worlds(workspace: Path, tmp_path: Path, person_files: Path):
    with ModelServer() as model:
        model.on("docstring", rewrite(DOCUMENTED_ORDER))
        person_settings(person_files, model)
        first = await RemoraApp.open(workspace, RemoraConfig(), DiskEditor(workspace))
        helper_id = first.nodes.find(HELPER).id
        await first.close()  # indexed, ids minted: both worlds share them
        graphs = workspace / ".remora" / "graphs"
        graphs.mkdir(parents=True, exist_ok=True)
        (graphs / "docs.yaml").write_text(DOCS_GRAPH)
        (graphs / "broken.yaml").write_text("name: broken\nsteps: []\n")
        a, b = tmp_path / "a", tmp_path / "b"
        shutil.copytree(workspace, a)
        shutil.copytree(workspace, b)
        yield World(a, helper_id), World(b, helper_id)


async def test_every_command_answers_alike_through_the_three_doors(worlds):
    a, b = worlds
    assert {name for name, _ in CASES} == set(COMMANDS)  # a case for each command
    local = await LocalBackend.open(a.root)
    try:
        async with session("visual-studio-code", b.root) as client:
            socket = await eventually(lambda: ServerBackend.connect(b.root), WAIT_S)
            try:
                for name, arguments in CASES:
                    first, second = await _case_in_a(local, a, name, arguments)
                    lsp, via_socket = await _case_in_b(
                        client, socket, b, name, arguments
                    )
                    if name == "remora.trust.revoke":  # the server restarted
                        await socket.close()
                        socket = await _reconnect(b.root)
                    assert_alike(name, "lsp", b.normal(lsp), a.normal(first))
                    assert_alike(name, "socket", b.normal(via_socket), a.normal(second))
            finally:
                await socket.close()
    finally:
        await local.close()


async def _case_in_a(local, world: World, name: str, arguments: Args):
    outcomes = []
    for _ in range(2):
        outcome = await answer_of(local.call(name, arguments(world)))
        if outcome[0] == "answer":
            world.saw(name, outcome[1])
        await settle(local.call)
        outcomes.append(outcome)
    if name == "remora.agent.run":
        await _listed(local.call, world)
    return outcomes


async def _case_in_b(client, socket, world: World, name: str, arguments: Args):
    lsp = await answer_of(via_lsp(client, name, arguments(world)))
    if lsp[0] == "answer":
        world.saw(name, lsp[1])
    await settle(socket.call)
    via_socket = await answer_of(socket.call(name, arguments(world)))
    if via_socket[0] == "answer":
        world.saw(name, via_socket[1])
    await settle(socket.call)
    if name == "remora.agent.run":
        await _listed(socket.call, world)
    return lsp, via_socket


async def _listed(call, world: World) -> None:
    """Learn the proposals the runs made (later cases name them)."""
    world.saw("remora.proposals.list", await call("remora.proposals.list", {}))


async def _reconnect(root: Path) -> ServerBackend:
    async def connected():
        await asyncio.sleep(0.1)
        return await ServerBackend.connect(root)

    return await eventually(connected, timeout=WAIT_S)


async def test_an_unknown_argument_is_refused_alike_through_the_three_doors(worlds):
    a, b = worlds
    arguments = {"no_such_key": 1}
    local = await LocalBackend.open(a.root)
    try:
        in_process = {n: await answer_of(local.call(n, arguments)) for n in COMMANDS}
    finally:
        await local.close()
    async with session("neovim", b.root) as client:
        socket = await eventually(lambda: ServerBackend.connect(b.root), WAIT_S)
        try:
            for name in sorted(COMMANDS):
                lsp = await answer_of(via_lsp(client, name, arguments))
                via_socket = await answer_of(socket.call(name, arguments))
                assert in_process[name][0] == "error", name
                kind, message = in_process[name][1]
                assert kind == "invalid", name
                assert "no_such_key: unknown argument" in message, message
                assert lsp == via_socket == in_process[name], name
        finally:
            await socket.close()
