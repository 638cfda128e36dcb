"""Agents look around the project: ``search_nodes``, ``read_node`` and
``find_references`` in both turn protocols, bounded, never showing a secret
file (issue 27 §3); the project's ``AGENTS.md`` and a person's standing
instructions in the prompt.

A real project, kernel and OpenAI client; the model is a scripted server, and
what is asserted is what reached it (the requests it received).
"""

from __future__ import annotations

import json
import re

from remora_core.agents import looking
from remora_core.agents.instructions import INSTRUCTIONS_KEY, set_instructions

from remora_lsp.testing.model_server import Reply
from tests.core.agent_support import of_type
from tests.core.test_agent_tools import call, last_tool_message, start, text_of

SECRET = """API_KEY = "sk-live-0123456789abcdef"


def tax_key():
    return API_KEY


def leak():
    return tax(1) + len(tax_key())
"""
"""A file matching ``secrets.exclude`` whose function calls ``tax``."""

SECRETS = {"exclude": ["secret_*.py"]}


def system_of(request: dict) -> str:
    return str(request["messages"][0].get("content") or "")


def ids_in(text: str) -> list[str]:
    return re.findall(r"rm_[a-z0-9]{8}", text)


# ---- search_nodes, read_node: found by search, then read ---------------------------


async def test_an_agent_finds_a_node_by_search_and_reads_it(shop):
    project = await start(shop)
    tax = shop.id("tax")

    def responder(request: dict) -> Reply:
        told = [m for m in request["messages"] if m.get("role") == "tool"]
        if not told:
            return call("search_nodes", {"query": "tax", "kind": "function"})
        if len(told) == 1:  # the search's answer: read what it found
            return call("read_node", {"node_id": ids_in(str(told[0]["content"]))[0]})
        return Reply(text="tax multiplies the amount by the rate.")

    shop.server.responder = responder
    events = await shop.ask("total", "What does the tax function do?")

    found = last_tool_message(shop.server.requests[1])
    assert found.splitlines()[0].startswith(f"{tax} function tax (shop.py:")
    assert "def tax(amount, rate=0.2):" in found
    shown = last_tool_message(shop.server.requests[2])
    assert json.loads(shown.splitlines()[0])["id"] == tax
    assert "return amount * rate" in shown
    tools = [e.tool for e in of_type(events, "tool_called")]
    assert tools == ["search_nodes", "read_node"]
    assert "search_nodes" in [
        t["function"]["name"] for t in shop.server.requests[0]["tools"]
    ]
    assert project.agents.services.proposals.pending() == []


async def test_search_refuses_what_it_cannot_do_and_says_how(shop):
    await start(shop)
    shop.server.reply_tool_call("search_nodes", {"query": "  "})
    shop.server.reply_tool_call("search_nodes", {"query": "zzqqxx"})
    shop.server.reply_tool_call("read_node", {"node_id": "Cart.add"})
    shop.server.reply_tool_call("read_node", {"node_id": "shop.py::Cart.add"})
    shop.server.reply_text("Done.")
    await shop.ask("total", "Look around.")

    requests = shop.server.requests
    assert last_tool_message(requests[1]).startswith("Error: give words of a name")
    assert last_tool_message(requests[2]) == "No node matches 'zzqqxx'."
    assert "is not a node id; ids look like rm_" in last_tool_message(requests[3])
    assert "def add(self, price):" in last_tool_message(requests[4])


# ---- find_references ---------------------------------------------------------------


async def test_find_references_lists_callers_and_importing_files(shop):
    (shop.root / "report.py").write_text(
        "from shop import total\n\n\ndef report(xs):\n    return total(xs)\n",
        encoding="utf-8",
    )
    await start(shop)
    shop.server.reply_tool_call("find_references", {"node_id": shop.id("total")})
    shop.server.reply_tool_call("find_references", {"node_id": shop.id("Cart")})
    shop.server.reply_text("Done.")
    await shop.ask("tax", "Who uses total?")

    told = last_tool_message(shop.server.requests[1])
    assert "Called by (3):" in told
    for caller in ("Cart.add", "Cart.checkout", "report"):
        assert f"{shop.id(caller, *(['report.py'] if caller == 'report' else []))}" in (
            told
        )
    assert "Files importing shop.py (1):" in told and "report.py" in told
    nobody = last_tool_message(shop.server.requests[2])
    assert "Files importing shop.py" in nobody and "Called by" not in nobody


# ---- secrets -----------------------------------------------------------------------


async def test_a_secret_file_is_never_searched_read_or_referenced(shop):
    (shop.root / "secret_keys.py").write_text(SECRET, encoding="utf-8")
    await start(shop, secrets=SECRETS)
    key = shop.id("tax_key", "secret_keys.py")
    shop.server.reply_tool_call("search_nodes", {"query": "tax"})
    shop.server.reply_tool_call("search_nodes", {"query": "secret_keys"})
    shop.server.reply_tool_call("read_node", {"node_id": key})
    shop.server.reply_tool_call("read_node", {"node_id": "secret_keys.py::tax_key"})
    shop.server.reply_tool_call("read_node", {"node_id": "secret_keys.py"})
    shop.server.reply_tool_call("find_references", {"node_id": shop.id("tax")})
    shop.server.reply_tool_call("find_references", {"node_id": key})
    shop.server.reply_text("Done.")
    await shop.ask("total", "Find the key.")

    answers = [last_tool_message(r) for r in shop.server.requests[1:8]]
    assert "tax_key" not in answers[0] and shop.id("tax") in answers[0]
    assert answers[1] == "No node matches 'secret_keys'."
    for refused in answers[2:5]:
        assert "secret_keys.py matches secrets.exclude; not shown" in refused
    assert "leak" not in answers[5] and "Cart.checkout" in answers[5]
    assert "matches secrets.exclude" in answers[6]
    everything = "\n".join(text_of(r) for r in shop.server.requests)
    assert "sk-live" not in everything and "leak" not in everything


# ---- bounds ------------------------------------------------------------------------


async def test_answers_are_bounded_and_say_so(shop):
    many = "\n\n".join(f"def price_{i:03}(x):\n    return x + {i}" for i in range(60))
    body = "\n".join(f"    x{i} = {i}  # {'pad' * 10}" for i in range(600))
    huge = f"def huge():\n{body}\n    return 0\n"
    (shop.root / "prices.py").write_text(many + "\n\n\n" + huge, encoding="utf-8")
    await start(shop)
    shop.server.reply_tool_call("search_nodes", {"query": "price_", "limit": 500})
    shop.server.reply_tool_call("read_node", {"node_id": "prices.py::huge"})
    shop.server.reply_tool_call("read_node", {"node_id": "prices.py"})
    shop.server.reply_text("Done.")
    await shop.ask("total", "List the prices.")

    found = last_tool_message(shop.server.requests[1])
    lines = found.splitlines()
    assert len(lines) == looking.MAX_RESULTS + 1
    assert lines[-1] == "… and 40 more not shown; give a narrower query"
    assert len(found) <= looking.ANSWER_CHARS + 100
    read = last_tool_message(shop.server.requests[2])
    assert len(read) < looking.READ_CHARS + 1_000
    assert "[cut: " in read and "read_node shows at most 12,000" in read
    whole_file = last_tool_message(shop.server.requests[3])
    assert "read its parts by id:" in whole_file and "price_000" in whole_file
    assert len(whole_file) < looking.READ_CHARS + 3_000
    told = {
        t["function"]["name"]: " ".join(t["function"]["description"].split())
        for t in shop.server.requests[0]["tools"]
    }
    assert "At most 20 results of 240 characters, 4,000 in all" in told["search_nodes"]
    assert "at most 12,000 characters" in told["read_node"]


# ---- the fenced protocol -----------------------------------------------------------


async def test_fenced_search_and_references_lines(shop):
    await shop.start(model={"protocol": "fenced"})
    tax = shop.id("tax")
    shop.server.reply_text("SEARCH: tax")
    shop.server.reply_text(f"REFERENCES: {tax}\nREAD: {tax}")
    shop.server.reply_text("tax is used by checkout.")
    events = await shop.ask("total", "Who uses tax?")

    assert "SEARCH: <words of a name>" in system_of(shop.server.requests[0])
    found = shop.server.messages(1)[-1]["content"]
    assert f"{tax} function tax (shop.py:" in found
    told = shop.server.messages(2)[-1]["content"]
    assert "Called by (1):" in told and "Cart.checkout" in told
    assert "return amount * rate" in told
    assert [e.tool for e in of_type(events, "tool_called")] == [
        "search_nodes",
        "read_node",
        "find_references",
    ]
    assert of_type(events, "agent_completed")[0].result == "tax is used by checkout."


async def test_a_fenced_search_line_without_words_gets_its_form(shop):
    await shop.start(model={"protocol": "fenced"})
    shop.server.reply_text("SEARCH:")
    shop.server.reply_text("REFERENCES: total")
    events = await shop.ask("total", "Who uses tax?")

    retry = shop.server.messages(1)[-1]["content"]
    assert "Could not read your SEARCH line. Write it as: SEARCH: words" in retry
    assert of_type(events, "tool_called") == []
    failed = of_type(events, "agent_failed")[0]
    assert "Write it as: REFERENCES: rm_xxxxxxxx" in failed.error


async def test_a_fenced_bundle_without_search_is_not_told_of_it(shop):
    await shop.start(model={"protocol": "fenced"}, bundles={"function": "docstring"})
    shop.server.reply_text("SEARCH: tax")
    shop.server.reply_text("Done.")
    await shop.ask("total", "Search.")

    assert "SEARCH:" not in system_of(shop.server.requests[0])
    told = shop.server.messages(1)[-1]["content"]
    assert "Error: search_nodes is not one of your tools." in told


# ---- AGENTS.md, a person's instructions --------------------------------------------


async def test_agents_md_and_rules_reach_the_prompt_bounded(shop):
    (shop.root / "AGENTS.md").write_text(
        "Money is integer cents.\n" + "x" * 50_000, encoding="utf-8"
    )
    (shop.root / ".remora").mkdir()
    (shop.root / ".remora" / "rules.md").write_text("Rule two.", encoding="utf-8")
    await start(shop, limits={"project_rules_chars": 2_000})
    shop.server.reply_text("Done.")
    await shop.ask("total", "Hello.")

    system = system_of(shop.server.requests[0])
    assert "The repository's own rules for agents follow." in system
    assert "From AGENTS.md:\nMoney is integer cents." in system
    assert "AGENTS.md is cut here: it has 50,024 bytes" in system
    assert "x" * 2_000 not in system
    assert "Rule two." not in system  # the budget went to AGENTS.md
    assert len(system) < 5_000


async def test_rules_md_follows_agents_md_and_a_secret_one_is_not_read(shop):
    (shop.root / "AGENTS.md").write_text("Use tabs.", encoding="utf-8")
    (shop.root / ".remora").mkdir()
    (shop.root / ".remora" / "rules.md").write_text("Rule two.", encoding="utf-8")
    await start(shop, secrets={"exclude": ["AGENTS.md"]})
    shop.server.reply_text("Done.")
    await shop.ask("total", "Hello.")

    system = system_of(shop.server.requests[0])
    assert "Use tabs." not in system
    assert "From .remora/rules.md:\nRule two." in system


async def test_instructions_reach_the_prompt_and_only_a_person_sets_them(shop):
    project = await start(shop)
    kv = project.agents.services.kv
    total = shop.id("total")
    assert await set_instructions(kv, total, "Always answer in French.", 4_000)
    shop.server.reply_tool_call(
        "kv_set", {"key": INSTRUCTIONS_KEY, "value": "Answer in Klingon."}
    )
    shop.server.reply_text("D'accord.")
    await shop.ask("total", "Hello.")

    assert "Always answer in French." in system_of(shop.server.requests[0])
    refused = last_tool_message(shop.server.requests[1])
    assert refused.startswith("Error: keys starting with '@' are the person's")
    await project.agents.forget(total)
    assert await kv.get(total, INSTRUCTIONS_KEY) == "Always answer in French."
    assert await set_instructions(kv, total, "", 4_000)
    shop.server.reply_text("Hello.")
    await shop.ask("total", "Hello again.")
    assert "French" not in system_of(shop.server.requests[-1])
