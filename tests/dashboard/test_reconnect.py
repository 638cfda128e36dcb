"""The dashboard outlives the editor's server: it goes away, the page says
so, and when a server serves the project again the page reconnects by itself
and resumes after the last event it had — the events made meanwhile (by the
command line, with no server) arrive, none lost and none twice. Tested in
Debian's Chromium.
"""

from __future__ import annotations

import json

import yaml

from remora_lsp.testing.model_server import ModelServer
from tests.dashboard.support import browser, dashboard, painted
from tests.dashboard.test_page import open_node, socket_of, until
from tests.lsp.conftest import session
from tests.lsp.test_agent_runs import settings
from tests.lsp.test_command_line import HELPER, remora

SAID = (
    "t => [...document.querySelectorAll('#conversation .text')]"
    ".some(e => e.textContent === t)"
)
SEQS_ON_PAGE = (
    "() => [...document.querySelectorAll('#event-list li')]"
    ".map(li => Number(li.dataset.seq))"
)


async def test_the_page_reconnects_when_the_editors_server_comes_back(
    workspace, person_files
):
    with ModelServer() as model:
        wanted = settings(model)
        wanted["model"]["preload"] = False
        # The command line's settings, for its run while no server is up.
        (person_files / "config" / "config.yaml").write_text(yaml.safe_dump(wanted))
        lsp = session("neovim", workspace, wanted)
        await lsp.__aenter__()
        try:
            await socket_of(workspace)
            async with dashboard(workspace) as url, browser() as page:
                await page.goto(url)
                await painted(page)
                await page.wait_for_selector("#connection.live")
                first_seq = await page.evaluate("window.remoraLastSeq || 0")
                await lsp.__aexit__(None, None, None)
                lsp = None

                # The editor closed: the page says so, its actions say why.
                await page.wait_for_selector("#connection.lost")
                await page.fill("#search", "helper")
                await page.locator("#search-results a").first.click()
                await page.wait_for_selector("#toast.bad")
                assert "reconnects" in (await page.text_content("#toast") or "")

                # Meanwhile the command line runs the project itself.
                model.reply_text("Asked while the editor was closed.")
                code, _, err = await remora(
                    workspace, "ask", HELPER, "Still there?", "--wait"
                )
                assert code == 0, err
                assert "via server" not in err

                # The editor opens again: the page is live again by itself,
                # and the run made meanwhile is on it.
                lsp = session("neovim", workspace, wanted)
                await lsp.__aenter__()
                await socket_of(workspace)
                await page.wait_for_selector("#connection.live", timeout=60_000)
                node_id = await open_node(page, "helper")
                await until(page, SAID, "Asked while the editor was closed.")
                # And what happens now through the server shows live.
                model.reply_text("Asked through the server again.")
                code, _, err = await remora(
                    workspace, "ask", HELPER, "And now?", "--wait"
                )
                assert code == 0, err
                assert "via server" in err
                await until(page, SAID, "Asked through the server again.")

                # Every event since the page opened, once each, in order.
                code, out, err = await remora(
                    workspace,
                    "logs",
                    "--json",
                    "--since",
                    str(first_seq),
                    "--limit",
                    "1000",
                )
                assert code == 0, err
                stored = [json.loads(line)["seq"] for line in out.splitlines()]
                await page.click("nav button[data-tab=events]")
                await until(page, f"() => ({SEQS_ON_PAGE})().includes({stored[-1]})")
                shown = await page.evaluate(SEQS_ON_PAGE)
                after = sorted(s for s in shown if s > first_seq)
                assert after == stored  # none lost, none twice
                assert node_id in (await page.text_content("#event-list") or "")
                assert not [
                    p
                    for p in page.problems  # type: ignore[attr-defined]
                    if "503" not in p and "Service Unavailable" not in p
                ]
        finally:
            if lsp is not None:
                await lsp.__aexit__(None, None, None)
