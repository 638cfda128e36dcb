"""In the editor: one hostile model reply cannot flood it (issue 11 part 4).

A real server, a scripted model at the HTTP boundary. The reply sends tool
calls with megabyte arguments and a flood of subscriptions; the editor gets
small ``remora/event`` notifications and a readable ``limit_reached`` for what
was refused, and the run still ends.
"""

from __future__ import annotations

import json

from remora_lsp.testing.model_server import ModelServer, Reply
from tests.lsp.conftest import session
from tests.lsp.helpers import Buffer
from tests.lsp.test_agent_runs import command, finished, node_of, of_type, settings


async def test_a_hostile_reply_sends_small_events_and_says_what_it_refused(workspace):
    with ModelServer() as model:
        huge = "x" * 1_000_000
        model.script.append(
            Reply(
                tool_calls=[("kv_get", {"key": huge}) for _ in range(3)]
                + [
                    (
                        "subscribe",
                        {"event_types": ["content_changed"], "tags": [f"{i}"]},
                    )
                    for i in range(30)
                ]
            )
        )
        model.reply_text("Done.")
        config = {**settings(model), "limits": {"subscriptions_per_agent": 5}}
        async with session("visual-studio-code", workspace, config) as client:
            buffer = Buffer(client, "pkg/models.py")
            node = await node_of(client, buffer, "def ")
            started = await command(
                client, "remora.agent.chat", {"node_id": node, "message": "Go."}
            )
            await finished(client, started["run_id"])

            sizes = [len(json.dumps(e)) for e in client.events]
            assert max(sizes) < 10_000
            called = of_type(client, "tool_called", tool="kv_get")
            assert len(called) == 3
            assert called[0]["arguments"]["truncated_arguments"]["chars"] > 1_000_000
            refused = of_type(client, "limit_reached", run_id=started["run_id"])
            assert len(refused) == 25
            assert refused[0]["limit"] == "limits.subscriptions_per_agent"
            assert "holds 5 subscriptions" in refused[0]["reason"]
