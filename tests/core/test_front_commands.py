"""The commands of the control socket and the command line (``front/commands.py``)
on a real project opened through the front door: malformed arguments get one
readable error from their pydantic model, well-formed ones an answer.
"""

from __future__ import annotations

import pytest
from remora_core.config import RemoraConfig
from remora_core.front.app import RemoraApp
from remora_core.front.commands import call
from remora_core.front.disk_editor import DiskEditor
from remora_core.front.errors import InvalidArguments

HELPER = "pkg/service.py::Service.helper"


@pytest.fixture
async def app(workspace):
    app = await RemoraApp.open(workspace, RemoraConfig(), DiskEditor(workspace))
    yield app
    await app.close()


@pytest.mark.parametrize(
    ("command", "arguments", "needles"),
    [
        ("remora.node.at", {"path": "pkg/service.py"}, ("position", "required")),
        (
            "remora.node.at",
            {"path": "pkg/service.py", "position": {"line": "one", "character": 0}},
            ("position.line",),
        ),
        (
            "remora.node.at",
            {"path": "pkg/service.py", "position": {"line": -1, "character": 0}},
            ("position.line", "greater than or equal to 0"),
        ),
        (
            "remora.node.at",
            {"position": {"line": 0, "character": 0}},
            ("remora.node.at wants {uri or path, position}",),
        ),
        (
            "remora.node.at",
            {"path": "pkg/service.py", "position": {"line": 0}},
            ("position.character", "required"),
        ),
        ("remora.node.events", {}, ("node_id", "required")),
        ("remora.node.events", {"node_id": HELPER, "limit": 0}, ("limit",)),
        ("remora.agent.history", {"node_id": HELPER, "limit": 5000}, ("limit",)),
        ("remora.agent.history", {"node": HELPER}, ("node", "unknown argument")),
        ("remora.proposal.reject", {"proposal_id": "pr_0", "retry": "no"}, ("retry",)),
        ("remora.node.get", [HELPER], ("one JSON object argument",)),
    ],
)
async def test_malformed_arguments_get_one_readable_error(
    app, command, arguments, needles
):
    with pytest.raises(InvalidArguments) as caught:
        await call(app, command, arguments)
    message = str(caught.value)
    assert message.startswith(command) or "one JSON object" in message, message
    for needle in needles:
        assert needle in message, message
    assert "Traceback" not in message and "\n" not in message


async def test_well_formed_arguments_are_answered(app):
    card = await call(
        app,
        "remora.node.at",
        {"path": "pkg/service.py", "position": {"line": 0, "character": 0}},
    )
    assert card is None or card["file_path"] == "pkg/service.py"
    helper = await call(app, "remora.node.get", {"node_id": HELPER})
    line = helper["start_line"]
    at = await call(
        app,
        "remora.node.at",
        {"path": "pkg/service.py", "position": {"line": line + 1, "character": 4}},
    )
    assert at["id"] == helper["id"]
    assert await call(app, "remora.agent.history", {"node_id": HELPER}) == []
    assert await call(app, "remora.node.events", {"node_id": helper["id"]}) == []


async def test_the_node_graph_comes_whole_in_pages_with_containment_and_calls(app):
    every = await call(app, "remora.nodes.search", {"limit": 10_000})
    pages, offset = [], 0
    while offset is not None:
        page = await call(app, "remora.nodes.graph", {"offset": offset, "limit": 7})
        assert page["total"] == len(every)
        assert len(page["nodes"]) <= 7
        pages.append(page)
        offset = page["next_offset"]
    nodes = [n for page in pages for n in page["nodes"]]
    assert sorted(n["id"] for n in nodes) == sorted(n["id"] for n in every)
    by_id = {n["id"]: n for n in nodes}
    helper = await call(app, "remora.node.get", {"node_id": HELPER})
    assert by_id[helper["id"]]["parent_id"] == helper["parent"]["id"]
    assert by_id[helper["id"]]["agent_status"] == "idle"
    calls = {tuple(c) for page in pages for c in page["calls"]}
    for callee in helper["callees"]:
        assert (helper["id"], callee["id"]) in calls
    assert helper["callees"], "the fixture's helper calls order()"
    with pytest.raises(InvalidArguments, match="limit"):
        await call(app, "remora.nodes.graph", {"limit": 20_001})
