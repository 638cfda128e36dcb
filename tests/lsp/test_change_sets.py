"""New files and change sets through the real server (DESIGN §15, issue 27 §1-§2).

A scripted model asks for ``create_file`` and ``propose_changes``; asserted is
what a person sees and gets: the proposal listed with its kind, the diagnostic
and "Accept: …" action on the asking node (and on each member's node), the
``CreateFile`` in the edit, the file created, a set applied all or nothing —
nothing at all when one of its documents changed — and secret, outside or
existing paths refused with a reason the model can act on.
"""

from __future__ import annotations

import json

import pytest

from remora_lsp.testing import apply_workspace_edits
from remora_lsp.testing.actions import command
from remora_lsp.testing.actions import events as of_type
from remora_lsp.testing.actions import wait_for_run as finished
from remora_lsp.testing.model_server import ModelServer
from tests.change_set_texts import CURRENCY, MAKE_ITEM, ORDER, TEST_FILE
from tests.lsp.conftest import EDITORS, session
from tests.lsp.helpers import Buffer, eventually
from tests.lsp.test_agent_runs import (
    LONG_S,
    chat,
    code_actions,
    node_of,
    remora_diagnostics,
    settings,
)


async def proposed_by(client, model: ModelServer, node_id: str, tool: str, args):
    """Have ``node_id``'s agent call ``tool``; the run's ``tool_result`` and
    the proposal ids it made.
    """
    model.reply_tool_call(tool, args)
    model.reply_text("Done.")
    run_id = await chat(client, node_id, "Please do it")
    done = await finished(client, run_id, timeout=LONG_S)
    assert done["type"] == "agent_completed", done
    results = of_type(client, "tool_result", run_id=run_id)
    made = [
        e["proposal_id"] for e in of_type(client, "rewrite_proposed", run_id=run_id)
    ]
    return results[0], made


@pytest.mark.workspace("basic")
@pytest.mark.parametrize("editor", EDITORS)
async def test_a_new_file_proposal_accepted_creates_the_file(editor, workspace):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            apply_workspace_edits(client)
            buffer = Buffer(client, "pkg/service.py")
            node_id = await node_of(client, buffer, "def order")
            args = {
                "path": "tests/test_service.py",
                "content": TEST_FILE,
                "reason": "tests for order",
            }
            result, made = await proposed_by(
                client, model, node_id, "create_file", args
            )
            assert result["ok"], result
            (proposal_id,) = made
            listed = await command(
                client, "remora.proposals.list", {"status": "pending"}
            )
            (shown,) = [p for p in listed if p["id"] == proposal_id]
            assert shown["kind"] == "new_file"
            assert shown["file_path"] == "tests/test_service.py"
            diff = await command(
                client, "remora.proposal.diff", {"proposal_id": proposal_id}
            )
            assert diff["old_source"] == "" and diff["new_source"] == TEST_FILE
            assert "+def test_order_counts_the_quantity():" in diff["diff"]
            # Shown on the asking node: a diagnostic and "Accept: create …".
            line = buffer.position("def order")[0]
            diagnostics = await eventually(
                lambda: remora_diagnostics(client, buffer.uri)
            )
            assert diagnostics[0].code == proposal_id
            assert "create tests/test_service.py (+5)" in diagnostics[0].message
            actions = await code_actions(client, buffer.uri, line)
            titles = [a["title"] for a in actions]
            assert "Accept: create tests/test_service.py (+5)" in titles
            assert not (workspace / "tests" / "test_service.py").exists()

            answer = await command(
                client, "remora.proposal.accept", {"proposal_id": proposal_id}
            )
            assert answer == {"applied": True}
            created = workspace / "tests" / "test_service.py"
            assert created.exists()
            assert client.buffers[created.as_uri()].text == TEST_FILE
            listed = await command(client, "remora.proposals.list", {})
            (decided,) = [p for p in listed if p["id"] == proposal_id]
            assert decided["status"] == "accepted"


def without_file_creation(capabilities) -> None:
    """A client that applies text edits but cannot create files."""
    capabilities.workspace.workspace_edit.resource_operations = []


@pytest.mark.workspace("basic")
async def test_a_client_that_cannot_create_files_is_told_so(workspace):
    with ModelServer() as model:
        async with session(
            "visual-studio-code",
            workspace,
            settings(model),
            adjust=without_file_creation,
        ) as client:
            apply_workspace_edits(client)
            buffer = Buffer(client, "pkg/service.py")
            node_id = await node_of(client, buffer, "def order")
            args = {
                "path": "tests/test_service.py",
                "content": TEST_FILE,
                "reason": "t",
            }
            _result, (proposal_id,) = await proposed_by(
                client, model, node_id, "create_file", args
            )
            line = buffer.position("def order")[0]
            actions = await code_actions(client, buffer.uri, line)
            (accept,) = [a for a in actions if a["title"].startswith("Accept:")]
            assert "edit" not in accept
            assert "cannot create files" in accept["disabled"]["reason"]
            answer = await command(
                client, "remora.proposal.accept", {"proposal_id": proposal_id}
            )
            assert answer["applied"] is False
            assert "cannot create files" in answer["reason"]
            assert "remora accept" in answer["reason"]
            assert not (workspace / "tests" / "test_service.py").exists()


@pytest.mark.workspace("basic")
async def test_secret_outside_and_existing_paths_are_never_proposed(workspace):
    with ModelServer() as model:
        async with session("neovim", workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            node_id = await node_of(client, buffer, "def order")
            refusals = {
                ".env.local": "matches secrets.exclude",
                "../elsewhere.py": "outside the project",
                "pkg/models.py": "exists already",
            }
            for path, reason in refusals.items():
                args = {"path": path, "content": "SECRET = 1\n", "reason": "x"}
                result, made = await proposed_by(
                    client, model, node_id, "create_file", args
                )
                assert not result["ok"] and reason in result["summary"], result
                assert made == []
            changes = [{"path": "config/.env", "new_source": "KEY = 'abc'\n"}]
            result, made = await proposed_by(
                client,
                model,
                node_id,
                "propose_changes",
                {"changes": changes, "summary": "add a key"},
            )
            assert not result["ok"] and "secrets.exclude" in result["summary"]
            assert made == []
            assert not (workspace / ".env.local").exists()
            assert await command(client, "remora.proposals.list", {}) == []


async def _propose_set(client, model, workspace, *, open_models: bool = True):
    """The change set of the tests below: ``order`` in service.py,
    ``make_item`` in models.py and a new pkg/currency.py; (buffers, set id).
    """
    service = Buffer(client, "pkg/service.py")
    models = Buffer(client, "pkg/models.py") if open_models else None
    node_id = await node_of(client, service, "def order")
    changes = [
        {"node_id": node_id, "new_source": ORDER},
        {"path": "pkg/models.py", "new_source": MAKE_ITEM},
        {"path": "pkg/currency.py", "new_source": CURRENCY},
    ]
    result, made = await proposed_by(
        client,
        model,
        node_id,
        "propose_changes",
        {"changes": changes, "summary": "add currency"},
    )
    assert result["ok"], result
    return service, models, made[0]


@pytest.mark.workspace("basic")
@pytest.mark.parametrize("editor", EDITORS)
async def test_a_change_set_across_three_files_is_accepted_as_one(editor, workspace):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            apply_workspace_edits(client)
            service, models, set_id = await _propose_set(client, model, workspace)
            shown = await command(
                client, "remora.proposal.diff", {"proposal_id": set_id}
            )
            assert shown["kind"] == "change_set" and shown["summary"] == "add currency"
            assert [m["kind"] for m in shown["members"]] == [
                "rewrite",
                "rewrite",
                "new_file",
            ]
            # order uses make_item's new parameter; make_item uses the new
            # module (and order names it: a word it defines counts).
            assert shown["depends_on"] == [[0, 1], [0, 2], [1, 2]]
            for path in ("pkg/service.py", "pkg/models.py", "pkg/currency.py"):
                assert f"+++ b/{path}" in shown["diff"]
            # One item, on each member's node, naming the set.
            for buffer, needle in ((service, "def order"), (models, "def make_item")):
                found = await eventually(
                    lambda b=buffer: [
                        d for d in remora_diagnostics(client, b.uri) if d.code == set_id
                    ]
                )
                assert found[0].message.startswith(
                    "Remora proposes a Change set: add currency "
                    "(2 definitions in 2 files, 1 new file)"
                )
                line = buffer.position(needle)[0]
                titles = [
                    a["title"] for a in await code_actions(client, buffer.uri, line)
                ]
                assert (
                    "Accept: Change set: add currency "
                    "(2 definitions in 2 files, 1 new file)" in titles
                )
            # A part that leaves inconsistent code is refused, saying why.
            with pytest.raises(
                Exception, match=r"member 1 \(rewrite order\) needs member 2"
            ):
                await command(
                    client,
                    "remora.proposal.accept",
                    {"proposal_id": set_id, "members": [0]},
                )
            answer = await command(
                client, "remora.proposal.accept", {"proposal_id": set_id}
            )
            assert answer == {"applied": True}
            assert "currency=currency" in service.text
            assert "convert(price, currency)" in models.text
            currency = client.buffers[(workspace / "pkg" / "currency.py").as_uri()]
            assert currency.text == CURRENCY
            listed = await command(client, "remora.proposals.list", {})
            assert [p["status"] for p in listed if p["id"] == set_id] == ["accepted"]
            # Its lines are attributed to it, in each file.
            for buffer in (service, models, currency):
                owned = await command(client, "remora.attribution", {"uri": buffer.uri})
                assert {a["proposal_id"] for a in owned} == {set_id}
            # A way back: each file it edited, the new file named, not deleted.
            undo = await command(
                client, "remora.proposal.revert", {"proposal_id": set_id}
            )
            assert len(undo["proposal_ids"]) == 2
            assert [r["path"] for r in undo["refused"]] == ["pkg/currency.py"]
            assert "delete it by hand" in undo["refused"][0]["reason"]


@pytest.mark.workspace("basic")
@pytest.mark.parametrize("editor", EDITORS)
async def test_a_set_whose_document_changed_applies_nothing_and_is_stale(
    editor, workspace
):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            apply_workspace_edits(client)
            service, models, set_id = await _propose_set(client, model, workspace)
            before = service.text
            models.insert("def make_item", "# priced in euros\n")
            stale = await eventually(
                lambda: of_type(client, "rewrite_stale", proposal_id=set_id)
            )
            assert "pkg/models.py changed" in stale[0]["reason"]
            answer = await command(
                client, "remora.proposal.accept", {"proposal_id": set_id}
            )
            assert answer["applied"] is False and "stale" in answer["reason"]
            assert service.text == before
            assert "convert" not in models.text
            assert not (workspace / "pkg" / "currency.py").exists()
            assert remora_diagnostics(client, service.uri) == []


@pytest.mark.workspace("basic")
@pytest.mark.parametrize("editor", EDITORS)
async def test_rejecting_one_member_keeps_the_rest_pending_and_tells_the_agent(
    editor, workspace
):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            apply_workspace_edits(client)
            service, models, set_id = await _propose_set(client, model, workspace)
            assert models is not None
            before = service.text
            # currency.py is needed by order and make_item: refused, naming
            # them as the editors number them (from 1).
            with pytest.raises(
                Exception,
                match=r"member 3 \(pkg/currency\.py\) is needed by member 1 "
                r"\(rewrite order\), member 2 \(rewrite make_item\): reject "
                r"members 1, 2 and 3 together, or the whole set",
            ):
                await command(
                    client,
                    "remora.proposal.reject",
                    {"proposal_id": set_id, "members": [2], "feedback": "no"},
                )
            model.reply_text("Understood: order stays as it is.")
            answer = await command(
                client,
                "remora.proposal.reject",
                {
                    "proposal_id": set_id,
                    "members": [0],
                    "feedback": "leave order alone for now",
                },
            )
            # The feedback reaches the agent that made the set, with only the
            # rejected member.
            done = await finished(client, answer["run_id"], timeout=LONG_S)
            assert done["type"] == "agent_completed", done
            assert "rejected part of your change set" in model.text_of(-1)
            told = model.text_of(-1).split("rejected part of your change set")[-1]
            assert "leave order alone for now" in told
            assert "item = make_item(name, currency=currency)" in told
            assert "convert(price, currency)" not in told
            # The set lists the two members left, still pending; order's file
            # is untouched.
            shown = await command(
                client, "remora.proposal.diff", {"proposal_id": set_id}
            )
            assert shown["status"] == "pending"
            assert [m["path"] for m in shown["members"]] == [
                "pkg/models.py",
                "pkg/currency.py",
            ]
            assert shown["depends_on"] == [[0, 1]]
            assert "+++ b/pkg/service.py" not in shown["diff"]
            listed = await command(
                client, "remora.proposals.list", {"status": "pending"}
            )
            (item,) = [p for p in listed if p["id"] == set_id]
            assert item["title"] == (
                "Change set: add currency (1 definition in 1 file, 1 new file)"
            )
            assert service.text == before
            # The rest is accepted as one and lands; order's file stays as it was.
            answer = await command(
                client, "remora.proposal.accept", {"proposal_id": set_id}
            )
            assert answer == {"applied": True}
            assert "convert(price, currency)" in models.text
            currency = client.buffers[(workspace / "pkg" / "currency.py").as_uri()]
            assert currency.text == CURRENCY
            assert service.text == before


async def run_action(client, action: dict) -> object:
    """Run a code action's command as an editor would: resolved first (it
    comes without an edit), with every argument the server put in it.
    """
    from lsprotocol import types

    from remora_lsp.testing.client import plain
    from tests.lsp.helpers import raw_request

    resolved = plain(await raw_request(client, "codeAction/resolve", action))
    assert "edit" not in resolved
    found = resolved["command"]
    return plain(
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command=found["command"], arguments=found["arguments"]
            )
        )
    )


async def member_rejects(client, buffer: Buffer, needle: str) -> dict[str, dict]:
    """The "Reject member …" code actions on ``needle``'s line, by title."""
    line = buffer.position(needle)[0]
    return {
        a["title"]: a
        for a in await code_actions(client, buffer.uri, line)
        if a["title"].startswith("Reject member ")
    }


REJECT_ORDER = "Reject member 1 of the change set (rewrite order) with feedback…"
REJECT_CURRENCY = "Reject member 3 of the change set (pkg/currency.py) with feedback…"


@pytest.mark.workspace("basic")
@pytest.mark.parametrize("editor", EDITORS)
async def test_a_member_is_rejected_from_its_code_action(editor, workspace):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            apply_workspace_edits(client)
            asked: list[str] = []

            @client.feature("remora/askUser")
            def ask_user(params):
                asked.append(params.question_id)
                return {"answer": "keep order as it is"}

            service, models, set_id = await _propose_set(client, model, workspace)
            assert models is not None
            before = service.text
            # Each member on its own node; the new file on the asking node.
            on_order = await member_rejects(client, service, "def order")
            assert list(on_order) == [REJECT_ORDER, REJECT_CURRENCY]
            on_make_item = await member_rejects(client, models, "def make_item")
            assert list(on_make_item) == [
                "Reject member 2 of the change set (rewrite make_item) with feedback…"
            ]

            # The new module is needed by the others: the person is told why,
            # never asked for feedback, and the set stays whole.
            assert await run_action(client, on_order[REJECT_CURRENCY]) is None
            told = await eventually(
                lambda: [m for m in client.messages if "is needed by" in m.message]
            )
            assert [m.message for m in told] == [
                "Remora: member 3 (pkg/currency.py) is needed by member 1 "
                "(rewrite order), member 2 (rewrite make_item): reject members "
                "1, 2 and 3 together, or the whole set"
            ]
            assert asked == []
            shown = await command(
                client, "remora.proposal.diff", {"proposal_id": set_id}
            )
            assert len(shown["members"]) == 3 and shown["status"] == "pending"

            # order's member: feedback asked as for the whole set's Reject; the
            # set goes on without it, order's file untouched.
            model.reply_text("Understood: order stays as it is.")
            answer = await run_action(client, on_order[REJECT_ORDER])
            assert isinstance(answer, dict)
            assert asked == [f"feedback_{set_id}"]
            done = await finished(client, answer["run_id"], timeout=LONG_S)
            assert done["type"] == "agent_completed", done
            (rejected,) = of_type(client, "rewrite_rejected", proposal_id=set_id)
            assert rejected["feedback"] == "keep order as it is"
            listed = await command(
                client, "remora.proposals.list", {"status": "pending"}
            )
            (item,) = [p for p in listed if p["id"] == set_id]
            assert item["title"] == (
                "Change set: add currency (1 definition in 1 file, 1 new file)"
            )
            assert [m["path"] for m in item["members"]] == [
                "pkg/models.py",
                "pkg/currency.py",
            ]
            assert service.text == before
            # The actions follow the set as it is now, numbered again.
            assert list(await member_rejects(client, service, "def order")) == [
                "Reject member 2 of the change set (pkg/currency.py) with feedback…"
            ]
            assert list(await member_rejects(client, models, "def make_item")) == [
                "Reject member 1 of the change set (rewrite make_item) with feedback…"
            ]


FIRST = """def first_helper():
    return 1"""
SECOND = """def second_helper():
    return 2"""


@pytest.mark.workspace("basic")
@pytest.mark.parametrize("editor", EDITORS)
async def test_definitions_appended_to_one_file_land_in_the_order_given(
    editor, workspace
):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            apply_workspace_edits(client)
            service = Buffer(client, "pkg/service.py")
            models = Buffer(client, "pkg/models.py")
            node_id = await node_of(client, service, "def order")
            changes = [
                {"path": "pkg/models.py", "new_source": FIRST},
                {"path": "pkg/models.py", "new_source": SECOND},
            ]
            result, (set_id,) = await proposed_by(
                client,
                model,
                node_id,
                "propose_changes",
                {"changes": changes, "summary": "two helpers"},
            )
            assert result["ok"], result
            shown = await command(
                client, "remora.proposal.diff", {"proposal_id": set_id}
            )
            added = [line for line in shown["diff"].splitlines() if "+def " in line]
            assert added == ["+def first_helper():", "+def second_helper():"]
            answer = await command(
                client, "remora.proposal.accept", {"proposal_id": set_id}
            )
            assert answer == {"applied": True}
            text = models.text
            assert text.index("def first_helper") < text.index("def second_helper")
            assert "    return 1\n\n\ndef second_helper():" in text


@pytest.mark.workspace("basic")
async def test_the_cli_rejects_one_member_of_a_set(workspace, person_files):
    from tests.lsp.test_command_line import remora
    from tests.mcp.test_mcp_server import host_client, result_of

    with ModelServer() as model:
        async with session("neovim", workspace, settings(model)) as client:
            _service, _models, set_id = await _propose_set(
                client, model, workspace, open_models=False
            )
            code, out, err = await remora(
                workspace, "reject", set_id, "--member", "3", "--feedback", "no"
            )
            assert code == 2 and "member 3 (pkg/currency.py) is needed by" in err
            code, out, err = await remora(
                workspace, "reject", set_id, "--member", "1", "--member", "2"
            )
            assert code == 0, err
            assert f"rejected members 1, 2 of {set_id}; no feedback" in out
            code, out, err = await remora(workspace, "proposals", "--json")
            (listed,) = json.loads(out)
            assert [m["path"] for m in listed["members"]] == ["pkg/currency.py"]
            # An MCP host lists the member left, and has no way to decide.
            async with host_client(workspace) as mcp:
                (shown,) = result_of(await mcp.call_tool("list_proposals", {}))
                tools = {t.name for t in (await mcp.list_tools()).tools}
            assert shown["id"] == set_id
            assert [m["path"] for m in shown["members"]] == ["pkg/currency.py"]
            assert not {t for t in tools if "accept" in t or "reject" in t}
            code, out, err = await remora(workspace, "accept", set_id)
            assert code == 0, err
            assert (workspace / "pkg" / "currency.py").read_text() == CURRENCY
            assert "convert" not in (workspace / "pkg" / "models.py").read_text()


@pytest.mark.workspace("basic")
@pytest.mark.parametrize("moved", ["renamed", "deleted"])
async def test_a_set_whose_member_file_was_moved_applies_nothing_and_is_stale(
    moved, workspace
):
    import shutil

    from lsprotocol import types

    from tests.lsp.helpers import uri
    from tests.lsp.test_files import DELETED, watched

    with ModelServer() as model:
        async with session("neovim", workspace, settings(model)) as client:
            apply_workspace_edits(client)
            service, _models, set_id = await _propose_set(
                client, model, workspace, open_models=False
            )
            before = service.text
            models = workspace / "pkg" / "models.py"
            catalog = workspace / "pkg" / "catalog.py"
            if moved == "renamed":
                shutil.move(models, catalog)
                client.workspace_did_rename_files(
                    types.RenameFilesParams(
                        files=[
                            types.FileRename(
                                old_uri=uri(client, "pkg/models.py"),
                                new_uri=uri(client, "pkg/catalog.py"),
                            )
                        ]
                    )
                )
            else:
                models.unlink()
                watched(client, ("pkg/models.py", DELETED))
            stale = await eventually(
                lambda: of_type(client, "rewrite_stale", proposal_id=set_id)
            )
            reason = stale[0]["reason"]
            if moved == "renamed":
                assert reason == (
                    "pkg/models.py was renamed to pkg/catalog.py since the change "
                    "set was made"
                )
            else:
                assert reason == (
                    "pkg/models.py was deleted since the change set was made"
                )
            answer = await command(
                client, "remora.proposal.accept", {"proposal_id": set_id}
            )
            assert answer["applied"] is False and "stale" in answer["reason"]
            assert service.text == before
            assert not (workspace / "pkg" / "currency.py").exists()
            if moved == "renamed":
                assert "convert" not in catalog.read_text()


# ---- a cascade's proposals -------------------------------------------------------

MAIN = """def main():
    print(order("z", 3, currency="USD"))"""


@pytest.mark.workspace("basic")
@pytest.mark.parametrize("editor", EDITORS)
async def test_a_cascades_proposals_arrive_as_one_set(editor, workspace):
    from remora_lsp.testing.replies import text, tool_call

    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            apply_workspace_edits(client)
            service = Buffer(client, "pkg/service.py")
            script = Buffer(client, "scripts/tool.py")
            order_id = await node_of(client, service, "def order")
            main_id = await node_of(client, script, "def main")
            # The asked agent changes itself and tells its caller, whose agent
            # (same request, same correlation) adapts.
            model.on(
                "please pass a currency",
                tool_call("rewrite_self", {"new_source": MAIN}),
                text("Adapted."),
            )
            model.on(
                "Add currency support",
                tool_call("rewrite_self", {"new_source": ORDER}),
                tool_call(
                    "send_message",
                    {"to": main_id, "content": "please pass a currency"},
                ),
                text("Done, and told main."),
            )
            run_id = await chat(client, order_id, "Add currency support to order")
            await finished(client, run_id, timeout=LONG_S)

            async def one_set():
                listed = await command(
                    client, "remora.proposals.list", {"status": "pending"}
                )
                return (
                    listed if any(p["kind"] == "change_set" for p in listed) else None
                )

            pending = await eventually(one_set, timeout=LONG_S)
            (gathered,) = pending  # one item for the person
            assert gathered["summary"] == "Add currency support to order"
            assert gathered["node_id"] == order_id  # feedback goes to the starter
            assert [(m["path"], m["node_id"]) for m in gathered["members"]] == [
                ("pkg/service.py", order_id),
                ("scripts/tool.py", main_id),
            ]
            (first,) = of_type(client, "rewrite_proposed", run_id=run_id)
            everything = await command(client, "remora.proposals.list", {})
            statuses = {p["id"]: p["status"] for p in everything}
            assert statuses[first["proposal_id"]] == "superseded"
            for buffer in (service, script):
                await eventually(
                    lambda b=buffer: [
                        d
                        for d in remora_diagnostics(client, b.uri)
                        if d.code == gathered["id"]
                    ]
                )
            answer = await command(
                client, "remora.proposal.accept", {"proposal_id": gathered["id"]}
            )
            assert answer == {"applied": True}
            assert 'currency="USD"' in script.text
            assert "make_item(name, currency=currency)" in service.text


@pytest.mark.workspace("basic")
async def test_a_cascade_goes_on_gathering_into_one_set_after_a_restart(workspace):
    from remora_lsp.testing.model_server import Reply
    from remora_lsp.testing.replies import text, tool_call
    from tests.lsp.test_resume import killed_after

    with ModelServer() as model:
        # main's agent is still answering order's message when the server dies.
        hangs = Reply(text="Too late.")
        hangs.delay_s = 60
        hanging = model.on("please pass a currency", hangs)
        async with killed_after("neovim", workspace, model) as client:
            order_id = await node_of(
                client, Buffer(client, "pkg/service.py"), "def order"
            )
            main_id = await node_of(
                client, Buffer(client, "scripts/tool.py"), "def main"
            )
            model.on(
                "Add currency support",
                tool_call("rewrite_self", {"new_source": ORDER}),
                tool_call(
                    "send_message",
                    {"to": main_id, "content": "please pass a currency"},
                ),
                text("Done, and told main."),
            )
            run_id = await chat(client, order_id, "Add currency support to order")
            await finished(client, run_id, timeout=LONG_S)
            (first,) = of_type(client, "rewrite_proposed", run_id=run_id)
            await eventually(
                lambda: of_type(client, "agent_started", agent_id=main_id),
                timeout=LONG_S,
            )
        model.rules.remove(hanging)
        model.on(
            "please pass a currency",
            tool_call("rewrite_self", {"new_source": MAIN}),
            text("Adapted."),
        )
        async with session("neovim", workspace, settings(model)) as client:
            apply_workspace_edits(client)
            (interrupted,) = await command(
                client, "remora.runs.list", {"status": "interrupted"}
            )
            assert interrupted["node"]["id"] == main_id, interrupted
            retried = await command(
                client, "remora.agent.retry", {"run_id": interrupted["id"]}
            )
            await finished(client, retried["run_id"], timeout=LONG_S)
            # The same request's proposals, before and after the restart: one
            # set for the person.
            pending = await command(
                client, "remora.proposals.list", {"status": "pending"}
            )
            (gathered,) = pending
            assert gathered["kind"] == "change_set", pending
            assert gathered["summary"] == "Add currency support to order"
            assert gathered["node_id"] == order_id
            assert [(m["path"], m["node_id"]) for m in gathered["members"]] == [
                ("pkg/service.py", order_id),
                ("scripts/tool.py", main_id),
            ]
            everything = await command(client, "remora.proposals.list", {})
            statuses = {p["id"]: p["status"] for p in everything}
            assert statuses[first["proposal_id"]] == "superseded"
            answer = await command(
                client, "remora.proposal.accept", {"proposal_id": gathered["id"]}
            )
            assert answer == {"applied": True}
            tool = client.buffers[(workspace / "scripts" / "tool.py").as_uri()]
            assert 'currency="USD"' in tool.text


# ---- verified by the project's tests ------------------------------------------------

PASSING_TESTS = """from shop.pricing import quote


def test_quote_of_nothing():
    assert quote(0) == 0


def test_quote_of_three():
    assert quote(10, 3) == 36.0
"""
FAILING_TESTS = """from shop.pricing import quote


def test_quote_without_vat():
    assert quote(10) == 10
"""
QUOTE_IN_CENTS = """def quote(price, qty=1):
    return with_vat(price * qty) * 100"""
CENTS_TESTS = """from shop.pricing import quote


def test_quote_in_cents():
    assert quote(10) == 1200.0
"""


@pytest.mark.workspace("priced")
@pytest.mark.parametrize("editor", EDITORS)
async def test_a_new_test_file_is_run_as_its_check(editor, workspace):
    from tests.lsp.test_verified_proposals import checked, trusted

    with ModelServer() as model:
        async with session(editor, workspace, trusted(model)) as client:
            buffer = Buffer(client, "shop/pricing.py")
            node_id = await node_of(client, buffer, "def quote")
            args = {
                "path": "tests/test_quote_more.py",
                "content": PASSING_TESTS,
                "reason": "more tests for quote",
            }
            _result, (proposal_id,) = await proposed_by(
                client, model, node_id, "create_file", args
            )
            (proposed,) = of_type(client, "rewrite_proposed", proposal_id=proposal_id)
            assert proposed["checks"][0]["detail"] == "running 1 selected…"
            check = await checked(client, proposal_id)
            assert check["status"] == "passed" and check["detail"] == "2 passed"
            assert not (workspace / "tests" / "test_quote_more.py").exists()


@pytest.mark.workspace("priced")
async def test_a_failing_new_test_goes_back_to_the_agent_once(workspace):
    from tests.lsp.test_verified_proposals import TEST_S, checked, trusted

    with ModelServer() as model:
        async with session("neovim", workspace, trusted(model)) as client:
            buffer = Buffer(client, "shop/pricing.py")
            node_id = await node_of(client, buffer, "def quote")
            model.reply_tool_call(
                "create_file",
                {"path": "tests/test_bad.py", "content": FAILING_TESTS, "reason": "r"},
            )
            model.reply_text("Done.")
            model.reply_tool_call(
                "create_file",
                {"path": "tests/test_bad.py", "content": PASSING_TESTS, "reason": "r"},
            )
            model.reply_text("Fixed.")
            first_run = await chat(client, node_id, "Write tests for quote")
            (first,) = await eventually(
                lambda: of_type(client, "rewrite_proposed", run_id=first_run),
                timeout=LONG_S,
            )
            failed = await checked(client, first["proposal_id"])
            assert failed["status"] == "failed"
            assert "test_quote_without_vat" in failed["detail"]
            rejected = await eventually(
                lambda: of_type(
                    client, "rewrite_rejected", proposal_id=first["proposal_id"]
                )
            )
            assert rejected[0]["by"] == "tests"
            assert (
                "The project's tests fail with your proposal" in rejected[0]["feedback"]
            )
            second = await eventually(
                lambda: [
                    e
                    for e in of_type(client, "rewrite_proposed")
                    if e["proposal_id"] != first["proposal_id"]
                ],
                timeout=TEST_S,
            )
            again = await checked(client, second[0]["proposal_id"])
            assert again["status"] == "passed"
            retry_prompt = model.text_of(2)  # the failing file, shown to fix it
            assert "Your proposed changes were:" in retry_prompt
            assert "tests/test_bad.py (new_file)" in retry_prompt
            assert "assert quote(10) == 10" in retry_prompt


@pytest.mark.workspace("priced")
async def test_a_change_set_is_tested_once_with_every_member_applied(workspace):
    from tests.lsp.test_verified_proposals import checked, trusted

    with ModelServer() as model:
        async with session("visual-studio-code", workspace, trusted(model)) as client:
            buffer = Buffer(client, "shop/pricing.py")
            node_id = await node_of(client, buffer, "def quote")
            changes = [
                {"node_id": node_id, "new_source": QUOTE_IN_CENTS},
                {"path": "tests/test_cents.py", "new_source": CENTS_TESTS},
            ]
            _result, (set_id,) = await proposed_by(
                client,
                model,
                node_id,
                "propose_changes",
                {"changes": changes, "summary": "quote in cents"},
            )
            check = await checked(client, set_id)
            # The new test passes only with the rewrite applied beside it; the
            # old tests of quote break with it: one run, both outcomes.
            assert check["status"] == "failed", check
            assert "test_quote_adds_vat" in check["detail"]
            assert "test_quote_in_cents" not in check["detail"]
            assert len(of_type(client, "proposal_checked", proposal_id=set_id)) == 1


# ---- the command line ---------------------------------------------------------------


@pytest.mark.workspace("basic")
async def test_the_cli_lists_a_set_as_one_item_and_accepts_it_through_the_editor(
    workspace,
):
    from tests.lsp.test_agent_runs import EditorEdits
    from tests.lsp.test_command_line import remora

    with ModelServer() as model:
        async with session("neovim", workspace, settings(model)) as client:
            service, _models, set_id = await _propose_set(
                client, model, workspace, open_models=False
            )

            code, out, err = await remora(workspace, "proposals")
            assert code == 0, err
            (row,) = [line for line in out.splitlines() if set_id in line]
            assert "Change set: add currency (2 definitions in 2 files" in row
            code, out, err = await remora(workspace, "proposals", "--json")
            (listed,) = json.loads(out)
            assert listed["title"] == (
                "Change set: add currency (2 definitions in 2 files, 1 new file)"
            )
            assert len(listed["members"]) == 3

            code, out, err = await remora(workspace, "accept", set_id, "--member", "1")
            assert code == 2 and "member 1 (rewrite order) needs member 2" in err

            # The person declines the editor's part: nothing is written on disk.
            edits = EditorEdits(client, service)
            edits.mode = "refuse"
            code, out, err = await remora(workspace, "accept", set_id)
            assert code == 1 and "the user said no" in err
            assert "convert" not in (workspace / "pkg/models.py").read_text()
            assert not (workspace / "pkg" / "currency.py").exists()

            edits.mode = "apply"
            code, out, err = await remora(workspace, "accept", set_id)
            assert code == 0, err
            assert f"accepted {set_id}: applied" in out
            # The open file through the editor, the others on disk.
            assert len(edits.requests) == 2
            changes = edits.requests[-1]["documentChanges"]
            assert [c["textDocument"]["uri"] for c in changes] == [service.uri]
            assert "currency=currency" in service.text
            assert "currency=currency" not in (workspace / "pkg/service.py").read_text()
            assert (
                "convert(price, currency)" in (workspace / "pkg/models.py").read_text()
            )
            assert (workspace / "pkg" / "currency.py").read_text() == CURRENCY
