"""``remora graph``, ``checkpoint``, ``blame`` and ``trailers`` without a server
(the CLI opens the project itself), as a person runs them in a terminal.
"""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from tests.fakes.model_server import ModelServer
from tests.lsp.test_agent_runs import settings
from tests.lsp.test_command_line import remora
from tests.lsp.test_graphs import DOC, respond

pytestmark = pytest.mark.workspace("batch")

GRAPH = {
    "name": "docs",
    "steps": [
        {
            "id": "docs",
            "bundle": "docstring",
            "targets": {"path": "inventory/*.py", "name": "count"},
            "instruction": "ADD_DOCS",
        }
    ],
}


async def test_graph_checkpoint_blame_and_trailers_from_the_command_line(
    workspace, person_files
):
    git = ["git", "-C", str(workspace)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run(
        [*git, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"],
        check=True,
    )
    graphs = workspace / ".remora" / "graphs"
    graphs.mkdir(parents=True)
    (graphs / "docs.yaml").write_text(yaml.safe_dump(GRAPH))
    with ModelServer(responder=respond) as model:
        config = person_files / "config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.yaml").write_text(yaml.safe_dump(settings(model)))

        code, out, err = await remora(workspace, "graph", "run", "docs", "--json")
        assert code == 0, err
        status = json.loads(out)
        assert status["status"] == "completed"
        [[node, proposal_id]] = status["proposals"].items()
        assert status["steps"][0]["nodes"] == {node: "completed"}

        code, out, err = await remora(workspace, "checkpoint", "create", "mine")
        assert code == 0, err
        checkpoint_id = out.strip()
        code, out, err = await remora(workspace, "checkpoint", "list", "--json")
        labels = [c["label"] for c in json.loads(out)]
        assert labels[0] == "mine" and labels[1].startswith("before graph docs")

        code, out, err = await remora(workspace, "accept", proposal_id)
        assert code == 0, err
        assert DOC in (workspace / "inventory/stock.py").read_text()
        code, out, err = await remora(workspace, "blame", "inventory/stock.py")
        assert code == 0, err
        [row] = out.splitlines()[1:]
        assert row.split()[:3] == ["2-2", node, proposal_id]
        code, out, err = await remora(workspace, "trailers")
        assert code == 0, err
        assert out == f"Remora-Agent: {node} ({proposal_id})\n"

        code, out, err = await remora(workspace, "checkpoint", "restore", checkpoint_id)
        assert code == 0, err
        assert out.splitlines() == [
            f"restored {checkpoint_id}",
            "differs from the checkpoint: inventory/stock.py",
        ]
