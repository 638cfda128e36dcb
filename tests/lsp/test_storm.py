"""A storm (issue 30 §3), small: a function called by N others is edited and
saved while every caller's agent follows it; the editor gets every event, in
order, and every caller either runs or is refused by a cascade rule saying so
(one ``trigger_refused`` per save names all the callers over the budget).

The figures at scale (500 callers, the outline's latency while it happens) are
``bench/storm.py``'s; here the behaviour a person relies on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from remora_lsp.testing.actions import command, model_settings
from remora_lsp.testing.buffers import open_file
from remora_lsp.testing.model_server import ModelServer, Reply
from tests.lsp.conftest import session
from tests.lsp.helpers import eventually

if TYPE_CHECKING:
    from pathlib import Path

CALLERS = 30
BUDGET = 10
SAVES = 2
ENDS = ("agent_completed", "agent_failed", "agent_cancelled")
LONG_S = 60.0


def project(root: Path) -> None:
    """``callee`` in pkg/core.py, CALLERS callers over three modules."""
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "core.py").write_text("def callee(value):\n    return value + 0\n")
    for m in range(3):
        body = "from pkg.core import callee\n"
        body += "".join(
            f"\n\ndef caller_{m}_{n}(value):\n    return callee(value) + {n}\n"
            for n in range(CALLERS // 3)
        )
        (package / f"callers_{m}.py").write_text(body)


def save(client, uri: str, version: int) -> None:
    """The person edits the callee's body and saves."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=uri, version=version
            ),
            content_changes=[
                types.TextDocumentContentChangeWholeDocument(
                    text=f"def callee(value):\n    return value + {version}\n"
                )
            ],
        )
    )
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)
        )
    )


async def test_a_storm_of_callers_delivers_every_event_in_order(tmp_path):
    project(tmp_path)
    settings = model_settings(model := ModelServer())
    settings["swarm"] = {"cooldown_ms": 200, "turn_budget": BUDGET}
    model.default = Reply(text="Looked at the change: nothing to do.")
    with model:
        async with session("visual-studio-code", tmp_path, settings) as client:
            page = await command(client, "remora.nodes.graph", {})
            ids = {n["qualified_name"]: n["id"] for n in page["nodes"]}
            callers = [i for name, i in ids.items() if name.startswith("caller_")]
            assert len(callers) == CALLERS
            pattern = {"event_types": ["content_changed"], "nodes": [ids["callee"]]}
            for caller in callers:
                await command(
                    client,
                    "remora.subscriptions.add",
                    {"node_id": caller, "pattern": pattern},
                )
            uri = open_file(client, "pkg/core.py")

            def changes() -> list[dict]:
                return [
                    e
                    for e in client.events
                    if e["type"] == "content_changed" and e["path"] == "pkg/core.py"
                ]

            # Each save announced before the next (saves arriving together
            # are one change), the second while the first cascade's turns run.
            for number, version in enumerate(range(2, 2 + SAVES), start=1):
                save(client, uri, version)
                await eventually(lambda n=number: len(changes()) >= n)

            def of(kind: str) -> list[dict]:
                return [e for e in client.events if e["type"] == kind]

            def fate(change: dict) -> tuple[set[str], set[str]]:
                """The agents ``change`` ran, and those it was refused for."""
                ran = {
                    e["agent_id"]
                    for e in of("agent_started")
                    if change["id"] in e["trigger_ids"]
                }
                said_no = {
                    agent
                    for e in of("trigger_refused")
                    if e["trigger_id"] == change["id"]
                    for agent in e["agent_ids"]
                }
                return ran, said_no

            everyone = {*callers, ids["callee"]}  # the callee's own agent too

            def over() -> bool:
                """Every trigger ran or was refused, every turn ended."""
                started = {e["run_id"] for e in of("agent_started")}
                done = {e["run_id"] for e in client.events if e["type"] in ENDS}
                accounted = all(set.union(*fate(c)) == everyone for c in changes())
                return len(changes()) == SAVES and accounted and started <= done

            await eventually(over, timeout=LONG_S)
            last = await command(client, "remora.events.last_seq", {})
            await eventually(lambda: client.events[-1]["seq"] >= last["seq"])

            seqs = [e["seq"] for e in client.events]
            assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), (
                "every event, in order, none missing"
            )
            for change in changes():
                ran, said_no = fate(change)
                assert len(ran) == BUDGET and not ran & said_no
            # One refusal per save names every agent over the budget.
            refused = of("trigger_refused")
            assert [e["rule"] for e in refused] == ["turn_budget"] * SAVES
            assert [len(e["agent_ids"]) for e in refused] == [
                CALLERS + 1 - BUDGET
            ] * SAVES
            started = of("agent_started")
            # A second save while the first cascade's turns ran or cooled down
            # is coalesced into their next turn, never dropped.
            assert sum(len(e["trigger_ids"]) for e in started) == SAVES * BUDGET
