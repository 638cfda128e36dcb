"""In the editor: an agent of a secret file does not run, and the run id the
editor was given ends with the refusal naming the rule (issue 11 part 2).
"""

from __future__ import annotations

from remora_lsp.testing.model_server import ModelServer
from tests.lsp.conftest import session
from tests.lsp.helpers import Buffer, eventually
from tests.lsp.test_agent_runs import command, node_of, of_type, settings


async def test_a_chat_to_a_secret_node_is_refused_with_its_run_id(workspace):
    (workspace / "pkg" / "secret_keys.py").write_text(
        'def api_key():\n    return "sk-live-0123456789abcdef"\n', encoding="utf-8"
    )
    with ModelServer() as model:
        config = {**settings(model), "secrets": {"exclude": ["secret_*.py"]}}
        async with session("visual-studio-code", workspace, config) as client:
            buffer = Buffer(client, "pkg/secret_keys.py")
            secret = await node_of(client, buffer, "def api_key")
            started = await command(
                client, "remora.agent.chat", {"node_id": secret, "message": "Key?"}
            )
            refused = await eventually(
                lambda: of_type(client, "trigger_refused", run_id=started["run_id"])
            )
            assert refused[0]["rule"] == "secret"
            assert "secret_keys.py matches secrets.exclude" in refused[0]["reason"]
            assert model.requests == []
