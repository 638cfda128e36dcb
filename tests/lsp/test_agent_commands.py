"""Every Remora command refuses bad arguments and unknown ids with a JSON-RPC
error a person can read, and the server announces every command.

Sessions run the real server with Neovim's and VS Code's capabilities; the
scripted model server makes the proposals some cases need.
"""

from __future__ import annotations

import re

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from remora_core.front.commands import COMMANDS as TABLE

from remora_lsp.testing.actions import command
from remora_lsp.testing.actions import events as of_type
from remora_lsp.testing.actions import model_settings as settings
from remora_lsp.testing.client import initialize_params, launch
from remora_lsp.testing.model_server import ModelServer
from tests.lsp.conftest import EDITORS, plain, session
from tests.lsp.helpers import Buffer, eventually, wait_indexed
from tests.lsp.test_agent_runs import (
    NEW_HELPER,
    node_of,
    propose,
    remora_diagnostics,
)

COMMANDS = sorted(TABLE)
"""Every command of the table: the server announces each, without a list of
its own (adding one to ``front/commands.py`` is enough)."""
UNKNOWN_NODE = "rm_zzzzzzzz"
UNKNOWN_PROPOSAL = "pr_000000000000"
NODE_SHAPE = "a node is named by its id (rm_…), a unique id prefix or path::qualified"
PROPOSAL_SHAPE = "proposal_id must look like pr_ followed by 12 hex digits"


async def execute(client, name: str, arguments):
    """``workspace/executeCommand`` with ``arguments`` exactly as given."""
    return plain(
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=arguments)
        )
    )


async def refused(client, name: str, arguments, *needles: str) -> str:
    """Run a command that must fail with InvalidParams naming ``needles``."""
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await execute(client, name, arguments)
    message = caught.value.message
    for needle in needles:
        assert needle in message, (name, arguments, message)
    assert "Traceback" not in message and len(message) < 300, message
    return message


def bad_arguments(uri: str, node_id: str) -> list[tuple[str, list, tuple[str, ...]]]:
    """(command, arguments, what the error must say) for every command."""
    position = {"line": 0, "character": 0}
    return [
        # remora.agent.chat {node_id, message}
        ("remora.agent.chat", [{}], ("message", "Field required")),
        ("remora.agent.chat", [{"node_id": node_id}], ("message",)),
        (
            "remora.agent.chat",
            [{"node_id": node_id, "message": " "}],
            ("message", "must not be blank"),
        ),
        (
            "remora.agent.chat",
            [{"node_id": node_id, "message": 5}],
            ("message", "valid string"),
        ),
        ("remora.agent.chat", [{"message": "hi"}], ("node_id", "Field required")),
        (
            "remora.agent.chat",
            [{"node_id": 5, "message": "hi"}],
            ("node_id", "valid string", "got 5"),
        ),
        (
            "remora.agent.chat",
            [{"node_id": UNKNOWN_NODE, "message": "hi"}],
            (f"no node with id {UNKNOWN_NODE}",),
        ),
        # remora.agent.run {node_id, instruction?}
        ("remora.agent.run", [{}], ("node_id", "Field required")),
        ("remora.agent.run", [{"node_id": ["rm_x"]}], ("node_id", "valid string")),
        (
            "remora.agent.run",
            [{"node_id": node_id, "instruction": 5}],
            ("instruction",),
        ),
        ("remora.agent.run", [{"node_id": UNKNOWN_NODE}], (UNKNOWN_NODE,)),
        # remora.agent.cancel {run_id}
        ("remora.agent.cancel", [{}], ("run_id", "Field required")),
        ("remora.agent.cancel", [{"run_id": 7}], ("run_id", "got 7")),
        ("remora.agent.cancel", [{"run_id": "latest"}], ("run_id", "'latest'")),
        # remora.agent.respond {question_id, answer}
        ("remora.agent.respond", [{"question_id": "q_1"}], ("answer",)),
        ("remora.agent.respond", [{"question_id": "q_1", "answer": ""}], ("answer",)),
        ("remora.agent.respond", [{"question_id": "q_1", "answer": 1}], ("answer",)),
        ("remora.agent.respond", [{"answer": "yes"}], ("question_id",)),
        (
            "remora.agent.respond",
            [{"question_id": 3, "answer": "yes"}],
            ("question_id",),
        ),
        # remora.agent.forget {node_id}
        ("remora.agent.forget", [{}], ("node_id", "Field required")),
        ("remora.agent.forget", [{"node_id": UNKNOWN_NODE}], (UNKNOWN_NODE,)),
        # remora.proposal.accept / reject / diff {proposal_id}
        *[
            case
            for name in (
                "remora.proposal.accept",
                "remora.proposal.reject",
                "remora.proposal.diff",
            )
            for case in (
                (name, [{}], ("proposal_id", "Field required")),
                (name, [{"proposal_id": 12}], ("proposal_id", "got 12")),
                (name, [{"proposal_id": "pr_xyz"}], ("no proposal pr_xyz",)),
                (name, [{"proposal_id": "xyz"}], (PROPOSAL_SHAPE, "'xyz'")),
                (
                    name,
                    [{"proposal_id": UNKNOWN_PROPOSAL}],
                    (f"no proposal {UNKNOWN_PROPOSAL}",),
                ),
            )
        ],
        # remora.proposals.list {uri?, status?}
        (
            "remora.proposals.list",
            [{"status": "maybe"}],
            ("status", "pending", "'maybe'"),
        ),
        ("remora.proposals.list", [{"status": 1}], ("status",)),
        ("remora.proposals.list", [{"uri": 5}], ("uri", "valid string")),
        # remora.node.get {node_id}
        ("remora.node.get", [{}], ("node_id", "Field required")),
        ("remora.node.get", [{"node_id": "RM_ABCDEFGH"}], (NODE_SHAPE,)),
        ("remora.node.get", [{"node_id": UNKNOWN_NODE}], (UNKNOWN_NODE,)),
        # remora.node.at {uri, position}
        ("remora.node.at", [{}], ("position",)),
        ("remora.node.at", [{"uri": uri}], ("position",)),
        ("remora.node.at", [{"uri": uri, "position": {"line": "1"}}], ("position",)),
        ("remora.node.at", [{"uri": uri, "position": [0, 0]}], ("position",)),
        ("remora.node.at", [{"uri": 5, "position": position}], ("uri",)),
        (
            "remora.node.at",
            [{"uri": "file:///no/such/file.py", "position": position}],
            ("Remora does not know file:///no/such/file.py",),
        ),
        # remora.node.events {node_id, limit?}
        ("remora.node.events", [{}], ("node_id", "Field required")),
        ("remora.node.events", [{"node_id": UNKNOWN_NODE}], (UNKNOWN_NODE,)),
        (
            "remora.node.events",
            [{"node_id": node_id, "limit": 0}],
            ("limit", "greater than or equal to 1", "got 0"),
        ),
        ("remora.node.events", [{"node_id": node_id, "limit": "9"}], ("limit",)),
        ("remora.node.events", [{"node_id": node_id, "limit": True}], ("limit",)),
        (
            "remora.node.events",
            [{"node_id": node_id, "limit": 1001}],
            ("limit", "less than or equal to 1000", "1001"),
        ),
        ("remora.node.events", [{"node_id": "nope", "limit": 5}], (NODE_SHAPE,)),
        # remora.node.at: whole, non-negative line and character
        (
            "remora.node.at",
            [{"uri": uri, "position": {"line": True, "character": 0}}],
            ("position",),
        ),
        (
            "remora.node.at",
            [{"uri": uri, "position": {"line": -1, "character": 0}}],
            ("position",),
        ),
        # remora.agent.history {node_id, limit?}
        ("remora.agent.history", [{}], ("node_id", "Field required")),
        ("remora.agent.history", [{"node_id": UNKNOWN_NODE}], (UNKNOWN_NODE,)),
        (
            "remora.agent.history",
            [{"node_id": node_id, "limit": 0}],
            ("limit", "got 0"),
        ),
        # remora.runs.list {status?, node_id?, limit?}
        (
            "remora.runs.list",
            [{"status": "maybe"}],
            ("status", "running", "'maybe'"),
        ),
        ("remora.runs.list", [{"limit": "9"}], ("limit", "valid integer")),
        ("remora.runs.list", [{"node_id": "helper"}], (NODE_SHAPE, "'helper'")),
        # remora.trust.get / set / revoke {trusted?, uri?}: malformed only (a
        # valid set would change the project's trust)
        (
            "remora.trust.get",
            [{"uri": 5}],
            ("uri", "valid string", "got 5"),
        ),
        (
            "remora.trust.get",
            [{"uri": "untitled:Untitled-1"}],
            ("is in no workspace folder",),
        ),
        (
            "remora.trust.get",
            [{"uri": "file:///no/such/folder/x.py"}],
            ("is in no workspace folder",),
        ),
        ("remora.trust.set", [{}], ("trusted", "Field required")),
        ("remora.trust.set", [{"trusted": "yes"}], ("trusted", "'yes'")),
        (
            "remora.trust.set",
            [{"trusted": True, "uri": ["x"]}],
            ("uri", "valid string"),
        ),
        (
            "remora.trust.revoke",
            [{"uri": 5}],
            ("uri", "valid string"),
        ),
    ]


@pytest.mark.parametrize("editor", EDITORS)
async def test_every_command_is_announced(editor, workspace):
    async with launch() as client:
        result = await client.initialize_session(initialize_params(editor, workspace))
        provider = result.capabilities.execute_command_provider
        assert provider is not None
        assert sorted(provider.commands) == sorted(COMMANDS)
        await wait_indexed(client)
        await client.shutdown_session()


@pytest.mark.parametrize("editor", EDITORS)
async def test_bad_arguments_and_unknown_ids_get_readable_errors(editor, workspace):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")

            # The argument must be one JSON object, for every command.
            for name in COMMANDS:
                for arguments in (None, [], [5], ["rm_abcdefgh"], [[{}]], [{}, {}]):
                    await refused(
                        client, name, arguments, name, "one JSON object argument"
                    )

            for name, arguments, needles in bad_arguments(buffer.uri, helper):
                await refused(client, name, arguments, *needles)

            with pytest.raises(JsonRpcException, match=r"remora\.agent\.fly"):
                await execute(client, "remora.agent.fly", [{}])

            # Unknown ids where the answer is a plain "no".
            assert await execute(
                client, "remora.agent.cancel", [{"run_id": "run_000000000000"}]
            ) == {"cancelled": False}
            assert await execute(
                client,
                "remora.agent.respond",
                [{"question_id": "q_000000000000", "answer": "yes"}],
            ) == {"ok": False}
            assert await execute(client, "remora.proposals.list", [{}]) == []
            assert (
                await execute(
                    client,
                    "remora.node.at",
                    [{"uri": buffer.uri, "position": {"line": 1, "character": 0}}],
                )
                is None
            )

            # Nothing ran, nothing failed, and the server still serves.
            assert model.requests == []
            assert not of_type(client, "agent_started")
            card = await command(client, "remora.node.get", {"node_id": helper})
            assert card["qualified_name"] == "Service.helper"
            assert await command(
                client, "remora.agent.forget", {"node_id": helper}
            ) == {"ok": True}


@pytest.mark.parametrize("editor", EDITORS)
async def test_decided_proposals_and_removed_nodes_get_readable_errors(
    editor, workspace
):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            unused = await node_of(client, buffer, "def unused")
            _run, proposal_id = await propose(client, model, helper, NEW_HELPER)

            diff = await command(
                client, "remora.proposal.diff", {"proposal_id": proposal_id}
            )
            assert diff["status"] == "pending"
            assert (
                diff["old_source"] == 'def helper(self):\n        return order("b", 2)'
            )
            assert diff["new_source"] == NEW_HELPER
            assert '+        """Order two b\'s."""' in diff["diff"].splitlines()
            listed = await command(client, "remora.proposals.list", {"uri": buffer.uri})
            assert [(p["id"], p["uri"], p["node_id"]) for p in listed] == [
                (proposal_id, buffer.uri, helper)
            ]

            await refused(
                client,
                "remora.proposal.reject",
                [{"proposal_id": proposal_id, "feedback": 5}],
                "feedback",
                "valid string",
            )
            model.reply_text("Fine.")
            rejected = await command(
                client,
                "remora.proposal.reject",
                {"proposal_id": proposal_id, "feedback": "no"},
            )
            assert re.fullmatch(r"run_[0-9a-f]{12}", rejected["run_id"])
            await refused(
                client,
                "remora.proposal.reject",
                [{"proposal_id": proposal_id, "feedback": "again"}],
                f"proposal {proposal_id} is already rejected",
            )
            accepted = await command(
                client, "remora.proposal.accept", {"proposal_id": proposal_id}
            )
            assert accepted == {"applied": False, "reason": "the proposal is rejected"}
            diff = await command(
                client, "remora.proposal.diff", {"proposal_id": proposal_id}
            )
            assert diff["status"] == "rejected"
            await eventually(lambda: not remora_diagnostics(client, buffer.uri))

            # A node deleted from the code has no agent to talk to.
            buffer.replace_text("def unused(item: Item):", "UNUSED = None\nif 0:")
            await eventually(lambda: of_type(client, "topology_changed"))
            await refused(
                client,
                "remora.agent.chat",
                [{"node_id": unused, "message": "hello?"}],
                unused,
                "no longer exists",
            )
            await refused(
                client, "remora.agent.run", [{"node_id": unused}], "no longer exists"
            )


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_proposal_going_stale_while_feedback_is_written_is_not_rejected(
    editor, workspace
):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            _run, proposal_id = await propose(client, model, helper, NEW_HELPER)

            @client.feature("remora/askUser")
            async def ask_user(params):
                # The person edits the function while the feedback box is open.
                buffer.replace_text('order("b", 2)', 'order("b", 5)')
                await eventually(
                    lambda: of_type(client, "rewrite_stale", proposal_id=proposal_id)
                )
                return {"answer": "too long"}

            await refused(
                client,
                "remora.proposal.reject",
                [{"proposal_id": proposal_id}],
                f"proposal {proposal_id} is already stale",
            )
            assert not of_type(client, "rewrite_rejected")
            listed = await command(client, "remora.proposals.list", {})
            assert [(p["id"], p["status"]) for p in listed] == [(proposal_id, "stale")]
