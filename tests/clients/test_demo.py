"""Client tier: the README's main job, a real client session over stdio.

``scripts/demo.py`` is a small LSP client: it starts ``remora-lsp``, waits for
indexing, prints every node of a project with its id, and asks one function's
agent for a docstring on the embedded local model (extra ``local``). The Neovim
plugin and the VS Code extension get their own tests in this folder when they land.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Any agent status: a run that ended in a refusal leaves its node in ``error``.
NODE_LINE = re.compile(
    r"^\s+(class|function|method) (\S+)\s+(rm_[a-z0-9]{8})"
    r"\s+(?:idle|error|awaiting_review)"
)


def run_demo(project: Path, *options: str) -> str:
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "demo.py"), str(project), *options],
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
    )
    return result.stdout


def test_demo_prints_the_outline_with_stable_ids(tmp_path):
    project = tmp_path / "inventory"
    shutil.copytree(
        REPO / "examples" / "inventory",
        project,
        ignore=shutil.ignore_patterns(".remora"),
    )
    first = run_demo(project)
    nodes = {
        match.group(2): match.group(3)
        for line in first.splitlines()
        if (match := NODE_LINE.match(line))
    }
    assert {"Item", "price_for", "OrderBook", "place", "quote", "demo"} <= set(nodes)
    assert "4 files, 4 parsed" in first
    assert "Hover on quote:" in first
    assert "callers (1): OrderBook.place" in first
    assert "callees (2): discount" in first

    # The agent of quote ran on the embedded model: a proposal, or a clear refusal.
    assert "Asking the agent of quote" in first
    assert "progress begin: Remora: quote" in first
    assert "event model_response" in first
    if "event rewrite_proposed" in first:
        assert re.search(r"Proposal pr_[0-9a-f]{12} \(pending\):", first)
        assert "+++ b/inventory/pricing.py" in first
        # A proposal keeps behaviour: the guard says so (never a silent change).
        assert "  ✓ docstring-only: code unchanged except docstrings" in first
        assert "-    return with_vat" not in first
        assert "Accepting it" in first and "Nothing was applied." in first
    else:
        assert "refused" in first or "agent_failed" in first
    source = (project / "inventory" / "pricing.py").read_text(encoding="utf-8")
    original = REPO / "examples" / "inventory" / "inventory" / "pricing.py"
    assert source == original.read_text(encoding="utf-8")  # nothing applied

    second = run_demo(project, "--no-agent")
    assert "4 files, 0 parsed" in second  # warm start
    assert "Asking the agent" not in second
    again = {
        match.group(2): match.group(3)
        for line in second.splitlines()
        if (match := NODE_LINE.match(line))
    }
    assert again == nodes


QUOTE_REWRITTEN = '''def quote(item: Item, quantity, percent=0):
    """The price of ``quantity`` items after the discount, VAT included."""
    return discount(item.price_for(quantity), percent)'''
QUOTE_DOCUMENTED = '''def quote(item: Item, quantity, percent=0):
    """The price of ``quantity`` items after the discount, VAT included."""
    return with_vat(discount(item.price_for(quantity), percent))'''


def scripted_demo(tmp_path, person_files, *replies: str) -> str:
    """The demo's output on a copy of the example, its model scripted."""
    from tests.fakes.model_server import ModelServer

    project = tmp_path / "inventory"
    shutil.copytree(
        REPO / "examples" / "inventory",
        project,
        ignore=shutil.ignore_patterns(".remora"),
    )
    with ModelServer() as model:
        for text in replies:
            model.reply_text(text)
        config = person_files / "config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.yaml").write_text(
            f"model:\n  base_url: {model.url}\n  name: scripted\n  protocol: fenced\n",
            encoding="utf-8",
        )
        return run_demo(project)


def test_the_demo_refuses_a_docstring_that_drops_a_call(tmp_path, person_files):
    # Twice a docstring and a dropped call: refused once with why, then the run
    # ends with a clear failure and nothing pending (never a silent change).
    dropped = f"```python\n{QUOTE_REWRITTEN}\n```"
    output = scripted_demo(tmp_path, person_files, dropped, dropped)
    assert "event tool_result: refused: Error: you changed the code: line 3" in output
    assert "No proposal: asked “Add a docstring that says what this function" in output
    assert "the agent changed the code twice" in output
    assert "No proposal: the run ended with agent_failed." in output
    assert "Proposal pr_" not in output


def test_the_demo_shows_what_a_proposal_passed(tmp_path, person_files):
    output = scripted_demo(
        tmp_path,
        person_files,
        f"```python\n{QUOTE_REWRITTEN}\n```",
        f"```python\n{QUOTE_DOCUMENTED}\n```",
    )
    assert re.search(r"Proposal pr_[0-9a-f]{12} \(pending\):", output)
    assert "What was checked:" in output
    assert "  ✓ docstring-only: code unchanged except docstrings" in output
    assert "  – tests: not run: the project is not trusted" in output
    assert "-    return with_vat" not in output
