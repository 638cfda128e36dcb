"""Bundles, sandboxed ``.pym`` tools, extensions and memory, seen through real
agent turns against the scripted model server.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.core.agent_support import of_type

PYM = Path(__file__).parent / "pym"

EXTENSION = '''
from remora_core.agents.extensions import ExtensionNode, tool


class Totals(ExtensionNode):
    match_type = "function"
    match_pattern = "total"
    system_prompt = "PROMPT-ONE: prices are in cents."

    def get_workspaces(self):
        return ["data/prices.csv"]

    @tool
    async def list_prices(self, prefix: str) -> list[str]:
        """List the known prices whose name starts with prefix."""
        names = ("apple", "apricot", "bread")
        return [name for name in names if name.startswith(prefix)]
'''


def tool_names(request) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools", [])}


def write_bundle(root: Path, name: str, yaml: str, scripts: tuple[str, ...] = ()):
    directory = root / ".remora" / "bundles" / name
    (directory / "tools").mkdir(parents=True)
    (directory / "bundle.yaml").write_text(yaml, encoding="utf-8")
    for script in scripts:
        shutil.copy(PYM / script, directory / "tools" / script)


async def test_a_bundle_narrows_tools_and_runs_its_pym_script(shop):
    write_bundle(
        shop.root,
        "counter",
        "name: counter\nsystem_prompt: Count things.\ntools: [read_node, read_file]\n",
        scripts=("read_file.pym",),
    )
    (shop.root / "notes.txt").write_text("first line\nsecond\n", encoding="utf-8")
    await shop.start(
        trusted=True, bundles={"function": "counter"}, model={"protocol": "tools"}
    )
    shop.server.reply_tool_call("read_file", {"path": "notes.txt"})
    shop.server.reply_tool_call("read_file", {"path": "../../etc/passwd"})
    shop.server.reply_text("Read it.")
    events = await shop.ask("total", "What do the notes say?")

    first = shop.server.requests[0]
    assert tool_names(first) == {"read_node", "read_file"}
    assert "Count things." in first["messages"][0]["content"]
    results = of_type(events, "tool_result")
    assert results[0].ok and "first line" in results[0].summary
    assert not results[1].ok
    assert "outside the project" in results[1].summary
    assert "outside the project" in shop.server.text_of(2)
    assert of_type(events, "agent_completed")[0].result == "Read it."


async def test_a_bundle_overrides_the_model_and_protocol(shop):
    write_bundle(
        shop.root,
        "small",
        "name: small\nmodel: {name: tiny-model, protocol: fenced, "
        "extra_body: {top_k: 5}}\ngrammar: 'root ::= .*'\n",
    )
    await shop.start(
        trusted=True, bundles={"function": "small"}, model={"extra_body": {"seed": 1}}
    )
    await shop.ask("total", "Hello?")

    request = shop.server.requests[0]
    assert request["model"] == "tiny-model"
    assert "tools" not in request
    assert request["top_k"] == 5 and request["seed"] == 1
    assert request["grammar"] == "root ::= .*"


async def test_an_extension_adds_prompt_workspace_and_tool_and_reloads(shop):
    models = shop.root / ".remora" / "models"
    models.mkdir(parents=True)
    extension = models / "totals.py"
    extension.write_text(EXTENSION, encoding="utf-8")
    await shop.start(trusted=True, model={"protocol": "tools"})
    shop.server.reply_tool_call("list_prices", {"prefix": "ap"})
    shop.server.reply_text("Two.")
    events = await shop.ask("total", "Which prices start with ap?")

    system = shop.server.requests[0]["messages"][0]["content"]
    assert "PROMPT-ONE: prices are in cents." in system
    assert "data/prices.csv" in system
    assert "list_prices" in tool_names(shop.server.requests[0])
    result = of_type(events, "tool_result")[0]
    assert result.ok and "apricot" in result.summary
    # Only the matching node gets it.
    await shop.ask("tax", "Hi")
    assert "PROMPT-ONE" not in shop.server.requests[-1]["messages"][0]["content"]

    extension.write_text(EXTENSION.replace("PROMPT-ONE", "PROMPT-TWO"), "utf-8")
    stat = extension.stat()
    os.utime(extension, (stat.st_atime, stat.st_mtime + 5))
    await shop.ask("total", "Again?")
    assert "PROMPT-TWO" in shop.server.requests[-1]["messages"][0]["content"]


async def test_a_broken_extension_is_reported_and_skipped(shop):
    models = shop.root / ".remora" / "models"
    models.mkdir(parents=True)
    (models / "broken.py").write_text("class Oops(:\n", encoding="utf-8")
    (models / "totals.py").write_text(EXTENSION, encoding="utf-8")
    await shop.start(trusted=True)
    events = await shop.ask("total", "Hi")

    assert of_type(events, "agent_completed")
    assert "PROMPT-ONE" in shop.server.requests[0]["messages"][0]["content"]
    assert any("broken.py" in message for message in shop.told)


async def test_memory_is_kept_between_turns_and_can_be_cleared(shop):
    project = await shop.start(trusted=True, model={"protocol": "tools"})
    shop.server.reply_tool_call("kv_set", {"key": "mood", "value": {"ok": True}})
    shop.server.reply_text("Remembered.")
    await shop.ask("total", "Remember that I am happy.")
    await shop.ask("total", "What did I say?")
    assert "Remember that I am happy." in shop.server.text_of(-1)
    agent = shop.id("total")
    assert await project.agents.services.kv.get(agent, "mood") == {"ok": True}

    await project.agents.forget(agent)
    assert await project.agents.services.kv.get(agent, "mood") is None
    await shop.ask("total", "Fresh start?")
    assert "Remember that I am happy." not in shop.server.text_of(-1)
