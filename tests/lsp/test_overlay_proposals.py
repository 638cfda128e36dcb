"""A ``.pym`` tool's overlay writes reach the person as a proposal (issue 27 §1).

A trusted project whose ``code_agent`` bundle has a script writing files
through ``write_file`` (the agent's copy-on-write overlay). At the end of the
turn the writes are one proposal — a new file, or a change set when an
existing file changed too — and nothing reached the project's files until a
person accepted it. A secret path is refused to the script and never proposed.
"""

from __future__ import annotations

import pytest

from remora_lsp.testing import apply_workspace_edits
from remora_lsp.testing.actions import command
from remora_lsp.testing.actions import events as of_type
from remora_lsp.testing.actions import wait_for_run as finished
from remora_lsp.testing.model_server import ModelServer
from tests.lsp.conftest import EDITORS, session
from tests.lsp.helpers import Buffer
from tests.lsp.test_agent_runs import LONG_S, chat, node_of, settings

WRITER = '''"""Write a file of the project (into your workspace)."""
from remora import Input, external

path: str = Input(description="the file's path")
content: str = Input(description="its whole text")


@external
async def write_file(path: str, content: str) -> None: ...


await write_file(path, content)
"written"
'''
TESTS = "def test_nothing():\n    assert True\n"


def write_bundle(workspace) -> None:
    """The repository's own ``code_agent`` bundle, with the writing script."""
    tools = workspace / ".remora" / "bundles" / "code_agent" / "tools"
    tools.mkdir(parents=True)
    (tools.parent / "bundle.yaml").write_text("name: code_agent\n", encoding="utf-8")
    (tools / "write_text.pym").write_text(WRITER, encoding="utf-8")


async def run_writes(client, model: ModelServer, writes: list[dict]) -> str:
    """Have ``order``'s agent call the script once per write; the run id."""
    buffer = Buffer(client, "pkg/service.py")
    node_id = await node_of(client, buffer, "def order")
    for write in writes:
        model.reply_tool_call("write_text", write)
    model.reply_text("Written.")
    run_id = await chat(client, node_id, "Write the files")
    done = await finished(client, run_id, timeout=LONG_S)
    assert done["type"] == "agent_completed", done
    return run_id


@pytest.mark.workspace("basic")
@pytest.mark.parametrize("editor", EDITORS)
async def test_a_script_writing_a_new_file_proposes_it(editor, workspace):
    write_bundle(workspace)
    with ModelServer() as model:
        trusted = {**settings(model), "workspaceTrust": True}
        async with session(editor, workspace, trusted) as client:
            apply_workspace_edits(client)
            writes = [{"path": "tests/test_order.py", "content": TESTS}]
            run_id = await run_writes(client, model, writes)
            (proposed,) = of_type(client, "rewrite_proposed", run_id=run_id)
            created = workspace / "tests" / "test_order.py"
            assert not created.exists()  # written nowhere but the overlay
            shown = await command(
                client, "remora.proposal.diff", {"proposal_id": proposed["proposal_id"]}
            )
            assert shown["kind"] == "new_file" and shown["new_source"] == TESTS
            answer = await command(
                client,
                "remora.proposal.accept",
                {"proposal_id": proposed["proposal_id"]},
            )
            assert answer == {"applied": True}
            assert created.exists()
            assert client.buffers[created.as_uri()].text == TESTS


@pytest.mark.workspace("basic")
async def test_a_script_changing_files_proposes_one_change_set(workspace):
    write_bundle(workspace)
    models = workspace / "pkg" / "models.py"
    before = models.read_text(encoding="utf-8")
    changed = before.replace(
        '"""Inventory models."""', '"""Inventory models, priced."""'
    )
    with ModelServer() as model:
        trusted = {**settings(model), "workspaceTrust": True}
        async with session("visual-studio-code", workspace, trusted) as client:
            writes = [
                {"path": "tests/test_order.py", "content": TESTS},
                {"path": "pkg/models.py", "content": changed},
                {"path": ".env", "content": "KEY=1\n"},
            ]
            run_id = await run_writes(client, model, writes)
            results = of_type(client, "tool_result", run_id=run_id)
            assert [r["ok"] for r in results] == [True, True, False]
            assert "secrets.exclude" in results[2]["summary"]
            (proposed,) = of_type(client, "rewrite_proposed", run_id=run_id)
            shown = await command(
                client, "remora.proposal.diff", {"proposal_id": proposed["proposal_id"]}
            )
            assert shown["kind"] == "change_set"
            assert shown["summary"] == "files written by write_text"
            assert [(m["path"], m["kind"]) for m in shown["members"]] == [
                ("pkg/models.py", "rewrite"),
                ("tests/test_order.py", "new_file"),
            ]
            assert '+"""Inventory models, priced."""' in shown["diff"]
            assert ".env" not in shown["diff"]
            # Nothing reached the files.
            assert models.read_text(encoding="utf-8") == before
            assert not (workspace / "tests" / "test_order.py").exists()
            assert not (workspace / ".env").exists()
            # Rejected with feedback: it goes to the agent that made the set,
            # shown every file it proposed.
            model.reply_text("Understood.")
            rejected = await command(
                client,
                "remora.proposal.reject",
                {"proposal_id": proposed["proposal_id"], "feedback": "no docstring"},
            )
            again = await finished(client, rejected["run_id"], timeout=LONG_S)
            assert again["type"] == "agent_completed"
            (event,) = of_type(client, "rewrite_rejected")
            assert event["to_agent"] == proposed["node_id"]
            retry = model.text_of(-1)
            assert "Their feedback: no docstring" in retry
            assert "pkg/models.py (rewrite)" in retry
            assert "tests/test_order.py (new_file)" in retry
