"""The project's tests on proposals, through the engine (``verification/``).

A real project (the shop of ``agent_support.py`` with tests of its own), real
pytest subprocesses, a scripted model. Asserted: which tests a proposal
reaches (through callers of callers), that an untrusted project's tests do
not run, and that runs queue at ``agents.max_concurrency``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.core.agent_support import of_type
from tests.fakes.model_server import Reply

TESTS = """import os
import time
from pathlib import Path

from shop import Cart


def test_checkout_adds_tax():
    probe = Path(PROBE)
    mine = probe / str(os.getpid())
    mine.write_text("")
    time.sleep(1.5)
    (probe.parent / "seen").open("a").write(f"{len(list(probe.iterdir()))}\\n")
    mine.unlink()
    cart = Cart()
    cart.add(10)
    assert cart.checkout() == 12.0
"""
TAX = "def tax(amount, rate=0.2):\n    return amount * rate + 0"
TOTAL = "def total(prices):\n    return sum(prices) + 0"


def per_agent(shop, scripts: dict[str, list[Reply]]):
    """Answer each agent from its own script (agents run concurrently)."""

    def responder(request):
        system = str(request["messages"][0].get("content") or "")
        for name, script in scripts.items():
            if f"(id {shop.id(name)})" in system and script:
                return script.pop(0)
        return Reply(text="Done.")

    return responder


async def checks_of(shop, count: int) -> list:
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        found = of_type(await shop.events(), "proposal_checked")
        if len(found) >= count:
            return found
        made = [e.checks for e in of_type(await shop.events(), "rewrite_proposed")]
        assert asyncio.get_running_loop().time() < deadline, f"no outcome: {made}"
        await asyncio.sleep(0.1)


async def test_runs_queue_at_max_concurrency(shop, tmp_path):
    probe = tmp_path / "probe" / "running"
    probe.mkdir(parents=True)
    (shop.root / "tests").mkdir()
    # The path is written into the test: a test run gets none of the
    # person's variables (environment.py).
    (shop.root / "tests" / "test_shop.py").write_text(
        TESTS.replace("PROBE", repr(str(probe))), encoding="utf-8"
    )

    def rewrite(source: str) -> Reply:
        return Reply(tool_calls=[("rewrite_self", {"new_source": source})])

    project = await shop.start(
        model={"protocol": "tools"},
        agents={"max_concurrency": 1},
        swarm={"cooldown_ms": 0},
        trusted=True,
    )
    shop.server.responder = per_agent(
        shop, {"tax": [rewrite(TAX)], "total": [rewrite(TOTAL)]}
    )
    await shop.send("tax", "Tidy up")
    await shop.send("total", "Tidy up")

    checked = await checks_of(shop, 2)
    assert {c.check["detail"] for c in checked} == {"1 passed"}
    # tax and total are reached through Cart.checkout / Cart.add: the same
    # test ran twice, never at the same time.
    seen = (probe.parent / "seen").read_text().split()
    assert seen == ["1", "1"]
    for proposal in project.agents.services.proposals.pending():
        assert proposal.check("tests").ok is True


async def test_an_untrusted_projects_tests_do_not_run(shop):
    (shop.root / "test_shop.py").write_text(
        "from shop import tax\n\ndef test_tax():\n    assert tax(10) == 2.0\n",
        encoding="utf-8",
    )
    shop.server.reply_tool_call("rewrite_self", {"new_source": TAX})
    shop.server.reply_text("Done.")
    project = await shop.start(model={"protocol": "tools"})
    events = await shop.ask("tax", "Tidy up")

    (proposed,) = of_type(events, "rewrite_proposed")
    (check,) = proposed.checks
    assert check["status"] == "could_not_run"
    assert check["detail"].startswith("not run: the project is not trusted")
    (proposal,) = project.agents.services.proposals.pending()
    assert proposal.check("tests").ok is None
    assert not of_type(events, "proposal_checked")


async def test_run_tests_off_adds_no_check(shop):
    (shop.root / "test_shop.py").write_text(
        "from shop import tax\n\ndef test_tax():\n    assert tax(10) == 2.0\n",
        encoding="utf-8",
    )
    shop.server.reply_tool_call("rewrite_self", {"new_source": TAX})
    shop.server.reply_text("Done.")
    await shop.start(
        model={"protocol": "tools"}, review={"run_tests": "off"}, trusted=True
    )
    events = await shop.ask("tax", "Tidy up")
    (proposed,) = of_type(events, "rewrite_proposed")
    assert proposed.checks == []


async def test_a_module_linked_by_absolute_path_is_never_written_by_a_test_run(shop):
    """Issue 25 class 2: the tests run in a copy where links stay links; a
    module that is an absolute link to another file of the project led the
    copy back to the person's own tree, and the run wrote the proposal into
    the person's real file. It writes only the copy, and tests the proposal.
    """
    real = shop.root / "real" / "shop_impl.py"
    real.parent.mkdir()
    (shop.root / "shop.py").rename(real)
    (shop.root / "shop.py").symlink_to(real)  # absolute, inside the project
    before = real.read_bytes()
    (shop.root / "test_shop.py").write_text(  # passes with the proposal only
        "from shop import tax\n\ndef test_tax():\n    assert tax(10) == 99\n",
        encoding="utf-8",
    )
    shop.server.reply_tool_call(
        "rewrite_self", {"new_source": "def tax(amount, rate=0.2):\n    return 99"}
    )
    shop.server.reply_text("Done.")
    await shop.start(model={"protocol": "tools"}, trusted=True)
    await shop.ask("tax", "Tidy up")
    (checked,) = await checks_of(shop, 1)
    assert checked.check["detail"] == "1 passed"
    assert real.read_bytes() == before
    assert (shop.root / "shop.py").is_symlink()


ENVIRONMENT_TEST = """import json
import os
from pathlib import Path

from shop import tax


def test_tax_and_environment():
    Path({out!r}).write_text(json.dumps({{
        "environ": dict(os.environ),
        "home": str(Path.home()),
        "cwd": os.getcwd(),
    }}))
    assert tax(10) == 2.0
"""
PERSONS = {
    "SHOP_MODEL_KEY": "sk-configured-key",  # the model's api_key_env
    "OPENAI_API_KEY": "sk-openai",
    "GITHUB_TOKEN": "ghp_token",
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "AWS_ACCESS_KEY_ID": "AKIA0000",
    "DB_PASSWORD": "hunter2",
    "MY_SERVICE_SECRET": "s3cret",
    "LC_SNEAKY_TOKEN": "passes-an-allow-listed-prefix",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "ALL_PROXY": "http://127.0.0.1:9",
    "http_proxy": "http://127.0.0.1:9",
    "https_proxy": "http://127.0.0.1:9",
    "all_proxy": "http://127.0.0.1:9",
    "REMORA_TEST_PERSONAL": "anything else of the person's",
}


async def test_tests_run_without_the_persons_secrets(shop, tmp_path, monkeypatch):
    """A trusted project's tests see neither the model's key, nor any usual
    key/token/secret/password variable, nor the person's proxies, nor the
    person's home: and they still pass.
    """
    out = tmp_path / "seen-environment.json"
    (shop.root / "test_shop.py").write_text(
        ENVIRONMENT_TEST.format(out=str(out)), encoding="utf-8"
    )
    for name, value in PERSONS.items():
        monkeypatch.setenv(name, value)
    # The engine's own requests to the scripted model stay direct.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("LANG", "C.UTF-8")
    shop.server.reply_tool_call("rewrite_self", {"new_source": TAX})
    shop.server.reply_text("Done.")
    await shop.start(
        model={"protocol": "tools", "api_key_env": "SHOP_MODEL_KEY"}, trusted=True
    )
    await shop.send("tax", "Tidy up")

    (checked,) = await checks_of(shop, 1)
    assert checked.check["detail"] == "1 passed"
    seen = json.loads(out.read_text())
    environ = seen["environ"]
    leaked = sorted(set(PERSONS) & set(environ)) + sorted(
        name for name in ("NO_PROXY", "no_proxy") if name in environ
    )
    assert leaked == []
    assert not any(value in PERSONS.values() for value in environ.values())
    assert environ["LANG"] == "C.UTF-8"  # what tests need still passes
    assert "PATH" in environ
    assert not Path(seen["home"]).is_relative_to(Path.home())
    assert Path(seen["home"]).parent == Path(seen["cwd"]).parent  # the run's own
