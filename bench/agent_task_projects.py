"""Set ``c`` through the real server: one project per task, judged on its files.

For each task of ``bench/agent_task_set_c.py`` this writes the task's project,
starts the real ``remora-lsp`` on it over stdio (``bench/lspclient.py``) with
an editor's capabilities (it takes ``workspace/applyEdit``, creates files:
``bench/bench_editor.py``), finds the asked node with ``remora.node.at``, asks
it through ``remora.agent.chat`` and waits for the run's end event and for the
runs it set off (a cascade) to end. Then, as a person would, it accepts what
was proposed — a change set, a new file, a rewrite, or several proposals
together — with ``remora.proposal.accept`` / ``remora.proposals.accept``; the
client applies the ``WorkspaceEdit`` it receives (``TextDocumentEdit`` and
``CreateFile``), saves every changed buffer, and the task's judge runs what is
now on disk.

Two models:

- ``embedded`` — **zero configuration** (no ``remora.yaml``, empty user config
  and state folders): the server picks the embedded model and its protocol
  itself. Each project's server loads the model once; the ask waits until the
  model's log says it is serving and has read the shared prompt
  (``model.preload``), as a person types a request a few seconds after
  opening a project, so every ask is measured like the others.
- ``scripted`` — the scripted OpenAI-compatible server of
  ``remora_lsp/testing/model_server.py`` on 127.0.0.1 answers each task with
  its right answer as tool calls (``create_file`` for a lone new file,
  ``propose_changes`` otherwise), then "Done.". What fails here is plumbing,
  never the model.

``selfcheck`` checks the judges without a server: each fails on the project as
written and passes once the right answer is applied by hand.
"""

from __future__ import annotations

import ast
import asyncio
import re
import time
from pathlib import Path
from typing import Any

from agent_task_set_c import Change, ProjectTask
from bench_editor import Editor, editor_capabilities
from lspclient import LspClient, path_uri

SETTLE_S = 120.0
"""How long the runs a request set off (a cascade) may go on after its own."""
MODEL_READY_S = 240.0
"""How long the embedded model may take to load on a busy machine."""
SELF = "<self>"
"""Stands for the asked node's id in a right answer (known once indexed)."""


# ---- projects and right answers ------------------------------------------------------


def write_project(root: Path, task: ProjectTask) -> dict[str, str]:
    """The task's files under ``root``; what was written (path → text)."""
    for path, text in task.project.items():
        file = root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    return dict(task.project)


def _span(text: str, name: str) -> tuple[int, int] | None:
    """Line span (0-based, end exclusive) of the definition ``name`` (dotted)."""
    scope: list[ast.stmt] = ast.parse(text).body
    found: Any = None
    for part in name.split("."):
        found = next(
            (
                s
                for s in scope
                if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and s.name == part
            ),
            None,
        )
        if found is None:
            return None
        scope = found.body
    first = min([found.lineno, *(d.lineno for d in found.decorator_list)])
    return first - 1, found.end_lineno


def _replace(text: str, name: str, source: str) -> str:
    """``text`` with definition ``name`` replaced by ``source`` (indented to
    its place), or ``source`` appended when there is none.
    """
    span = _span(text, name)
    lines = text.splitlines(keepends=True)
    if span is None:
        return text.rstrip("\n") + "\n\n\n" + source
    first = lines[span[0]]
    indent = first[: len(first) - len(first.lstrip())]
    body = "".join(
        indent + line if line.strip() else line for line in source.splitlines(True)
    )
    return "".join([*lines[: span[0]], body, *lines[span[1] :]])


def _defined(source: str) -> str:
    """The name of the (first) definition in ``source``."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return node.name
    raise ValueError("no definition")


def applied_by_hand(task: ProjectTask) -> dict[str, str]:
    """The project with the right answer applied (no server): for selfcheck."""
    files = dict(task.project)
    for change in task.answer:
        whole = change.node == "" or (change.own and not task.target)
        if change.path not in files or whole:  # a new file, a module
            files[change.path] = change.source
        elif change.own:
            files[change.path] = _replace(
                files[change.path], task.target, change.source
            )
        elif change.node:
            files[change.path] = _replace(
                files[change.path], change.node, change.source
            )
        else:
            files[change.path] = _replace(
                files[change.path], _defined(change.source), change.source
            )
    return files


def selfcheck(tasks: list[ProjectTask], workdir: Path) -> int:
    """Each judge fails on the project as written and passes on the right
    answer; prints one line per task; the number of judges that do not.
    """
    wrong = 0
    for task in tasks:
        problems = []
        for label, files in (
            ("as written", task.project),
            ("answered", applied_by_hand(task)),
        ):
            root = workdir / f"self-{task.name}-{label.replace(' ', '-')}"
            for path, text in files.items():
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_text(text, encoding="utf-8")
            try:
                task.judge(root, task.project)
            except AssertionError as error:
                if label == "answered":
                    problems.append(f"fails the right answer: {error}")
            else:
                if label == "as written":
                    problems.append("passes the project as written")
        wrong += bool(problems)
        print(f"  {task.name:<22} {'ok' if not problems else '; '.join(problems)}")
    return wrong


# ---- the scripted model --------------------------------------------------------------


def right_calls(
    task: ProjectTask, ids: dict[tuple[str, str], str]
) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls of a model that does the right thing; ``ids``: node ids
    by (path, qualified name) — the asked node's and those its answer names.
    """
    members: list[Change] = list(task.answer)
    if len(members) == 1 and members[0].own:
        return [("rewrite_self", {"new_source": members[0].source})]
    if len(members) == 1 and members[0].path not in task.files:
        change = members[0]
        return [
            (
                "create_file",
                {"path": change.path, "content": change.source, "reason": task.summary},
            )
        ]
    # A model that changes other files looks them up first (the look
    # plumbing measured too; the ids it then names are the bench's).
    calls: list[tuple[str, dict[str, Any]]] = []
    if others(task):
        calls.append(("find_references", {"node_id": ids[(task.path, task.target)]}))
    changes = []
    for change in members:
        if change.own or change.node is not None:
            key = (
                (task.path, task.target)
                if change.own
                else (change.path, change.node or "")
            )
            changes.append({"node_id": ids[key], "new_source": change.source})
        else:
            changes.append({"path": change.path, "new_source": change.source})
    return [*calls, ("propose_changes", {"changes": changes, "summary": task.summary})]


def others(task: ProjectTask) -> list[str]:
    """The existing files other than the asked node's that the answer changes."""
    return sorted(
        {c.path for c in task.answer if c.path in task.files and c.path != task.path}
    )


def references_found(model: Any, task: ProjectTask) -> str:
    """Of the other files the answer changes, those ``find_references`` named
    (read from the tool result the scripted model was sent).
    """
    wanted = others(task)
    if not wanted:
        return ""
    answers = [  # tool results (tools) or what came back as input (fenced)
        str(message.get("content") or "")
        for request in model.requests
        for message in request.get("messages", [])[2:]
        if message.get("role") in ("tool", "user")
    ]
    named = [path for path in wanted if any(path in answer for answer in answers)]
    return f"find_references named {len(named)}/{len(wanted)} files changed"


def fenced(name: str, arguments: dict[str, Any]) -> str:
    """A tool call written in the ``fenced`` protocol's text convention."""
    if name == "find_references":
        return f"REFERENCES: {arguments['node_id']}"
    if name == "rewrite_self":
        return f"```python\n{arguments['new_source']}```"
    if name == "create_file":
        return f"CREATE_FILE: {arguments['path']}\n```python\n{arguments['content']}```"
    assert name == "propose_changes", name
    blocks = [
        f"CHANGE {c.get('node_id') or c['path']}\n```python\n{c['new_source']}```"
        for c in arguments["changes"]
    ]
    return "\n".join([*blocks, f"SUMMARY: {arguments['summary']}"])


class RightAnswers:
    """The scripted server's responder: each task's right answer, step by
    step, whatever the protocol. A step is a model message after the person's
    request: in ``tools`` a tool result comes back as a tool message, in
    ``fenced`` what a ``REFERENCES:`` line found comes back as a new user
    message, so steps are counted from the request, not from the last user
    message.
    """

    def __init__(self) -> None:
        self.replies: dict[str, list[Any]] = {}

    def script(
        self,
        task: ProjectTask,
        ids: dict[tuple[str, str], str],
        protocol: str,
    ) -> None:
        """Answer ``task``'s request rightly: tool calls, or their text in the
        ``fenced`` protocol.
        """
        from remora_lsp.testing.replies import Reply

        calls = right_calls(task, ids)
        if protocol == "fenced":
            replies = [Reply(text=fenced(name, args)) for name, args in calls]
        else:
            replies = [Reply(tool_calls=[call]) for call in calls]
        self.replies[task.request] = replies

    def __call__(self, request: dict[str, Any]) -> Any:
        """The reply to one chat-completions request."""
        from remora_lsp.testing.replies import Reply

        messages = request.get("messages") or []
        for index, message in enumerate(messages):
            if message.get("role") != "user":
                continue
            text = str(message.get("content") or "")
            asked = next((r for r in self.replies if r in text), None)
            if asked is None:
                continue
            step = sum(m.get("role") == "assistant" for m in messages[index + 1 :])
            replies = self.replies[asked]
            return replies[step] if step < len(replies) else Reply(text="Done.")
        return Reply(text="Done.")


# ---- through the server --------------------------------------------------------------


def position(qualified: str, text: str) -> tuple[int, int]:
    """(line, character) of a definition's name (0, 0 for the module)."""
    if not qualified:
        return 0, 0
    span = _span(text, qualified)
    assert span is not None, f"{qualified} not found"
    lines = text.splitlines()
    name = qualified.rsplit(".", 1)[-1]
    for number in range(span[0], span[1]):
        match = re.search(rf"\b(def|class)\s+{re.escape(name)}\b", lines[number])
        if match:
            return number, match.start() + len(match.group(1)) + 1
    raise AssertionError(f"no definition line for {qualified}")


async def command(
    client: LspClient, name: str, arguments: Any, timeout: float = 60.0
) -> Any:
    """``workspace/executeCommand``."""
    return await client.request(
        "workspace/executeCommand",
        {"command": name, "arguments": [arguments]},
        timeout=timeout,
    )


async def find_node(client: LspClient, root: Path, path: str, qualified: str) -> str:
    """A node's id ('' = the module; waits for the project to be indexed)."""
    text = (root / path).read_text(encoding="utf-8")
    line, character = position(qualified, text)
    uri = path_uri(root / path)
    for _ in range(1200):
        if qualified:
            card = await command(
                client,
                "remora.node.at",
                {"uri": uri, "position": {"line": line, "character": character}},
            )
        else:  # a position in a module is its first statement's, or none
            found = await command(client, "remora.nodes.search", {"query": path})
            card = next(
                (n for n in found if n["kind"] == "file" and n["file_path"] == path),
                None,
            )
        if card:
            return str(card["id"])
        await asyncio.sleep(0.1)
    raise RuntimeError(f"{path}:{qualified or '(module)'} not found")


async def model_ready(root: Path) -> float:
    """Wait until the embedded model serves and read the shared prompt; s."""
    log = root / ".remora" / "local-model.log"
    began = time.perf_counter()
    while time.perf_counter() - began < MODEL_READY_S:
        if log.exists() and "prompt eval time" in log.read_text("utf-8", "replace"):
            return time.perf_counter() - began
        await asyncio.sleep(0.1)
    raise RuntimeError("the embedded model did not get ready")


async def settled(client: LspClient) -> None:
    """Wait until no run is queued or running (what the request set off) and
    no pending proposal's check is still running (a failed test goes back to
    the agent, whose next proposal replaces the first): what a person waits
    for before deciding.
    """
    began = time.perf_counter()
    while time.perf_counter() - began < SETTLE_S:
        busy = [
            run
            for status in ("queued", "running")
            for run in await command(client, "remora.runs.list", {"status": status})
        ]
        if not busy:
            pending = await command(
                client, "remora.proposals.list", {"status": "pending"}
            )
            checking = [
                c
                for p in pending
                for c in p.get("checks") or []
                if c.get("ok") is None and c.get("status") == "running"
            ]
            if not checking:
                return
        await asyncio.sleep(0.2)


def kind_of(pending: list[dict[str, Any]]) -> str:
    """What the run ended in: one proposal's kind, or how many proposals."""
    if len(pending) == 1:
        return str(pending[0].get("kind") or "rewrite")
    return f"{len(pending)}_proposals"


async def accept(client: LspClient, pending: list[dict[str, Any]]) -> str:
    """Accept every pending proposal, as one edit; why not ('' if applied)."""
    ids = [p["id"] for p in sorted(pending, key=lambda p: p["created_at"])]
    if len(ids) == 1:
        answer = await command(
            client, "remora.proposal.accept", {"proposal_id": ids[0]}
        )
        answers = [answer]
    else:
        answers = await command(
            client, "remora.proposals.accept", {"proposal_ids": ids}
        )
    refused = [
        a.get("reason") or "not applied" for a in answers if not a.get("applied")
    ]
    return "; ".join(str(r) for r in refused)


def server_options(
    model: str, scripted: Any, protocol: str | None, trusted: bool
) -> Any:
    """``initializationOptions``: none for the embedded model (zero
    configuration), the scripted endpoint otherwise; ``trusted``: the
    workspace trust VS Code passes for a trusted folder (the engine then runs
    a proposal's tests, a new test file's included, before showing it).
    """
    options: dict[str, Any] = {"workspaceTrust": True} if trusted else {}
    if model == "embedded":
        if protocol:
            options["model"] = {"protocol": protocol}
        return options or None
    options["model"] = {
        "base_url": scripted.url,
        "name": "scripted",
        "protocol": protocol or "tools",
        "retry_backoff_s": 0.01,
    }
    return options


async def start(root: Path, workdir: Path, options: Any) -> tuple[LspClient, Editor]:
    """``remora-lsp`` on ``root``, initialized like an editor that takes edits."""
    from agent_tasks import start_server

    client = LspClient()
    editor = Editor(client)  # answers the server's applyEdit from the start
    await start_server(root, workdir, options, editor_capabilities(), client)
    return client, editor


async def ask_project(
    task: ProjectTask,
    workdir: Path,
    model: str,
    scripted: Any = None,
    protocol: str | None = None,
    trusted: bool = False,
) -> Any:
    """Ask one task of its own project through its own server; judge the files."""
    from agent_tasks import RUN_TIMEOUT_S as RUN_S
    from agent_tasks import (
        ModelLog,
        Outcome,
        ended_without_proposal,
        run_end,
        run_events,
    )

    outcome = Outcome(task.name, model)
    root = workdir / f"c-{task.name}"
    root.mkdir()
    before = write_project(root, task)
    began = time.perf_counter()
    client, editor = await start(
        root, workdir, server_options(model, scripted, protocol, trusted)
    )
    try:
        target = await find_node(client, root, task.path, task.target)
        if model == "embedded":
            await model_ready(root)
        else:
            ids = {(task.path, task.target): target}
            for change in task.answer:
                if change.node is not None:
                    key = (change.path, change.node)
                    ids[key] = await find_node(client, root, *key)
            scripted.responder.script(task, ids, protocol or "tools")
        outcome.details.append(f"ready in {time.perf_counter() - began:.1f} s")
        model_log = ModelLog(root / ".remora" / "local-model.log")
        model_log.skip()
        began = time.perf_counter()
        answer = await command(
            client, "remora.agent.chat", {"node_id": target, "message": task.request}
        )
        try:
            end = await run_end(client, answer["run_id"])
        except TimeoutError:  # e.g. a reply that runs on: stop it, say so
            await command(client, "remora.agent.cancel", {"run_id": answer["run_id"]})
            outcome.seconds = time.perf_counter() - began
            outcome.ended = "timeout"
            outcome.why = f"the run had not ended after {RUN_S:g} s: cancelled"
            return outcome
        await settled(client)
        outcome.seconds = time.perf_counter() - began
        events = run_events(client, answer["run_id"])
        outcome.requests = sum(e["type"] == "model_request" for e in events)
        refused = [
            e for e in events if e["type"] == "tool_result" and not e.get("ok", True)
        ]
        outcome.details += [f"refused: {e.get('summary', '')}" for e in refused]
        if model == "embedded":
            await model_log.account(outcome)
        elif found := references_found(scripted, task):
            outcome.details.append(found)
        pending = await command(client, "remora.proposals.list", {"status": "pending"})
        if pending:
            outcome.ended = kind_of(pending)
            outcome.source = "\n".join(
                str(p.get("diff") or p.get("new_source")) for p in pending
            )
            outcome.details += [
                f"check {c.get('name')}: {c.get('status')} {c.get('detail', '')}"[:160]
                for p in pending
                for c in p.get("checks") or []
            ]
            accepted = time.perf_counter()
            problem = await accept(client, pending)
            await editor.save_all()
            outcome.accept_s = time.perf_counter() - accepted
            if problem:
                outcome.why = f"not applied: {problem}"[:200]
            else:
                outcome.satisfied, outcome.why = await judged(task, root, before)
        else:
            ended_without_proposal(outcome, end, refused)
    finally:
        await client.stop()
    return outcome


async def judged(
    task: ProjectTask, root: Path, before: dict[str, str]
) -> tuple[bool, str]:
    """Run the task's judge on the files (in a thread: it runs subprocesses)."""
    try:
        await asyncio.to_thread(task.judge, root, before)
    except AssertionError as error:
        return False, str(error) or "the judge failed"
    return True, ""


# ---- the set -------------------------------------------------------------------------

CLEAR = ("failed", "refused", "answer", "error")
"""Ends that are not a proposal; of them, ``answer`` and ``error`` are unclear."""


async def run_set(
    tasks: list[ProjectTask],
    workdir: Path,
    model: str,
    protocol: str | None,
    row: Any,
    trusted: bool = False,
) -> list[Any]:
    """Every task through its own server; each row printed by ``row``."""
    from agent_tasks import Outcome

    scripted = None
    if model == "scripted":
        from remora_lsp.testing.model_server import ModelServer

        scripted = ModelServer(responder=RightAnswers()).__enter__()
    outcomes = []
    try:
        for task in tasks:
            try:
                outcome = await ask_project(
                    task, workdir, model, scripted, protocol, trusted
                )
            except Exception as error:  # a bench problem, not the agent's
                outcome = Outcome(task.name, model, "error", why=repr(error)[:200])
            outcomes.append(outcome)
            row(outcome)
    finally:
        if scripted is not None:
            scripted.close()
    return outcomes


def summary(
    outcomes: list[Any],
    model: str,
    full: bool,
    trusted: bool = False,
    protocol: str | None = None,
) -> int:
    """Print set c's figures and targets; the number of failed targets."""
    import statistics

    count = len(outcomes)
    satisfied = sum(o.satisfied for o in outcomes)
    clear = sum(o.ended not in ("answer", "error", "timeout") for o in outcomes)
    ended_s = [o.seconds for o in outcomes if o.ended not in ("error", "timeout")]
    median = statistics.median(ended_s) if ended_s else 0.0
    ended: dict[str, int] = {}
    for o in outcomes:
        ended[o.ended] = ended.get(o.ended, 0) + 1
    described = (
        "zero configuration (embedded model)"
        if model == "embedded"
        else (f"the scripted model (right answers, {protocol or 'tools'} protocol)")
    )
    if trusted:
        described += ", trusted workspace"
    accepts = [o.accept_s for o in outcomes if o.accept_s]
    accept = statistics.median(accepts) if accepts else 0.0
    print(f"\nset c: {count} tasks, {described}")
    print(
        f"  {model:<8} satisfied {satisfied}/{count}  "
        f"change set|new file|failure {clear}/{count}  median {median:.2f} s of "
        f"the runs that ended "
        f"(accept and apply: median {accept:.2f} s)"
    )
    print("  ended: " + ", ".join(f"{k} {v}" for k, v in sorted(ended.items())))
    if not full:
        return 0
    checks = [
        (f"ended in a proposal or a clear failure {count}/{count}", clear == count)
    ]
    if model == "scripted":
        checks.append((f"satisfied {count}/{count} (the plumbing)", satisfied == count))
    failed = 0
    for text, ok in checks:
        print(f"  target {text}: {'pass' if ok else 'FAIL'}")
        failed += not ok
    return failed
