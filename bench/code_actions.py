"""codeAction and codeLens latency on a large file holding 50 pending proposals.

Run with the project's interpreter (``.venv/bin/python bench/code_actions.py``).

The file is the running Python's own ``_pydecimal.py`` (about 6,400 lines),
copied into a fresh temporary workspace. remora-lsp is started on it with a
scripted OpenAI-compatible model (``remora_lsp/testing/model_server.py``, a thread of
this process on 127.0.0.1) whose responder reads the asking agent's source
from its system prompt and answers with a ``rewrite_self`` call that changes
it (a trailing comment on its first line), then with a short text. The file is
opened (VS Code-like capabilities, UTF-16), and 50 functions and methods spread
over the file are each asked through ``remora.agent.chat``: the real pipeline
makes 50 pending proposals, shown as 50 diagnostics.

Then, with the raw client of ``lspclient.py`` and one request at a time, from
writing the request to reading its response:

- ``codeAction`` x 200, alternating a line holding a proposal (the request
  carries that diagnostic in its context, as VS Code does) and a line without
  one; each answer is checked (three actions on a proposal line, none
  elsewhere);
- ``codeAction/resolve`` x 50 of the "Accept" actions (the edit is built then);
- ``codeLens`` x 200 (every node of the file, checked);
- the peer measured in the same run and session: ``documentSymbol`` x 200 on
  the same file; and, unless ``--no-basedpyright``, basedpyright's
  ``codeAction`` x 200 on the same lines in its own session (from
  ``bench/.venv``, set up as ``document_symbol.py`` does).

Prints p50/p95 per request kind and remora's p95 over the peers' p95. Target:
**codeAction and codeLens p95 <= 10 ms**; exit status 1 if a target or a
check fails. Server stderr goes to ``bench/.work/logs/``.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import re
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))  # tests

from document_symbol import (  # noqa: E402
    LOGS,
    PEERS_VENV,
    SOURCE,
    ensure_peers,
    first_symbols,
    open_session,
)
from lspclient import LspClient, path_uri, vscode_capabilities  # noqa: E402

from remora_lsp.testing.model_server import ModelServer, Reply  # noqa: E402

PROPOSALS = 50
REQUESTS = 200
WARMUP = 20
TARGET_P95_MS = 10.0
PROPOSALS_TIMEOUT_S = 300.0
REQUEST_TIMEOUT_S = 60.0
MARK = "  # reviewed by remora"
SOURCE_IN_PROMPT = re.compile(r"Your current source:\n```python\n(.*?)\n```", re.S)
FUNCTION, METHOD = 12, 6
"""LSP SymbolKind values."""


# ---- the scripted model --------------------------------------------------------------


def responder(request: dict[str, Any]) -> Reply:
    """Propose the asking node's source with a mark on its first line, then stop."""
    messages = request["messages"]
    if messages[-1].get("role") == "tool":
        return Reply(text="Marked.")
    system = next((m["content"] for m in messages if m.get("role") == "system"), "")
    found = SOURCE_IN_PROMPT.search(str(system))
    if found is None:
        return Reply(text="I cannot see my source.")
    first, _, rest = found.group(1).partition("\n")
    new_source = f"{first}{MARK}\n{rest}" if rest else f"{first}{MARK}"
    return Reply(tool_calls=[("rewrite_self", {"new_source": new_source})])


# ---- figures -------------------------------------------------------------------------


@dataclass
class Series:
    """Latencies of one kind of request."""

    name: str
    latencies_ms: list[float] = field(default_factory=list)

    def p50(self) -> float:
        """Median latency in ms."""
        return statistics.median(self.latencies_ms)

    def p95(self) -> float:
        """95th percentile latency in ms (nearest rank)."""
        ordered = sorted(self.latencies_ms)
        return ordered[math.ceil(0.95 * len(ordered)) - 1]


async def timed(client: LspClient, method: str, params: Any) -> tuple[float, Any]:
    """(latency in ms, result) of one request."""
    started = time.perf_counter()
    future = await client.send_request(method, params)
    arrived, result = await asyncio.wait_for(future, REQUEST_TIMEOUT_S)
    return (arrived - started) * 1000, result


def capabilities() -> dict[str, Any]:
    """VS Code-like capabilities with code actions (lazy edits) and lenses."""
    caps = vscode_capabilities()
    caps["textDocument"]["codeAction"] = {
        "dynamicRegistration": True,
        "isPreferredSupport": True,
        "disabledSupport": True,
        "dataSupport": True,
        "resolveSupport": {"properties": ["edit"]},
        "codeActionLiteralSupport": {
            "codeActionKind": {
                "valueSet": ["", "quickfix", "refactor", "refactor.rewrite", "source"]
            }
        },
    }
    caps["textDocument"]["codeLens"] = {"dynamicRegistration": True}
    caps["workspace"]["codeLens"] = {"refreshSupport": True}
    return caps


def action_params(uri: str, line: int, diagnostics: list[Any]) -> dict[str, Any]:
    """A codeAction request for ``line``, as VS Code sends it."""
    position = {"line": line, "character": 0}
    return {
        "textDocument": {"uri": uri},
        "range": {"start": position, "end": position},
        "context": {"diagnostics": diagnostics, "triggerKind": 2},
    }


def flatten(symbols: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every symbol of a hierarchical outline, parents first."""
    found = []
    for symbol in symbols or []:
        found.append(symbol)
        found.extend(flatten(symbol.get("children") or []))
    return found


# ---- remora --------------------------------------------------------------------------


@dataclass
class Remora:
    """What the remora session measured."""

    actions_with: Series = field(
        default_factory=lambda: Series("codeAction, proposal line")
    )
    actions_without: Series = field(
        default_factory=lambda: Series("codeAction, other line")
    )
    resolve: Series = field(default_factory=lambda: Series("codeAction/resolve"))
    lenses: Series = field(default_factory=lambda: Series("codeLens"))
    symbols: Series = field(default_factory=lambda: Series("documentSymbol (peer)"))
    proposal_lines: list[int] = field(default_factory=list)
    other_lines: list[int] = field(default_factory=list)
    nodes: int = 0
    setup_s: float = 0.0
    problems: list[str] = field(default_factory=list)


async def make_proposals(
    client: LspClient, uri: str, targets: list[dict[str, Any]]
) -> dict[int, dict[str, Any]]:
    """Ask each target's agent; {line: diagnostic} once every proposal is shown."""
    for symbol in targets:
        node_id = symbol["detail"].split(" ")[0]
        await client.request(
            "workspace/executeCommand",
            {
                "command": "remora.agent.chat",
                "arguments": [{"node_id": node_id, "message": "Mark yourself."}],
            },
        )
    deadline = time.monotonic() + PROPOSALS_TIMEOUT_S
    while time.monotonic() < deadline:
        latest = None
        for _, message in client.notifications:
            params = message.get("params") or {}
            if (
                message["method"] == "textDocument/publishDiagnostics"
                and params["uri"] == uri
            ):
                latest = params["diagnostics"]
        shown = [d for d in latest or [] if d.get("source") == "remora"]
        if len(shown) >= len(targets):
            return {d["range"]["start"]["line"]: d for d in shown}
        await asyncio.sleep(0.1)
    failed = [
        m["params"]
        for _, m in client.notifications
        if m["method"] == "remora/event"
        and m["params"].get("type") in ("agent_failed", "tool_result")
        and not m["params"].get("ok", False)
    ]
    raise TimeoutError(f"only some proposals were made; failures: {failed[:3]}")


async def measure_remora(source: str, model: ModelServer) -> Remora:
    """The whole remora session: proposals, then every timed request kind."""
    found = Remora()
    settings = {
        "model": {
            "base_url": model.url,
            "name": "scripted",
            "protocol": "tools",
            "retry_backoff_s": 0.01,
        },
        "swarm": {"cooldown_ms": 0},
        "agents": {"max_concurrency": 4},
    }
    with tempfile.TemporaryDirectory(prefix="remora-bench-") as tmp:
        workspace = Path(tmp) / "workspace"
        workspace.mkdir()
        path = workspace / SOURCE.name
        shutil.copyfile(SOURCE, path)
        uri = path_uri(path)
        client = LspClient()
        log = LOGS / "code_actions.remora-lsp.stderr.log"
        log.unlink(missing_ok=True)
        remora = Path(sys.executable).with_name("remora-lsp")
        await client.start([str(remora)], cwd=workspace, stderr=log)
        try:
            await client.request(
                "initialize",
                {
                    "processId": None,
                    "clientInfo": {"name": "remora-bench"},
                    "rootUri": path_uri(workspace),
                    "workspaceFolders": [
                        {"uri": path_uri(workspace), "name": workspace.name}
                    ],
                    "capabilities": capabilities(),
                    "initializationOptions": settings,
                },
                timeout=REQUEST_TIMEOUT_S,
            )
            await client.notify("initialized", {})
            await client.open_document(uri, source)
            outline = flatten(await first_symbols(client, uri))
            found.nodes = len(outline)
            callables = [s for s in outline if s["kind"] in (FUNCTION, METHOD)]
            step = len(callables) / PROPOSALS
            targets = [callables[int(i * step)] for i in range(PROPOSALS)]

            started = time.monotonic()
            shown = await make_proposals(client, uri, targets)
            found.setup_s = time.monotonic() - started
            found.proposal_lines = sorted(shown)
            taken = set(shown)
            lines = source.count("\n")
            found.other_lines = [
                line
                for line in range(7, lines, lines // PROPOSALS)
                if line not in taken
            ][:PROPOSALS]

            await run_actions(client, uri, shown, found)
            await run_lenses(client, uri, found)
            await run_symbols(client, uri, found)
            await client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        finally:
            code = await client.stop()
            if code != 0:
                found.problems.append(f"remora-lsp exit code {code} (None: killed)")
    return found


async def run_actions(
    client: LspClient, uri: str, shown: dict[int, Any], found: Remora
) -> None:
    """Time codeAction on lines with and without proposals, then resolve."""
    with_lines, without = found.proposal_lines, found.other_lines
    accepts: list[dict[str, Any]] = []
    for number in range(WARMUP + REQUESTS):
        on_proposal = number % 2 == 0
        pool = with_lines if on_proposal else without
        line = pool[(number // 2) % len(pool)]
        diagnostics = [shown[line]] if on_proposal else []
        ms, result = await timed(
            client, "textDocument/codeAction", action_params(uri, line, diagnostics)
        )
        titles = [a["title"] for a in result or []]
        if on_proposal:
            if len(titles) != 3 or not titles[0].startswith("Accept: "):
                found.problems.append(f"line {line}: actions {titles}")
            elif len(accepts) < PROPOSALS:
                accepts.append(result[0])
        elif titles:
            found.problems.append(f"line {line} has no proposal, got {titles}")
        if number >= WARMUP:
            (
                found.actions_with if on_proposal else found.actions_without
            ).latencies_ms.append(ms)
    for action in accepts:
        ms, resolved = await timed(client, "codeAction/resolve", action)
        if not (resolved or {}).get("edit"):
            found.problems.append(f"resolve gave no edit: {resolved}")
        found.resolve.latencies_ms.append(ms)


async def run_lenses(client: LspClient, uri: str, found: Remora) -> None:
    """Time codeLens on the file."""
    params = {"textDocument": {"uri": uri}}
    for number in range(WARMUP + REQUESTS):
        ms, result = await timed(client, "textDocument/codeLens", params)
        # One lens per node, and one under each node with a pending proposal.
        if len(result or []) != found.nodes + PROPOSALS:
            found.problems.append(
                f"{len(result or [])} lenses for {found.nodes} nodes and "
                f"{PROPOSALS} proposals"
            )
        if number >= WARMUP:
            found.lenses.latencies_ms.append(ms)


async def run_symbols(client: LspClient, uri: str, found: Remora) -> None:
    """Time documentSymbol on the file (the peer in the same session)."""
    params = {"textDocument": {"uri": uri}}
    for number in range(WARMUP + REQUESTS):
        ms, result = await timed(client, "textDocument/documentSymbol", params)
        if not result:
            found.problems.append("documentSymbol answered nothing")
        if number >= WARMUP:
            found.symbols.latencies_ms.append(ms)


# ---- basedpyright --------------------------------------------------------------------


async def measure_basedpyright(source: str, lines: list[int]) -> Series:
    """The peer: basedpyright's codeAction on the same lines of the same file."""
    series = Series("basedpyright codeAction")
    command = [str(PEERS_VENV / "bin" / "basedpyright-langserver"), "--stdio"]
    with tempfile.TemporaryDirectory(prefix="remora-bench-") as tmp:
        workspace = Path(tmp) / "workspace"
        workspace.mkdir()
        path = workspace / SOURCE.name
        shutil.copyfile(SOURCE, path)
        uri = path_uri(path)
        client = LspClient()
        log = LOGS / "code_actions.basedpyright.stderr.log"
        log.unlink(missing_ok=True)
        await client.start(command, cwd=workspace, stderr=log)
        try:
            await open_session(client, workspace)
            await client.open_document(uri, source)
            await first_symbols(client, uri)
            for number in range(WARMUP + REQUESTS):
                line = lines[number % len(lines)]
                ms, _ = await timed(
                    client, "textDocument/codeAction", action_params(uri, line, [])
                )
                if number >= WARMUP:
                    series.latencies_ms.append(ms)
        finally:
            await client.stop()
    return series


# ---- report --------------------------------------------------------------------------


def report(remora: Remora, peer: Series | None) -> int:
    """Print the figures; return the exit status (1: a target or check failed)."""
    print(
        f"\n{PROPOSALS} proposals made in {remora.setup_s:.1f} s; "
        f"{remora.nodes} nodes in the file\n"
    )
    print(f"{'request':<30} {'n':>4} {'p50 ms':>8} {'p95 ms':>8}")
    rows = [
        remora.actions_with,
        remora.actions_without,
        remora.resolve,
        remora.lenses,
        remora.symbols,
    ]
    if peer is not None:
        rows.append(peer)
    for s in rows:
        print(f"{s.name:<30} {len(s.latencies_ms):>4} {s.p50():>8.2f} {s.p95():>8.2f}")
    status = 0
    print()
    for s in (remora.actions_with, remora.actions_without, remora.lenses):
        verdict = "pass" if s.p95() <= TARGET_P95_MS else "FAIL"
        ratios = f"{s.p95() / remora.symbols.p95():.2f} x documentSymbol"
        if peer is not None and s is not remora.lenses:
            ratios += f", {s.p95() / peer.p95():.2f} x basedpyright codeAction"
        print(
            f"{s.name}: p95 {s.p95():.2f} ms ({ratios}); target <= "
            f"{TARGET_P95_MS:g} ms: {verdict}"
        )
        status |= int(s.p95() > TARGET_P95_MS)
    for problem in remora.problems[:20]:
        print(f"PROBLEM: {problem}")
        status = 1
    return status


async def run(with_peer: bool) -> int:
    """Measure remora, then the basedpyright peer if wanted."""
    source = SOURCE.read_text(encoding="utf-8")
    print(
        f"{SOURCE} ({len(source.splitlines())} lines); {PROPOSALS} proposals; "
        f"{WARMUP} warm-up + {REQUESTS} timed requests per kind"
    )
    with ModelServer(responder=responder) as model:
        print("measuring remora-lsp ...", flush=True)
        remora = await measure_remora(source, model)
    peer = None
    if with_peer:
        print("measuring basedpyright ...", flush=True)
        peer = await measure_basedpyright(
            source, remora.proposal_lines + remora.other_lines
        )
    return report(remora, peer)


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--no-basedpyright",
        action="store_true",
        help="skip the basedpyright peer (documentSymbol stays the peer)",
    )
    args = parser.parse_args()
    LOGS.mkdir(parents=True, exist_ok=True)
    if not args.no_basedpyright:
        ensure_peers()
    sys.exit(asyncio.run(run(not args.no_basedpyright)))


if __name__ == "__main__":
    main()
