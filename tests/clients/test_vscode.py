"""Client tier: the VS Code extension (``clients/vscode``) in a real VS Code 1.100.

``scripts/install_vscode_e2e.sh`` installs Debian's Chromium, the extension's npm
packages and code-server 4.100.3 + playwright-core (idempotent, quick when
installed). ``clients/vscode/test/e2e/run.mjs`` starts code-server offline on
127.0.0.1 and opens the workbench in headless Chromium with the extension under
development and ``test/e2e/suite.js`` as its tests: the suite runs inside the
real extension host, acts through the real ``vscode`` API and the extension's
commands against this venv's real ``remora-lsp`` and the scripted model server,
and writes what it saw. The assertions are here. The run also takes
screenshots (Remora view, a proposal diagnostic, the diff editor; the
Proposals view with a change set: ``sets.png`` in the state directory); with
``REMORA_VSCODE_SCREENSHOT=clients/vscode/docs/screenshot.png`` it refreshes the
committed one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from remora_lsp.testing.model_server import ModelServer, Reply
from tests.clients import vscode_batch, vscode_sets

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "clients" / "vscode"
SERVER = Path(sys.executable).with_name("remora-lsp")
SCREENSHOT = Path(os.environ.get("REMORA_VSCODE_SCREENSHOT", "") or "")
"""Where the run's screenshot goes: set REMORA_VSCODE_SCREENSHOT to
clients/vscode/docs/screenshot.png to refresh the committed one; by default it
stays in the test's temporary directory."""
RUN_TIMEOUT_S = 420

SHORT_HELPER = """def helper(self):
        return order("b", 2)  # two b's"""
KEYWORD_HELPER = '''def helper(self):
        """Order two b's."""
        return order("b", quantity=2)'''
NEW_HELPER = '''def helper(self):
        """Order two b's."""
        return order("b", 2)'''

PLAIN_QUESTION = "What does helper do?"
PLAIN_ANSWER = (
    "It orders two b's. <b>not bold</b> <script>document.title='pwned'</script>"
)
"""A plain answer (no code change) whose HTML must show as text."""


@pytest.fixture(scope="module")
def installed() -> None:
    """Install what the e2e needs; skip (with the reason) only if that is impossible."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(
            "the VS Code e2e needs node and npm (Node 20), which are not installed"
        )
    process = subprocess.run(
        ["bash", str(REPO / "scripts" / "install_vscode_e2e.sh")],
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    if process.returncode != 0:
        pytest.skip(
            "could not install the VS Code e2e prerequisites "
            f"(scripts/install_vscode_e2e.sh exit {process.returncode}): "
            f"{(process.stdout + process.stderr)[-1500:]}"
        )
    subprocess.run(
        ["npm", "run", "package"],
        cwd=EXT,
        check=True,
        timeout=300,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )


def respond(request: dict) -> Reply:
    """The scripted model, by what the request says: subscriber runs that the
    swarm starts on its own (content_changed) must not eat a scripted answer.
    """
    messages = request.get("messages") or []
    if (batch := vscode_batch.reply(request)) is not None:
        return batch
    if (sets := vscode_sets.reply(request)) is not None:
        return sets
    if messages and messages[-1].get("role") == "tool":
        return Reply(text=f"Done: {str(messages[-1].get('content') or '')[:200]}")
    users = [m for m in messages if m.get("role") == "user"]
    last = json.dumps(users[-1]) if users else ""
    if "Grace Hopper" in last:  # a kept question answered after a restart
        return Reply(text="Done: the name is Grace Hopper.")
    if "Ask me for a name" in last:
        return Reply(
            tool_calls=[("ask_user", {"question": "Which name should I use?"})]
        )
    if "Use a keyword argument" in last:
        return Reply(tool_calls=[("rewrite_self", {"new_source": KEYWORD_HELPER})])
    if PLAIN_QUESTION in last:
        return Reply(text=PLAIN_ANSWER)
    if "Take your time" in last:
        return Reply(text="Late.", delay_s=60)
    if "Add a docstring" in last:
        return Reply(tool_calls=[("rewrite_self", {"new_source": NEW_HELPER})])
    if "Shorten it" in last:
        return Reply(tool_calls=[("rewrite_self", {"new_source": SHORT_HELPER})])
    return Reply(text="Nothing to change.")


def model_settings(model: ModelServer) -> dict:
    return {
        "swarm": {"cooldown_ms": 0},
        "discovery": {"debounce_ms": 50},
        "model": {
            "base_url": model.url,
            "name": "scripted",
            "protocol": "tools",
            "retry_backoff_s": 0.01,
        },
    }


def run_vscode(workspace: Path, model: ModelServer, state: Path) -> dict:
    (workspace / "remora.yaml").write_text(
        "swarm: {cooldown_ms: 0}\n", encoding="utf-8"
    )
    user = state / "user" / "User"
    user.mkdir(parents=True)
    (user / "settings.json").write_text(
        json.dumps(
            {
                "remora.server.path": str(SERVER),
                "remora.initializationOptions": model_settings(model),
                "workbench.startupEditor": "none",
                "security.workspace.trust.enabled": False,
                "extensions.autoCheckUpdates": False,
                "telemetry.telemetryLevel": "off",
            }
        ),
        encoding="utf-8",
    )
    out = state / "observed.json"
    screenshot = (
        SCREENSHOT.resolve()
        if str(SCREENSHOT) not in ("", ".")
        else state / "screenshot.png"
    )
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    # The extension under test is the packaged .vsix, unpacked as VS Code does.
    with zipfile.ZipFile(EXT / "remora.vsix") as vsix:
        vsix.extractall(state / "vsix")
    process = subprocess.run(
        [
            "node",
            str(EXT / "test" / "e2e" / "run.mjs"),
            str(workspace),
            str(out),
            str(screenshot),
            str(state),
        ],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "REMORA_E2E_EXTENSION": str(state / "vsix" / "extension")},
    )
    log = (
        f"exit {process.returncode}\n{process.stdout[-4000:]}\n{process.stderr[-4000:]}"
    )
    assert out.exists(), f"the suite wrote nothing\n{log}"
    observed = json.loads(out.read_text(encoding="utf-8"))
    assert observed.get("ok"), (
        f"{observed.get('error')}\nsteps: {observed.get('steps')}\n{log}"
    )
    observed["screenshotPath"] = str(screenshot)
    return observed


def test_the_extension_in_a_real_vscode(installed, workspace, tmp_path, monkeypatch):
    # A key in the environment under the name the repository's settings give.
    monkeypatch.setenv(vscode_batch.HOSTILE_KEY_VARIABLE, vscode_batch.HOSTILE_KEY)
    with (
        ModelServer(responder=respond) as model,
        ModelServer(responder=respond) as hostile,
    ):
        vscode_batch.prepare(workspace, hostile.url)
        seen = run_vscode(workspace, model, tmp_path / "state")

    # Activation and server start.
    assert seen["serverRunning"] is True
    # The outline: the server's nodes with their ids.
    names = [s["name"] for s in seen["outline"]]
    assert {"Service", "helper", "run", "order"} <= set(names)
    assert all(s["detail"].startswith("rm_") for s in seen["outline"])
    # Lenses show each agent's status and click through to the node card.
    lenses = seen["lenses"]
    assert any(lens["title"] and "idle" in lens["title"] for lens in lenses)
    assert {lens["command"] for lens in lenses if lens["command"]} == {
        "remora.showNode"
    }
    # The Remora view lists the file's nodes.
    assert {"Service", "helper", "order"} <= set(seen["tree"])
    # ask → a proposal diagnostic on helper's definition line.
    assert "run_id" in seen["askResult"]
    assert any("Add a docstring" in json.dumps(r) for r in model.requests)
    assert seen["diagnostic"]["code"].startswith("pr_") or seen["diagnostic"]["code"]
    # showDiff: a diff tab of two remora-proposal: documents (right: the proposal).
    assert seen["diffTab"]["original"].startswith("remora-proposal:")
    assert seen["diffTab"]["modified"].startswith("remora-proposal:")
    assert '"""Order two b\'s."""' in seen["diffRight"]
    assert Path(seen["screenshotPath"]).stat().st_size > 10_000
    # Accept (resolved code action) lands in the document; the server says so.
    assert any(a.startswith("Accept") for a in seen["actions"])
    assert seen["acceptHasEdit"] is True
    assert '"""Order two b\'s."""' in seen["documentAfterAccept"]
    assert seen["rewriteApplied"]["type"] == "rewrite_applied"
    # Reject with feedback: the next request to the model carries the feedback.
    assert "run_id" in seen["rejectResult"]
    assert any("Keep the docstring please" in json.dumps(r) for r in model.requests)
    # cancelRun ends the slow run.
    assert seen["cancelResult"] == {"cancelled": True}
    assert seen["cancelEvent"]["type"] == "agent_cancelled"
    # Clicking a lens shows that node's card, on top of its conversation.
    assert seen["lensCard"]["name"] == "helper"
    assert "Service.helper" in seen["cardShown"]
    assert "agent idle" in seen["cardShown"] or "agent " in seen["cardShown"]
    print(
        f"\nVS Code e2e: activation {seen['activatedInMs']} ms, remora.ask to the "
        f"diagnostic {seen['askToDiagnosticMs']} ms (scripted model)"
    )
    # The agent's question, answered by typing into the input box.
    assert seen["question"]["type"] == "agent_blocked"
    assert "error" not in seen["typed"], seen["typed"]
    assert "Which name should I use?" in seen["typed"]["prompt"]
    assert "Ada Lovelace" in seen["answeredRun"]["result"]
    assert any("Ada Lovelace" in json.dumps(r) for r in model.requests)
    check_conversation_and_runs(seen["talk"])
    # The run after Set Node Instructions carried them in its system prompt.
    later = [r for r in model.requests if "Ask me for a name again" in json.dumps(r)]
    assert later, "the question after the instructions never reached the model"
    assert "Call the person by name." in later[0]["messages"][0]["content"]
    # Batch: the Proposals view, accept-all, blame, checkpoints, hostile settings.
    vscode_batch.check(seen, model, hostile)
    # New files and change sets: created, accepted all or nothing, stale.
    vscode_sets.check(seen, model.requests)
    # A missing server: one error notification with its button, no server running.
    toasts = [t for t in seen["missing"]["notifications"] if "remora-lsp" in t]
    assert len(toasts) == 1, seen["missing"]["notifications"]
    assert "/nonexistent/remora-lsp" in toasts[0] and "Open Setting" in toasts[0]
    assert seen["serverRunningAfterMissing"] is False


def check_conversation_and_runs(talk: dict) -> None:
    """What test/e2e/talk.js saw: the conversation on screen, after a restart,
    and a run cancelled from the Runs view.
    """
    # A proposal in the conversation with its checks and buttons; the Diff
    # button clicked in the webview opened the diff editor.
    assert talk["proposalId"] in talk["proposalShown"]
    assert "tests" in talk["proposalShown"]
    for button in ("Accept", "Reject…", "Diff"):
        assert button in talk["proposalShown"]
    assert "error" not in talk["clickedDiff"], talk["clickedDiff"]
    assert talk["diffOpened"]
    # The plain answer is on screen in the Conversation webview (its DOM, read
    # by Playwright), HTML shown as text: no <b> or <script> element made of it.
    assert talk["answerEvent"]["result"] == PLAIN_ANSWER
    screen = talk["onScreen"]
    assert "error" not in screen, screen
    assert screen["visible"] is True
    assert PLAIN_ANSWER in screen["text"]
    assert "<b>not bold</b>" in screen["text"]
    assert "b" not in screen["tags"] and "script" not in screen["tags"]
    # "Show Node Events": the node's latest events in the Remora Events output,
    # the plain answer's run among them.
    shown = talk["nodeEvents"]["lines"]
    assert shown[0].startswith("── the latest ") and "Service.helper" in shown[0]
    assert any(talk["asked"]["run_id"] in line for line in shown[1:])
    # The whole conversation: the question, earlier proposals and decisions,
    # the agent's question and the person's answer, the cancelled run.
    for said in (
        PLAIN_QUESTION,
        "Add a docstring",
        "You accepted the proposal",
        "Keep the docstring please",
        "Which name should I use?",
        "Ada Lovelace",
        "run cancelled",
    ):
        assert said in screen["text"], said
    assert PLAIN_ANSWER in talk["shownByWebview"]
    # The status bar counts today's tokens as the server stored them (the
    # scripted model reports 10 + 5 per answer); the Runs view's item of the
    # plain answer says its tokens; Show Usage lists the totals.
    assert talk["statusText"].endswith(" tokens today") and talk["tokens"] > 0
    assert re.search(r" · [1-9]\d* tokens$", talk["answeredItem"]), talk["answeredItem"]
    usage = talk["usage"]["lines"]
    assert usage[0] == "── what agents used ──"
    assert re.match(r"  in all — \d+ runs, \d+ tokens \(", usage[1]), usage
    # Why it wakes: the node's subscriptions in the Remora Events output,
    # saying it is muted (only the person's messages wake it), then unmuted.
    assert talk["muted"]["muted"] is True and talk["unmuted"]["muted"] is False
    # Show Trust: VS Code's own workspace trust decided, said in the output.
    state = "trusted" if talk["workspaceTrusted"] else "not trusted"
    (trust,) = [line for line in talk["trust"]["lines"] if "Remora trust:" in line]
    assert trust.startswith("Remora trust: file://")
    assert trust.endswith(f": {state} (VS Code's workspace trust)"), trust
    assert talk["trust"]["forgotten"][0] == trust
    wakes = talk["wakes"]["lines"]
    assert wakes[0].startswith("── what wakes Service.helper")
    assert wakes[0].endswith(": muted, only your messages ──")
    assert any("[default]" in line for line in wakes[1:]), wakes
    # Standing instructions: the input box starts with the current ones; the
    # card shows the new ones (on screen), and the next run's prompt has them.
    assert talk["instructionsSet"]["instructions"] == "Answer in one sentence."
    assert talk["instructionsTyped"]["value"] == "Answer in one sentence."
    assert talk["instructionsAnswer"] == {
        "node_id": talk["instructionsAnswer"]["node_id"],
        "instructions": "Call the person by name.",
        "changed": True,
    }
    # What the Conversation webview rendered (its text, sent back by the page).
    assert "instructions: Call the person by name." in " ".join(
        talk["instructionsShown"].split()
    )
    # After a server restart the conversation is read back from the server.
    assert PLAIN_ANSWER in talk["afterRestart"]
    assert PLAIN_ANSWER in talk["onScreenAfterRestart"]["text"]
    # A run listed in the Runs view, then cancelled from its item.
    assert talk["listed"]["contextValue"] == "run-running"
    assert "Running" in talk["listed"]["groups"]
    assert "Take your time, really" in talk["listed"]["description"]
    assert talk["cancelled"] == {"cancelled": True}
    assert talk["cancelEvent"]["type"] == "agent_cancelled"
    assert talk["ended"]["contextValue"] == "run-ended"
    assert "cancelled" in talk["ended"]["description"]
    assert "Recent" in talk["ended"]["groups"]
    # A dismissed question waits; the Runs view lists it and asks it again.
    assert "error" not in talk["dismissed"], talk["dismissed"]
    assert talk["waiting"]["contextValue"] == "run-waiting"
    assert talk["waiting"]["command"] == "remora.runs.answer"
    assert "Waiting for you" in talk["waiting"]["groups"]
    assert "Which name should I use?" in talk["waitingShown"]
    # After a server restart the question is still waiting, answered from the
    # Runs view, and the answer resumes the agent (a new turn).
    assert talk["waitingAfterRestart"]["contextValue"] == "run-waiting"
    assert "error" not in talk["typedAgain"], talk["typedAgain"]
    assert "Which name should I use?" in talk["typedAgain"]["prompt"]
    assert talk["respondResult"] == {"ok": True}
    assert "Grace Hopper" in talk["answeredAgain"]["result"]


def test_unit_tests_lint_and_package(installed):
    """The pure modules' node tests, ESLint, strict TypeScript, and the .vsix build."""
    for script in ("test:unit", "lint", "package"):
        process = subprocess.run(
            ["npm", "run", script], cwd=EXT, capture_output=True, text=True, timeout=300
        )
        assert process.returncode == 0, (
            f"npm run {script}:\n{process.stdout[-3000:]}\n{process.stderr[-3000:]}"
        )
        if script == "test:unit":
            assert "# fail 0" in process.stdout and "# pass 0" not in process.stdout
    listing = subprocess.run(
        ["python3", "-m", "zipfile", "-l", str(EXT / "remora.vsix")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "extension/dist/extension.js" in listing
    assert "extension/package.json" in listing
    assert "node_modules" not in listing
