"""What wakes a node's agent, changed from its page: a subscription added and
removed, the node muted and unmuted — and the command line sees the same
(one engine). Tested in Debian's Chromium.
"""

from __future__ import annotations

import json

from tests.dashboard.support import browser, dashboard, painted
from tests.dashboard.test_page import open_node, until
from tests.lsp.test_command_line import HELPER, remora

OWN = (
    "#node-wakes li:not([data-subscription^=sub_msg_])"
    ":not([data-subscription^=sub_own_])"
)
"""The node's own subscriptions on its page (not its two defaults)."""


async def subscriptions(workspace) -> dict:
    code, out, err = await remora(workspace, "subscriptions", HELPER, "--json")
    assert code == 0, err
    return json.loads(out)


async def test_a_subscription_is_added_and_removed_and_the_node_muted_from_its_page(
    workspace, person_files
):
    async with dashboard(workspace) as url, browser() as page:
        await page.goto(url)
        await painted(page)
        await open_node(page, "helper")
        assert await page.locator(OWN).count() == 0

        # Nothing typed: the engine says why it refuses, nothing is added.
        await page.click("#node-wakes button.add-sub")
        await page.wait_for_selector("#toast.bad")
        assert "match every event" in (await page.text_content("#toast") or "")

        await page.fill("#node-wakes input.sub-types", "content_changed")
        await page.fill("#node-wakes input.sub-path", "pkg/models.py")
        await page.click("#node-wakes button.add-sub")
        own = page.locator(OWN)
        await own.wait_for()
        assert "(its own)" in (await own.text_content() or "")
        [added] = [
            s
            for s in (await subscriptions(workspace))["subscriptions"]
            if not s["default"]
        ]
        assert added["pattern"]["event_types"] == ["content_changed"]
        assert added["pattern"]["path_glob"] == "pkg/models.py"
        assert await own.get_attribute("data-subscription") == added["id"]
        assert await page.input_value("#node-wakes input.sub-types") == ""

        await own.locator("button.remove-sub").click()
        await until(page, f"() => !document.querySelector('{OWN}')")
        assert all(
            s["default"] for s in (await subscriptions(workspace))["subscriptions"]
        )

        await page.click("#node-mute")
        await until(
            page,
            "() => document.querySelector('#node-wakes b').textContent"
            ".includes('muted')",
        )
        assert (await subscriptions(workspace))["muted"] is True
        assert await page.text_content("#node-mute") == "Unmute"
        await page.click("#node-mute")
        await until(
            page, "() => document.querySelector('#node-mute')?.textContent === 'Mute'"
        )
        assert (await subscriptions(workspace))["muted"] is False
        page.problems.remove(  # type: ignore[attr-defined]  # the refused empty one
            next(p for p in page.problems if "400" in p)  # type: ignore[attr-defined]
        )
        assert not page.problems  # type: ignore[attr-defined]
