"""Bounds on what one model reply can create (issue 11 part 4).

A scripted hostile model (remora_lsp.testing.model_server, at the HTTP
boundary) floods tool
calls, sends megabyte arguments, piles up subscriptions and memory and talks
without end. Each test checks what the person would notice: the events that
arrive (a readable ``limit_reached`` for every refusal), their size, and what
the store keeps.
"""

from __future__ import annotations

import json
import sqlite3

from remora_lsp.testing.model_server import Reply
from tests.core.agent_support import AgentHarness, of_type


async def start(shop: AgentHarness, **limits):
    return await shop.start(model={"protocol": "tools"}, limits=limits)


def event_sizes(events) -> list[int]:
    return [len(e.model_dump_json()) for e in events]


async def test_huge_tool_arguments_are_stored_once_and_cut_in_the_event(shop):
    await start(shop, event_argument_chars=1_000)
    huge = "x" * 2_000_000
    shop.server.reply_tool_call("kv_get", {"key": huge})
    shop.server.reply_tool_call("kv_get", {"key": huge})
    shop.server.reply_text("Done.")
    events = await shop.ask("total", "Read this.")

    called = of_type(events, "tool_called")
    assert len(called) == 2
    for event in called:
        shown = json.dumps(event.arguments)
        assert len(shown) < 2_000
        assert event.arguments["truncated_arguments"]["chars"] > 2_000_000
    assert max(event_sizes(events)) < 5_000
    digest = called[0].arguments["truncated_arguments"]["stored"]

    db = sqlite3.connect(shop.root / ".remora" / "remora.db")
    rows = db.execute("SELECT hash, length(body) FROM tool_arguments").fetchall()
    db.close()
    # Stored once, its first 16 KiB (the event says how long the whole was).
    assert rows == [(digest, 16_384)]
    assert called[0].arguments["truncated_arguments"]["kept_chars"] == 16_384


async def test_small_arguments_are_shown_whole(shop):
    await start(shop)
    shop.server.reply_tool_call("kv_get", {"key": "style"})
    shop.server.reply_text("Done.")
    events = await shop.ask("total", "Read.")
    assert of_type(events, "tool_called")[0].arguments == {"key": "style"}


async def test_a_flood_of_tool_calls_is_cut_with_one_event(shop):
    await start(shop, tool_calls_per_run=5)
    shop.server.script.append(
        Reply(tool_calls=[("kv_get", {"key": f"k{i}"}) for i in range(40)])
    )
    shop.server.reply_text("Done.")
    events = await shop.ask("total", "Go.")

    assert len(of_type(events, "tool_called")) == 5
    refused = of_type(events, "limit_reached")
    assert len(refused) == 1
    assert refused[0].limit == "limits.tool_calls_per_run"
    assert "5 tool calls" in refused[0].reason
    assert of_type(events, "agent_completed")
    told = [m for m in shop.server.requests[-1]["messages"] if m.get("role") == "tool"]
    assert "the limit" in told[-1]["content"]


async def test_subscriptions_per_agent_are_bounded(shop):
    await start(shop, subscriptions_per_agent=3)
    total = shop.id("total")
    shop.server.script.append(
        Reply(
            tool_calls=[
                (
                    "subscribe",
                    {
                        "event_types": ["content_changed"],
                        "nodes": [total],
                        "tags": [f"t{i}"],
                    },
                )
                for i in range(6)
            ]
        )
    )
    shop.server.reply_text("Done.")
    events = await shop.ask("tax", "Watch total a lot.")

    # A reply's tool calls run concurrently: count, not order.
    assert (
        sorted(r.ok for r in of_type(events, "tool_result")) == [False] * 3 + [True] * 3
    )
    refused = of_type(events, "limit_reached")
    assert refused and {r.limit for r in refused} == {"limits.subscriptions_per_agent"}
    db = sqlite3.connect(shop.root / ".remora" / "remora.db")
    (held,) = db.execute("SELECT count(*) FROM subscriptions").fetchone()
    db.close()
    assert held == 3


async def test_memory_per_agent_is_bounded(shop):
    await start(shop, kv_bytes_per_agent=10_000)
    shop.server.script.append(
        Reply(
            tool_calls=[
                ("kv_set", {"key": f"k{i}", "value": "v" * 4_000}) for i in range(4)
            ]
        )
    )
    shop.server.reply_tool_call("kv_set", {"key": "k0", "value": "short"})
    shop.server.reply_text("Done.")
    events = await shop.ask("total", "Remember a lot.")

    results = of_type(events, "tool_result")
    assert sorted(r.ok for r in results[:4]) == [False, False, True, True]
    assert results[4].ok  # replacing a key within the budget still works
    refused = of_type(events, "limit_reached")
    assert {r.limit for r in refused} == {"limits.kv_bytes_per_agent"}
    assert "10,000" in refused[0].reason


async def test_an_endless_answer_is_cut(shop):
    await start(shop, answer_chars=1_000)
    shop.server.reply_text("blah " * 200_000)
    events = await shop.ask("total", "Talk.")
    completed = of_type(events, "agent_completed")[0]
    assert len(completed.result) < 1_100
    assert "cut at 1,000 of 1,000,000 chars" in completed.result


async def test_limits_are_settings_with_defaults():
    from remora_core.config import validate

    config, problems = validate(
        {"limits": {"tool_calls_per_run": 0, "answer_chars": 500}}
    )
    assert problems and "tool_calls_per_run" in problems[0]
    assert config.limits.tool_calls_per_run == 50
    assert config.limits.answer_chars == 500


async def test_one_open_question_per_agent(shop):
    project = await start(shop)
    shop.server.script.append(
        Reply(
            tool_calls=[("ask_user", {"question": f"Question {i}?"}) for i in range(8)]
        )
    )
    shop.server.reply_text("Done.")
    await shop.send("tax", "Ask me things.")

    blocked = await shop.wait_for("agent_blocked")
    await shop.wait_for("limit_reached")
    questions = project.agents.services.questions
    assert len(questions.pending) == 1
    assert questions.respond(blocked.question_id, "yes")
    await project.swarm.runner.idle()

    events = await shop.events()
    assert len(of_type(events, "agent_blocked")) == 1
    refused = of_type(events, "limit_reached")
    assert len(refused) == 7
    assert {r.limit for r in refused} == {"limits.open_questions_per_agent"}
    assert "already waits for an answer" in refused[0].reason
    assert sorted(r.ok for r in of_type(events, "tool_result")) == [False] * 7 + [True]


async def test_a_huge_question_is_refused(shop):
    await start(shop)
    shop.server.reply_tool_call("ask_user", {"question": "Why? " * 10_000})
    shop.server.reply_text("Done.")
    events = await shop.ask("tax", "Ask.")
    assert not of_type(events, "agent_blocked")
    assert of_type(events, "limit_reached")
    assert "at most 2,000 characters" in of_type(events, "tool_result")[0].summary


async def test_chat_history_is_bounded_in_bytes(shop):
    await start(shop, history_bytes=20_000)
    shop.server.reply_text("A small answer.")
    await shop.ask("total", "A small question?")
    shop.server.reply_text("huge " * 50_000)
    await shop.ask("total", "A question with a huge answer?")
    shop.server.reply_text("Fine.")
    await shop.ask("total", "The next question?")

    sent = "\n".join(
        str(m.get("content")) for m in shop.server.requests[-1]["messages"]
    )
    assert "huge huge" not in sent  # the huge turn was dropped from the history
    assert len(sent) < 30_000
    db = sqlite3.connect(shop.root / ".remora" / "remora.db")
    sizes = [n for (n,) in db.execute("SELECT length(chat_history) FROM agent_state")]
    db.close()
    assert sizes and max(sizes) <= 20_000


async def test_a_huge_proposal_is_refused(shop):
    await start(shop, proposal_chars=5_000)
    body = "\n".join(f"    x{i} = {i}" for i in range(2_000))
    shop.server.reply_tool_call(
        "rewrite_self", {"new_source": f"def total(prices):\n{body}\n    return 0"}
    )
    shop.server.reply_text("Done.")
    events = await shop.ask("total", "Rewrite.")
    assert not of_type(events, "rewrite_proposed")
    refused = of_type(events, "limit_reached")
    assert [r.limit for r in refused] == ["limits.proposal_chars"]
    assert "at most 5,000 characters" in of_type(events, "tool_result")[0].summary


async def test_a_huge_broadcast_is_refused(shop):
    await start(shop, message_chars=1_000)
    shop.server.reply_tool_call(
        "send_message", {"to": "broadcast:siblings", "content": "spam " * 1_000}
    )
    shop.server.reply_text("Done.")
    events = await shop.ask("tax", "Tell everyone.")
    assert not of_type(events, "agent_message")
    assert [r.limit for r in of_type(events, "limit_reached")] == [
        "limits.message_chars"
    ]


HOARD = '''"""Remember a value under a key."""
from remora import Input, external

key: str = Input(description="the key")
value: str = Input(description="the value")


@external
async def kv_set(key: str, value: str) -> None: ...


await kv_set(key, value)
"stored"
'''


async def test_a_pym_tool_has_the_same_memory_budget(shop):
    tools = shop.root / ".remora" / "bundles" / "hoarder" / "tools"
    tools.mkdir(parents=True)
    (tools.parent / "bundle.yaml").write_text("name: hoarder\n", encoding="utf-8")
    (tools / "hoard.pym").write_text(HOARD, encoding="utf-8")
    await shop.start(
        model={"protocol": "tools"},
        limits={"kv_bytes_per_agent": 10_000},
        trusted=True,
        bundles={"function": "hoarder"},
    )
    shop.server.reply_tool_call("hoard", {"key": "a", "value": "v" * 6_000})
    shop.server.reply_tool_call("hoard", {"key": "b", "value": "v" * 6_000})
    shop.server.reply_text("Done.")
    events = await shop.ask("total", "Hoard.")

    first, second = of_type(events, "tool_result")
    assert first.ok and not second.ok
    assert "remove or shorten other keys first" in second.summary
    (refused,) = of_type(events, "limit_reached")
    assert refused.limit == "limits.kv_bytes_per_agent"


def store_bytes(root) -> int:
    return sum(p.stat().st_size for p in (root / ".remora").iterdir() if p.is_file())


async def test_a_refused_ten_megabyte_argument_is_not_kept_whole(shop):
    """Issue 25 class 8: a 10 MB message is refused (limits.message_chars),
    and what the store keeps of it is its size, its sha256 and its first
    kilobytes: ``.remora`` grows by less than 1 MB.
    """
    await start(shop)
    before = store_bytes(shop.root)
    huge = "y" * 10_000_000
    shop.server.reply_tool_call("send_message", {"to": shop.id("tax"), "content": huge})
    shop.server.reply_text("Done.")
    events = await shop.ask("total", "Tell tax everything.")

    assert of_type(events, "limit_reached")[0].limit == "limits.message_chars"
    called = of_type(events, "tool_called")[0]
    kept = called.arguments["truncated_arguments"]
    assert kept["chars"] > 10_000_000
    await shop.stop()
    assert store_bytes(shop.root) - before < 1_000_000
    assert kept["kept_chars"] < 100_000  # said where it is shown
    db = sqlite3.connect(shop.root / ".remora" / "remora.db")
    (longest,) = db.execute("SELECT max(length(body)) FROM tool_arguments").fetchone()
    db.close()
    assert longest < 100_000
