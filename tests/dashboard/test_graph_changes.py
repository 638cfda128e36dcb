"""The page's graph follows the code: a function added in the editor appears
in it, renamed it shows its new name, deleted it goes (``topology_changed``
events reload the graph). Tested in Debian's Chromium.
"""

from __future__ import annotations

from tests.dashboard.support import browser, dashboard, painted
from tests.dashboard.test_page import open_node, socket_of, until
from tests.lsp.conftest import session
from tests.lsp.helpers import Buffer

NAMES = "() => window.remoraGraph.mapNodes((id, a) => a.name)"
HAS = f"name => ({NAMES})().includes(name)"
HAS_NOT = f"name => !({NAMES})().includes(name)"
UNUSED = "def unused(item: Item):"


async def test_a_function_added_in_the_editor_appears_in_the_pages_graph(workspace):
    async with session("neovim", workspace) as client:
        await socket_of(workspace)
        buffer = Buffer(client, "pkg/service.py")
        async with dashboard(workspace) as url, browser() as page:
            await page.goto(url)
            await painted(page)
            before = await page.evaluate("window.remoraGraph.order")
            assert not await page.evaluate(HAS, "brand_new")

            buffer.replace_text(UNUSED, f"def brand_new():\n    return 1\n\n\n{UNUSED}")
            await until(page, HAS, "brand_new")
            assert await page.evaluate("window.remoraGraph.order") == before + 1
            # Found by the search box, and its page opens.
            await open_node(page, "brand_new")
            assert await page.text_content(".card h2") == "brand_new"

            buffer.replace_text("def brand_new():", "def renamed_one():")
            await until(page, HAS, "renamed_one")
            await until(page, HAS_NOT, "brand_new")

            # Deleted: its node is orphaned (its history kept), not in the graph.
            buffer.replace_text("def renamed_one():\n    return 1\n\n\n", "")
            await until(page, HAS_NOT, "renamed_one")
            assert await page.evaluate("window.remoraGraph.order") == before
            assert not page.problems  # type: ignore[attr-defined]
