"""The dashboard in a real browser (Debian's Chromium): what a person sees
and does on the page while agents run.

The project is served by a real ``remora-lsp`` (a pytest-lsp client plays the
editor) or, without one, opened by the dashboard itself; the model is the
scripted server on 127.0.0.1; ``remora ask`` runs as a person runs it.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import yaml

from remora_lsp.testing.model_server import ModelServer
from tests.dashboard.support import browser, dashboard, painted
from tests.lsp.conftest import session
from tests.lsp.helpers import Buffer, eventually
from tests.lsp.test_agent_runs import (
    DOCSTRING,
    NEW_HELPER,
    EditorEdits,
    last_user_message,
    settings,
)
from tests.lsp.test_batch_cli import GRAPH
from tests.lsp.test_command_line import HELPER, remora
from tests.lsp.test_graphs import respond

ANSWER = (
    "It orders two b's. <b>not bold</b> <script>document.title='pwned'</script>"
    "<img src=x onerror=\"document.title='pwned'\">"
)
"""A model's answer with HTML and script in it: the page must show it as text."""
RUNNING = "#1f7ae0"
IDLE = "#9aa5b1"
AWAITING_REVIEW = "#9b51e0"
SHOWN_S = 5.0
"""A generous bound for what the page must show "within a second"."""


async def open_node(page, name: str) -> str:
    """Find a node with the page's search box and open its page; its id."""
    await page.fill("#search", name)
    link = page.locator("#search-results a").first
    node_id = await link.get_attribute("data-node")
    await link.click()
    await page.wait_for_selector(f'.card[data-node="{node_id}"]')
    return node_id


async def colour(page, node_id: str) -> str:
    return await page.evaluate(
        "id => window.remoraGraph.getNodeAttribute(id, 'color')", node_id
    )


async def until(page, expression: str, argument=None, timeout_s: float = 60) -> None:
    await page.wait_for_function(expression, arg=argument, timeout=timeout_s * 1000)


async def socket_of(workspace) -> None:
    sock = workspace / ".remora" / "control.sock"
    await eventually(lambda: sock.exists() or sock.is_symlink())


async def test_an_ask_from_the_cli_colours_the_node_and_its_answer_shows_as_text(
    workspace,
):
    with ModelServer() as model:
        async with session("neovim", workspace, settings(model)):
            await socket_of(workspace)
            async with dashboard(workspace) as url, browser() as page:
                await page.goto(url)
                await painted(page)
                assert await page.title() == f"Remora · {workspace.name}"
                node_id = await open_node(page, "helper")
                assert await colour(page, node_id) == IDLE

                model.reply_text(ANSWER, delay_s=2.0)
                asking = asyncio.create_task(
                    remora(workspace, "ask", HELPER, "What does helper do?", "--wait")
                )
                # Running: its colour in the graph, its state on its page.
                await until(
                    page,
                    "([id, c]) => "
                    "window.remoraGraph.getNodeAttribute(id, 'color') === c",
                    [node_id, RUNNING],
                )
                await until(
                    page,
                    "() => document.querySelector('#node-status')"
                    "?.textContent === 'running'",
                )
                code, _, err = await asking
                assert code == 0, err
                done = time.monotonic()
                await until(
                    page,
                    "t => [...document.querySelectorAll('#conversation .agent .text')]"
                    ".some(e => e.textContent === t)",
                    ANSWER,
                    timeout_s=SHOWN_S,
                )
                shown_after = time.monotonic() - done
                print(f"answer on the page {shown_after:.2f} s after ask returned")
                await until(
                    page,
                    "([id, c]) => "
                    "window.remoraGraph.getNodeAttribute(id, 'color') === c",
                    [node_id, IDLE],
                )
                # The answer is text: no element made of it, no script run.
                conversation = page.locator("#conversation")
                assert await conversation.locator("script, img, b").count() == 0
                assert "<script>document.title='pwned'</script>" in (
                    await conversation.text_content()
                )
                assert await page.title() == f"Remora · {workspace.name}"
                # The run is listed, done.
                await page.click("nav button[data-tab=runs]")
                await until(
                    page,
                    "() => document.querySelector('#tab-runs tr[data-status=done]')",
                )
                # What it cost: the run's tokens, today's totals in the header,
                # the node's cost and what wakes it on its page.
                await until(
                    page,
                    "() => /today [1-9][0-9]* tokens, 1 runs/"
                    ".test(document.querySelector('#totals').textContent)",
                )
                cell = page.locator("#tab-runs tr[data-status=done] td.tokens")
                assert int(await cell.first.text_content() or "0") > 0
                await page.click("nav button[data-tab=node]")
                await until(
                    page,
                    "() => /cost: [1-9][0-9]* tokens in 1 runs/.test("
                    "document.querySelector('#node-cost')?.textContent || '')",
                )
                wakes = await page.locator("#node-wakes").text_content() or ""
                assert wakes.startswith("wakes on:") and "(default)" in wakes
                assert not page.problems  # type: ignore[attr-defined]


async def test_a_proposal_accepted_on_the_page_changes_the_editors_buffer(workspace):
    with ModelServer() as model:
        async with session("neovim", workspace, settings(model)) as client:
            await socket_of(workspace)
            buffer = Buffer(client, "pkg/service.py")  # open in the editor
            edits = EditorEdits(client, buffer)
            model.reply_tool_call("rewrite_self", {"new_source": NEW_HELPER})
            model.reply_text("Added a docstring.")
            code, _, err = await remora(
                workspace, "ask", HELPER, "Docstring please", "--wait"
            )
            assert code == 0, err
            async with dashboard(workspace) as url, browser() as page:
                await page.goto(url)
                await painted(page)
                node_id = await open_node(page, "helper")
                # A proposal waits for the person: the node says so.
                await until(
                    page,
                    "([id, c]) => "
                    "window.remoraGraph.getNodeAttribute(id, 'color') === c",
                    [node_id, AWAITING_REVIEW],
                )
                pending = page.locator(".proposal.pending")
                assert DOCSTRING in await pending.locator("pre.diff").text_content()
                await pending.locator("button.accept").click()
                await eventually(lambda: DOCSTRING in buffer.text)
                assert len(edits.requests) == 1  # through the editor, once
                assert DOCSTRING not in (workspace / "pkg/service.py").read_text()
                await page.wait_for_selector(".proposal.accepted")
                assert "applied" in await page.text_content("#toast")
                await until(
                    page,
                    "([id, c]) => "
                    "window.remoraGraph.getNodeAttribute(id, 'color') === c",
                    [node_id, IDLE],
                )
                assert not page.problems  # type: ignore[attr-defined]


async def test_without_a_server_a_reject_from_the_page_sends_its_feedback_to_the_model(
    workspace, person_files
):
    with ModelServer() as model:
        config = person_files / "config" / "config.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    **settings(model),
                    "model": {**settings(model)["model"], "preload": False},
                }
            )
        )
        async with dashboard(workspace) as url, browser() as page:
            # The dashboard owns the project: the CLI goes through it.
            model.reply_tool_call("rewrite_self", {"new_source": NEW_HELPER})
            model.reply_text("Added a docstring.")
            code, _, err = await remora(
                workspace, "ask", HELPER, "Docstring please", "--wait"
            )
            assert code == 0, err
            assert "via server" in err
            await page.goto(url)
            await painted(page)
            await open_node(page, "helper")
            pending = page.locator(".proposal.pending")
            asked_before = len(model.requests)
            model.reply_text("I will keep it to one line.")
            await pending.locator("textarea.feedback").fill("use a one-line docstring")
            await pending.locator("button.reject").click()
            await eventually(lambda: len(model.requests) > asked_before, timeout=60)
            assert "use a one-line docstring" in last_user_message(model)
            await page.wait_for_selector(".proposal.rejected .feedback-given")
            assert DOCSTRING not in (workspace / "pkg/service.py").read_text()
            await until(
                page,
                "() => [...document.querySelectorAll('#conversation .text')]"
                ".some(e => e.textContent === 'I will keep it to one line.')",
            )
            assert not page.problems  # type: ignore[attr-defined]


async def test_a_run_is_cancelled_from_the_runs_panel_and_its_events_are_filtered(
    workspace, person_files
):
    with ModelServer() as model:
        wanted = settings(model)
        wanted["model"]["preload"] = False
        (person_files / "config" / "config.yaml").write_text(yaml.safe_dump(wanted))
        async with dashboard(workspace) as url, browser() as page:
            refused = await page.goto(url.split("?")[0])
            assert refused is not None and refused.status == 403
            assert "Open the URL" in await page.text_content("body")
            # The console reports the refused load by itself, maybe a moment
            # later: wait for it, then forget it (the icon is not refused).
            for _ in range(100):
                if any("403" in p for p in page.problems):  # type: ignore[attr-defined]
                    break
                await asyncio.sleep(0.05)
            page.problems.clear()  # type: ignore[attr-defined]  # that 403
            await page.goto(url)
            await painted(page)
            model.reply_delay(60)
            code, out, err = await remora(workspace, "ask", HELPER, "Take your time")
            assert code == 0, err
            run_id = out.strip()
            row = page.locator(f'#tab-runs tr[data-run="{run_id}"]')
            await row.and_(page.locator("[data-status=running]")).wait_for()
            await row.locator("button.cancel").click()
            await page.locator(
                f'#tab-runs tr[data-run="{run_id}"][data-status=cancelled]'
            ).wait_for()

            await page.click("nav button[data-tab=events]")
            await page.fill("#event-type", "agent_*")
            # Only agent_* rows, the cancellation among them (drawn next frame).
            await until(
                page,
                "() => { const rows = [...document.querySelectorAll("
                "'#event-list li')].map(r => r.dataset.type);"
                " return rows.includes('agent_cancelled')"
                " && rows.every(t => t.startsWith('agent_')); }",
            )
            node_id = await page.locator(
                f'#tab-runs tr[data-run="{run_id}"] a'
            ).get_attribute("data-node")
            await page.fill("#event-type", "")
            await page.fill("#event-node", node_id)
            await until(
                page,
                "id => { const rows = [...document.querySelectorAll("
                "'#event-list li')];"
                " return rows.some(r => r.dataset.type === 'human_chat')"
                " && rows.every(r => r.textContent.includes(id)); }",
                node_id,
            )
            await page.fill("#event-node", "rm_nobody")
            await until(page, "() => !document.querySelector('#event-list li')")
            assert not page.problems  # type: ignore[attr-defined]


@pytest.mark.workspace("batch")
async def test_a_graph_run_shows_its_steps_per_node(workspace, person_files):
    graphs = workspace / ".remora" / "graphs"
    graphs.mkdir(parents=True)
    (graphs / "docs.yaml").write_text(yaml.safe_dump(GRAPH))
    with ModelServer(responder=respond) as model:
        wanted = settings(model)
        wanted["model"]["preload"] = False
        (person_files / "config" / "config.yaml").write_text(yaml.safe_dump(wanted))
        async with dashboard(workspace) as url, browser() as page:
            await page.goto(url)
            await painted(page)
            await page.click("nav button[data-tab=graph-runs]")
            code, out, err = await remora(
                workspace, "graph", "run", "docs", "--wait", "--json"
            )
            assert code == 0, err
            status = json.loads(out)
            [[node, _proposal]] = status["proposals"].items()
            run_id = status["graph_run_id"]
            link = page.locator(f"#tab-graph-runs a:text-is('{run_id}')")
            await link.wait_for()  # listed live, from the graph's events
            await link.click()
            step = page.locator("#tab-graph-runs .step")
            await step.wait_for()
            assert await step.locator("h4").text_content() == "docs"
            assert await step.locator("li").all_text_contents() == [f"{node} completed"]
            assert not page.problems  # type: ignore[attr-defined]


async def test_when_the_editors_server_stops_the_page_says_so(workspace):
    with ModelServer() as model:
        lsp = session("neovim", workspace, settings(model))
        await lsp.__aenter__()
        try:
            await socket_of(workspace)
            async with dashboard(workspace) as url, browser() as page:
                await page.goto(url)
                await painted(page)
                await page.wait_for_selector("#connection.live")
                await lsp.__aexit__(None, None, None)
                lsp = None
                await page.wait_for_selector("#connection.lost")
                await page.fill("#search", "helper")
                await page.locator("#search-results a").first.click()
                await page.wait_for_selector("#toast.bad")
                assert "server" in await page.text_content("#toast")
        finally:
            if lsp is not None:
                await lsp.__aexit__(None, None, None)
