"""In the editor: proposals cannot hide code (issue 11 part 6).

A model that sends a Trojan Source rewrite gets the refusal as its tool result
and no proposal reaches the person; a proposal that keeps invisible characters
the person's own code has says so in its diagnostic, its Accept title and its
diff, where they show as markers.
"""

from __future__ import annotations

from remora_lsp.testing.model_server import ModelServer
from tests.lsp.conftest import session
from tests.lsp.helpers import Buffer, eventually
from tests.lsp.test_agent_runs import code_actions, command, node_of, of_type, settings

RLO = "\u202e"
LRI = "\u2066"
PDI = "\u2069"

TROJAN = f"""def helper(self):
        if self.role != "user":  # {RLO}{LRI}# admins only{PDI}{LRI}
            return True
        return order("b", 2)"""


async def test_a_trojan_source_rewrite_is_refused_and_the_model_told_why(workspace):
    with ModelServer() as model:
        async with session("visual-studio-code", workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            model.reply_tool_call("rewrite_self", {"new_source": TROJAN})
            model.reply_text("I could not make that change.")
            await command(
                client, "remora.agent.chat", {"node_id": helper, "message": "Gate it"}
            )
            await eventually(lambda: of_type(client, "agent_completed"))
            told = model.text_of(-1)  # the request after the tool call
            assert "U+202E RIGHT-TO-LEFT OVERRIDE on line 2" in told
            assert "Trojan Source" in told
            assert not of_type(client, "rewrite_proposed")
            card = await command(client, "remora.node.get", {"node_id": helper})
            assert card["pending_proposals"] == 0


async def test_a_proposal_keeping_the_persons_hidden_characters_says_so(workspace):
    (workspace / "pkg" / "labels.py").write_text(
        f'def label():\n    return "{RLO}abc"\n', encoding="utf-8"
    )
    with ModelServer() as model:
        async with session("visual-studio-code", workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/labels.py")
            label = await node_of(client, buffer, "def label")
            model.reply_tool_call(
                "rewrite_self",
                {
                    "new_source": f'def label():\n    """The label."""\n'
                    f'    return "{RLO}abc"'
                },
            )
            model.reply_text("Added a docstring.")
            await command(
                client, "remora.agent.chat", {"node_id": label, "message": "Document"}
            )
            proposed = await eventually(lambda: of_type(client, "rewrite_proposed"))
            warning = "keeps invisible characters already in your code (U+202E)"
            diagnostics = await eventually(
                lambda: [
                    d
                    for d in client.diagnostics.get(buffer.uri, [])
                    if d.source == "remora"
                ]
            )
            assert warning in diagnostics[0].message
            actions = await code_actions(client, buffer.uri, 0)
            assert warning in actions[0]["title"]
            assert actions[0]["title"].startswith("Accept: rewrite")
            shown = await command(
                client,
                "remora.proposal.diff",
                {"proposal_id": proposed[0]["proposal_id"]},
            )
            assert shown["diff"].startswith(f"# Remora: this change {warning}\n")
            assert '⟦U+202E⟧abc"' in shown["diff"]
            assert RLO in shown["new_source"]  # what Accept writes is exact
