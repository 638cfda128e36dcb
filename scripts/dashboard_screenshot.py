"""Refresh docs/images/dashboard.png: the dashboard on a copy of the example
project, with a scripted model (an answer, a pending proposal, a running
agent), in Debian's Chromium.

    .venv/bin/python scripts/dashboard_screenshot.py [OUT.png]
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from remora_lsp.testing.model_server import ModelServer  # noqa: E402
from tests.dashboard.support import browser, dashboard, painted  # noqa: E402
from tests.lsp.test_agent_runs import settings  # noqa: E402
from tests.lsp.test_command_line import remora  # noqa: E402

QUOTE = '''def quote(item: Item, quantity, percent=0):
    """The price of ``quantity`` of ``item`` with ``percent`` off, VAT included."""
    return with_vat(discount(item.price_for(quantity), percent))'''


async def main(out: Path) -> None:
    """Make the scene and take the picture."""
    work = Path(tempfile.mkdtemp(prefix="remora-shot-"))
    root = work / "inventory"
    shutil.copytree(REPO / "examples" / "inventory", root)
    (work / "config").mkdir()
    os.environ["REMORA_CONFIG_HOME"] = str(work / "config")
    os.environ["REMORA_STATE_HOME"] = str(work / "state")
    with ModelServer() as model:
        wanted = settings(model)
        wanted["model"]["preload"] = False
        (work / "config" / "config.yaml").write_text(yaml.safe_dump(wanted))
        async with dashboard(root) as url, browser() as page:
            model.reply_text("It returns the price of an item for a quantity.")
            discount = "inventory/pricing.py::discount"
            await remora(root, "ask", discount, "What do you return?", "--wait")
            model.reply_tool_call("rewrite_self", {"new_source": QUOTE})
            model.reply_text("Added a one-line docstring.")
            quote = "inventory/pricing.py::quote"
            await remora(root, "ask", quote, "Add a docstring.", "--wait")
            await page.set_viewport_size({"width": 1500, "height": 900})
            await page.goto(url)
            await painted(page)
            model.reply_delay(30)  # an agent still running in the picture
            await remora(root, "ask", "inventory/orders.py::OrderBook", "Review.")
            await page.fill("#search", "quote")
            await page.locator("#search-results a").first.click()
            await page.wait_for_selector(".proposal.pending")
            await page.click("#zoom-out")
            await asyncio.sleep(1.5)
            await page.screenshot(path=str(out))
    shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else "docs/images/dashboard.png"
    asyncio.run(main(Path(target).resolve()))
