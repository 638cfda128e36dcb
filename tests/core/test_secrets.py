"""``secrets.exclude`` and the project root hold everywhere (issue 11 part 2).

A file in ``secrets.exclude``: its nodes' agents do not run (a message to one is
refused with an event naming the rule), a subscription to it never shows its
text, and the rest of the project sees its nodes by name only. A ``.py`` that is
a symbolic link out of the project or to a secret file is not indexed.
"""

from __future__ import annotations

import json
import logging

from remora_core.events.models import HumanChat

from remora_lsp.testing.model_server import Reply
from tests.core.agent_support import AgentHarness, of_type
from tests.core.swarm_support import quiet
from tests.core.test_agent_tools import PerAgent, call, requests_of, start

KEY = "sk-live-0123456789abcdef"
SECRET_FILE = f'def api_key():\n    return "{KEY}"\n'


def add_secret(harness: AgentHarness) -> None:
    (harness.root / "secret_keys.py").write_text(SECRET_FILE, encoding="utf-8")


def never_sent(harness: AgentHarness, text: str) -> None:
    for request in harness.server.requests:
        assert text not in json.dumps(request)


async def test_an_agent_of_a_secret_file_does_not_run_and_the_refusal_says_why(shop):
    add_secret(shop)
    project = await start(shop, secrets={"exclude": ["secret_*.py"]})
    secret = shop.id("api_key", path="secret_keys.py")
    await project.swarm.emit(HumanChat(to_agent=secret, message="Your key?"))
    await quiet(project.swarm)
    events = await shop.events()

    (refused,) = of_type(events, "trigger_refused")
    assert refused.rule == "secret"
    assert refused.reason.startswith(
        "secret_keys.py matches secrets.exclude ('secret_*.py')"
    )
    assert not of_type(events, "agent_started")
    assert shop.server.requests == []


async def test_a_subscription_to_a_secret_file_never_shows_its_text(shop):
    add_secret(shop)
    script = PerAgent(shop)
    shop.server.responder = script
    project = await start(shop, secrets={"exclude": ["secret_*.py"]})
    tax, secret = shop.id("tax"), shop.id("api_key", path="secret_keys.py")
    script.add(
        tax,
        call("subscribe", {"event_types": ["content_changed"], "nodes": [secret]}),
        Reply(text="Watching it."),
    )
    await shop.ask("tax", "Watch api_key.")

    changed = f'def api_key():\n    return "{KEY}-rotated"\n'
    (shop.root / "secret_keys.py").write_text(changed, encoding="utf-8")
    await project.disk.files_changed(changed=["secret_keys.py"])
    await project.swarm.runner.idle()

    told = requests_of(shop, tax)[-1]["messages"][-1]["content"]
    assert "Code you watch was modified" in told
    assert "`api_key`" in told or "api_key" in told  # by name
    assert "not shown: secret_keys.py matches secrets.exclude" in told
    never_sent(shop, KEY)


async def test_symbolic_links_out_of_the_project_or_to_secrets_are_not_indexed(
    shop, tmp_path, caplog
):
    outside = tmp_path / "elsewhere.py"
    outside.write_text("def stolen():\n    return 1\n", encoding="utf-8")
    add_secret(shop)
    (shop.root / "linked_out.py").symlink_to(outside)
    (shop.root / "linked_secret.py").symlink_to(shop.root / "secret_keys.py")
    (shop.root / "linked_fine.py").symlink_to(shop.root / "shop.py")
    with caplog.at_level(logging.WARNING, logger="remora_core.discovery.files"):
        project = await start(shop, secrets={"exclude": ["secret_*.py"]})

    def indexed(path: str) -> bool:
        return project.graph.file_node(path) is not None

    assert not indexed("linked_out.py")
    assert not indexed("linked_secret.py")
    assert indexed("linked_fine.py")  # a link inside the project is a file
    lines = [r.getMessage() for r in caplog.records]
    assert [m for m in lines if m.startswith("not indexing linked_out.py")] == [
        f"not indexing linked_out.py: a symbolic link to {outside}, outside the project"
    ]
    assert any(
        m.startswith(
            "not indexing linked_secret.py: a symbolic link to "
            "secret_keys.py, which matches secrets.exclude"
        )
        for m in lines
    )

    # A link created while the server runs is refused the same way.
    (shop.root / "late_link.py").symlink_to(outside)
    await project.disk.files_changed(created=["late_link.py"])
    assert not indexed("late_link.py")
