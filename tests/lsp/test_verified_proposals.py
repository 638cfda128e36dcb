"""Proposals verified by the project's own tests (``review.run_tests``), end to end.

The real server, a scripted model on 127.0.0.1 and ``tests/workspaces/priced``:
a project whose tests pass, one slow test, one test importing a module the
project lacks. Asserted is what a person sees: the diagnostic's message, the
proposal's lens, the ``remora.proposal.diff`` result, the node card, and what
the agent is told when its proposal breaks the tests.
"""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.fakes.model_server import ModelServer
from tests.lsp.conftest import EDITORS, session
from tests.lsp.helpers import Buffer, eventually
from tests.lsp.test_agent_runs import (
    LONG_S,
    chat,
    command,
    finished,
    node_of,
    of_type,
    remora_diagnostics,
    settings,
)

KEEPS = """def quote(price, qty=1):
    total = price * qty
    return with_vat(total)"""
BREAKS = """def quote(price, qty=1):
    return price * qty"""
BREAKS_AGAIN = """def quote(price, qty=1):
    return price * qty * 2"""
TEST_S = 90.0
"""Waits for a test run: a session, a copy and a pytest start on a busy machine."""


def trusted(model: ModelServer, **review) -> dict:
    """Settings of a trusted project (its tests are its code)."""
    return {
        **settings(model),
        "workspaceTrust": True,
        "review": {"run_tests": "affected", **review},
    }


async def ask(client, model: ModelServer, buffer: Buffer, needle: str, source: str):
    """Have the node at ``needle`` propose ``source``; (run id, proposal id)."""
    node_id = await node_of(client, buffer, needle)
    model.reply_tool_call("rewrite_self", {"new_source": source})
    model.reply_text("Proposed.")
    run_id = await chat(client, node_id, "Tidy this up")
    proposed = await eventually(
        lambda: of_type(client, "rewrite_proposed", run_id=run_id), timeout=LONG_S
    )
    return node_id, proposed[0]["proposal_id"]


async def checked(client, proposal_id: str) -> dict:
    """The ``tests`` check of a proposal once its run ended."""
    event = await eventually(
        lambda: of_type(client, "proposal_checked", proposal_id=proposal_id),
        timeout=TEST_S,
    )
    return event[0]["check"]


def the_tests_check(result: dict) -> dict:
    return next(c for c in result["checks"] if c["name"] == "tests")


@pytest.mark.workspace("priced")
@pytest.mark.parametrize("editor", EDITORS)
async def test_a_proposal_that_keeps_the_tests_green_says_so(editor, workspace):
    with ModelServer() as model:
        async with session(editor, workspace, trusted(model)) as client:
            buffer = Buffer(client, "shop/pricing.py")
            node_id, proposal_id = await ask(client, model, buffer, "def quote", KEEPS)
            # Shown at once, its tests still running; the outcome follows.
            (proposed,) = of_type(client, "rewrite_proposed", proposal_id=proposal_id)
            assert proposed["checks"] == [
                {
                    "name": "tests",
                    "ok": None,
                    "detail": "running 2 selected…",
                    "status": "running",
                }
            ]
            check = await checked(client, proposal_id)
            assert check == {
                "name": "tests",
                "ok": True,
                "detail": "2 passed",
                "status": "passed",
            }
            diagnostics = await eventually(
                lambda: [
                    d
                    for d in remora_diagnostics(client, buffer.uri)
                    if "tests: 2 passed" in d.message
                ]
            )
            assert diagnostics[0].message.endswith("— ✓ tests: 2 passed")
            shown = await command(
                client, "remora.proposal.diff", {"proposal_id": proposal_id}
            )
            assert the_tests_check(shown)["detail"] == "2 passed"
            card = await command(client, "remora.node.get", {"node_id": node_id})
            assert the_tests_check(card["proposals"][0])["ok"] is True
            lenses = await client.text_document_code_lens_async(
                types.CodeLensParams(
                    text_document=types.TextDocumentIdentifier(uri=buffer.uri)
                )
            )
            titles = [lens.command.title for lens in lenses if lens.command]
            assert "Remora proposal: ✓ tests: 2 passed" in titles
            # Nothing of the run touched the person's tree.
            assert "total = price * qty" not in (
                workspace / "shop" / "pricing.py"
            ).read_text(encoding="utf-8")


@pytest.mark.workspace("priced")
@pytest.mark.parametrize("editor", EDITORS)
async def test_a_breaking_proposal_goes_back_once_then_shows_the_failure(
    editor, workspace
):
    with ModelServer() as model:
        async with session(editor, workspace, trusted(model)) as client:
            buffer = Buffer(client, "shop/pricing.py")
            _node, first = await ask(client, model, buffer, "def quote", BREAKS)
            model.reply_tool_call("rewrite_self", {"new_source": BREAKS_AGAIN})
            model.reply_text("Tried again.")

            failed = await checked(client, first)
            assert failed["ok"] is False and failed["status"] == "failed"
            assert failed["detail"].startswith("2 failed: ")
            assert "test_quote_adds_vat — assert 10 == 12.0" in failed["detail"]
            rejected = await eventually(
                lambda: of_type(client, "rewrite_rejected", proposal_id=first)
            )
            assert rejected[0]["by"] == "tests"
            second = await eventually(
                lambda: [
                    e
                    for e in of_type(client, "rewrite_proposed")
                    if e["proposal_id"] != first
                ],
                timeout=LONG_S,
            )
            retry_prompt = model.text_of(2)
            assert "The project's tests fail with your proposal" in retry_prompt
            assert "assert 10 == 12.0" in retry_prompt
            final = await checked(client, second[0]["proposal_id"])
            assert final["ok"] is False
            await finished(client, second[0]["run_id"])
            # Only one attempt more: the second failure is the person's to see.
            listed = await command(client, "remora.proposals.list", {"uri": buffer.uri})
            statuses = {p["id"]: p["status"] for p in listed}
            assert statuses == {first: "rejected", second[0]["proposal_id"]: "pending"}
            assert len(of_type(client, "rewrite_rejected")) == 1
            diagnostics = await eventually(
                lambda: [
                    d
                    for d in remora_diagnostics(client, buffer.uri)
                    if "✗ tests: 2 failed" in d.message
                ]
            )
            assert "assert 20 == 12.0" in diagnostics[0].message


@pytest.mark.workspace("priced")
async def test_a_slow_test_is_stopped_at_the_time_limit(workspace):
    with ModelServer() as model:
        settings_ = trusted(model, test_timeout_s=3)
        async with session("neovim", workspace, settings_) as client:
            buffer = Buffer(client, "shop/pricing.py")
            source = "def wait_and_total(prices):\n    return sum(prices)"
            _node, proposal_id = await ask(
                client, model, buffer, "def wait_and_total", source
            )
            check = await checked(client, proposal_id)
            assert check["status"] == "timed_out" and check["ok"] is None
            assert check["detail"] == "timed out after 3 s (review.test_timeout_s)"


@pytest.mark.workspace("priced")
async def test_a_test_importing_a_missing_module_could_not_run(workspace):
    with ModelServer() as model:
        async with session("visual-studio-code", workspace, trusted(model)) as client:
            buffer = Buffer(client, "shop/pricing.py")
            source = "def discount(price):\n    return price * 0.8"
            _node, proposal_id = await ask(
                client, model, buffer, "def discount", source
            )
            check = await checked(client, proposal_id)
            assert check["status"] == "could_not_run" and check["ok"] is None
            assert check["detail"].startswith("could not run: tests")
            assert "No module named 'nowhere_to_be_found'" in check["detail"]
            assert check["detail"].endswith("(also without the proposal)")
            assert not of_type(client, "rewrite_rejected")


@pytest.mark.parametrize(
    ("workspace_name", "needle", "detail"),
    [
        ("basic", "def helper", "no tests in this project"),
        ("priced", "def untested", "no tests reach this node"),
    ],
)
async def test_a_proposal_no_test_reaches_says_so_at_once(
    workspace_name, needle, detail, tmp_path
):
    import shutil

    from tests.conftest import WORKSPACES

    root = tmp_path / workspace_name
    shutil.copytree(WORKSPACES / workspace_name, root)
    with ModelServer() as model:
        async with session("neovim", root, trusted(model)) as client:
            path = "pkg/service.py" if workspace_name == "basic" else "shop/pricing.py"
            buffer = Buffer(client, path)
            line = buffer.text[buffer.text.index(needle) :].split("\n", 1)[0]
            source = f"{line.strip()}\n    return 1"
            _node, proposal_id = await ask(client, model, buffer, needle, source)
            shown = await command(
                client, "remora.proposal.diff", {"proposal_id": proposal_id}
            )
            assert the_tests_check(shown) == {
                "name": "tests",
                "ok": None,
                "detail": detail,
                "status": "no_tests",
            }
            assert not of_type(client, "proposal_checked")
