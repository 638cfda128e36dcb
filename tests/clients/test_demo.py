"""Client tier: the README's main job, a real client session over stdio.

``scripts/demo.py`` is a small LSP client: it starts ``remora-lsp``, waits for
indexing and prints every node of a project with its id. The Neovim plugin and
the VS Code extension get their own tests in this folder when they land.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NODE_LINE = re.compile(r"^\s+(class|function|method) (\S+)\s+(rm_[a-z0-9]{8})\s+idle")


def run_demo(project: Path) -> str:
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "demo.py"), str(project)],
        capture_output=True,
        text=True,
        timeout=120,
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

    second = run_demo(project)
    assert "4 files, 0 parsed" in second  # warm start
    again = {
        match.group(2): match.group(3)
        for line in second.splitlines()
        if (match := NODE_LINE.match(line))
    }
    assert again == nodes
