"""Edit → documentSymbol latency on a large file, against two peer servers.

Run with the project's interpreter (``.venv/bin/python bench/document_symbol.py``).
The file is the running Python's own ``_pydecimal.py`` (about 6,400 lines).
Three servers are measured in the same run, each in a fresh temporary
workspace holding a copy of the file:

- remora-lsp, from the interpreter's own environment;
- basedpyright-langserver and jedi-language-server, from ``bench/.venv``, which
  this script creates and fills from ``bench/peers.txt`` when it is missing or
  out of date.

For each server: initialize (VS Code-like capabilities, hierarchical symbols,
UTF-16 positions), open the file, wait until documentSymbol answers with
symbols, then, for each edit position, warm up and time ``ROUNDS`` rounds of
one incremental one-line ``didChange`` sent back to back with a
``documentSymbol`` request: from writing the change to reading the response.
The positions (where a person types changes what has to be redone):

- ``middle``: a trailing comment added to / removed from a statement inside a
  method in the middle of the file;
- ``top``: the same in the first function of the file (everything after the
  edit moves);
- ``rename``: a letter added to / removed from the name of the first top-level
  function (each keystroke while typing a new name).

Every response is checked: same number of top-level symbols as before the
edits, and every top-level class and function of the file among them (the
renamed one under either name).

Prints median and p95 per server and position, remora's median over the
fastest peer's for each position (target: ``TARGET_RATIO``), and remora's top
median over its middle median (target: ``TARGET_TOP_OVER_MIDDLE``).
Server stderr goes to ``bench/.work/logs/``.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import hashlib
import math
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lspclient import LspClient, path_uri, vscode_capabilities

BENCH = Path(__file__).resolve().parent
PEERS_VENV = BENCH / ".venv"
PEERS_REQUIREMENTS = BENCH / "peers.txt"
LOGS = BENCH / ".work" / "logs"
SOURCE = Path(sysconfig.get_paths()["stdlib"]) / "_pydecimal.py"

ROUNDS = 30
WARMUP_ROUNDS = 5
FIRST_SYMBOLS_TIMEOUT_S = 180.0
REQUEST_TIMEOUT_S = 60.0
TARGET_RATIO = 0.15
TARGET_TOP_OVER_MIDDLE = 1.5
EDIT_TEXT = "  # bench"
RENAME_TEXT = "x"


# ---- peers ---------------------------------------------------------------------------


def ensure_peers() -> None:
    """Create ``bench/.venv`` and install ``peers.txt`` into it if needed."""
    wanted = hashlib.sha256(PEERS_REQUIREMENTS.read_bytes()).hexdigest()
    stamp = PEERS_VENV / ".installed-from"
    if stamp.exists() and stamp.read_text() == wanted:
        return
    if not (PEERS_VENV / "bin" / "python").exists():
        print(f"creating {PEERS_VENV} for the peer servers", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(PEERS_VENV)], check=True)
    print(f"installing {PEERS_REQUIREMENTS.name} into {PEERS_VENV}", flush=True)
    pip = [str(PEERS_VENV / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "-r", str(PEERS_REQUIREMENTS)], check=True)
    stamp.write_text(wanted)


@dataclass(frozen=True)
class Server:
    """A language server to measure."""

    name: str
    command: list[str]
    is_peer: bool


def servers() -> list[Server]:
    """Return the servers to measure, remora first."""
    remora = Path(sys.executable).with_name("remora-lsp")
    if not remora.exists():
        sys.exit(f"{remora} not found: run this with the project's .venv/bin/python")
    peers = PEERS_VENV / "bin"
    return [
        Server("remora-lsp", [str(remora)], is_peer=False),
        Server(
            "basedpyright",
            [str(peers / "basedpyright-langserver"), "--stdio"],
            is_peer=True,
        ),
        Server("jedi-language-server", [str(peers / "jedi-language-server")], True),
    ]


# ---- the file and the edit -----------------------------------------------------------


def top_level_definitions(source: str) -> set[str]:
    """Names of the top-level classes and functions of ``source``."""
    kinds = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {node.name for node in ast.parse(source).body if isinstance(node, kinds)}


@dataclass(frozen=True)
class Edit:
    """Where the timed rounds type: ``text`` inserted at (``line``, ``column``),
    then removed, and so on. ``renames`` is the top-level name it changes.
    """

    label: str
    line: int
    column: int
    text: str
    renames: str | None = None


def _simple_statements(source: str) -> list[ast.stmt]:
    """One-line ASCII simple statements directly in a function body, in order.

    A trailing comment can be appended to and removed from such a line without
    changing the structure; ASCII keeps columns equal in every encoding.
    """
    lines = source.splitlines()
    simple = (ast.Assign, ast.AugAssign, ast.Return)
    found = [
        stmt
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef)
        for stmt in node.body
        if isinstance(stmt, simple)
        and stmt.lineno == stmt.end_lineno
        and lines[stmt.lineno - 1].isascii()
    ]
    return sorted(found, key=lambda stmt: stmt.lineno)


def edits(source: str) -> list[Edit]:
    """The three edit positions: middle, top, rename (see the module docstring)."""
    lines = source.splitlines()
    statements = _simple_statements(source)
    middle = min(statements, key=lambda stmt: abs(stmt.lineno - len(lines) // 2))
    top = statements[0]
    first_function = next(
        node for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)
    )
    header = lines[first_function.lineno - 1]
    name_end = header.index(first_function.name) + len(first_function.name)
    return [
        Edit("middle", middle.lineno - 1, len(lines[middle.lineno - 1]), EDIT_TEXT),
        Edit("top", top.lineno - 1, len(lines[top.lineno - 1]), EDIT_TEXT),
        Edit(
            "rename",
            first_function.lineno - 1,
            name_end,
            RENAME_TEXT,
            renames=first_function.name,
        ),
    ]


def change_params(uri: str, version: int, edit: Edit, insert: bool) -> dict[str, Any]:
    """Build a change inserting (or removing again) ``edit.text``."""
    start = {"line": edit.line, "character": edit.column}
    if insert:
        end, text = start, edit.text
    else:
        end = {"line": edit.line, "character": edit.column + len(edit.text)}
        text = ""
    return {
        "textDocument": {"uri": uri, "version": version},
        "contentChanges": [{"range": {"start": start, "end": end}, "text": text}],
    }


# ---- checking responses --------------------------------------------------------------


def top_level_names(result: Any) -> tuple[str, list[str]]:
    """Return the shape of a documentSymbol result and its top-level names."""
    if not result:
        return "empty", []
    if "location" in result[0]:  # flat SymbolInformation[]
        return "SymbolInformation", [
            s["name"] for s in result if not s.get("containerName")
        ]
    return "DocumentSymbol", [s["name"] for s in result]


@dataclass
class Measurement:
    """What one server did in one run."""

    server: Server
    server_info: str = ""
    shape: str = ""
    top_level: int = 0
    latencies_ms: dict[str, list[float]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def median(self, label: str) -> float:
        """Median latency in ms at one edit position."""
        return statistics.median(self.latencies_ms[label])

    def p95(self, label: str) -> float:
        """95th percentile latency in ms (nearest rank) at one edit position."""
        ordered = sorted(self.latencies_ms[label])
        return ordered[math.ceil(0.95 * len(ordered)) - 1]


def check(
    result: Any, expected: set[str], count: int, where: str, renamed: str | None = None
) -> str | None:
    """Describe a problem with a documentSymbol response; None if it looks right."""
    _, names = top_level_names(result)
    missing = expected - set(names)
    if renamed is not None and renamed + RENAME_TEXT in names:
        missing.discard(renamed)
    if missing:
        return f"{where}: missing top-level {sorted(missing)[:5]}"
    if count and len(names) != count:
        return f"{where}: {len(names)} top-level symbols, expected {count}"
    return None


# ---- one server ----------------------------------------------------------------------


async def open_session(client: LspClient, workspace: Path) -> str:
    """Initialize with ``workspace`` as the folder; return the server's name."""
    result = await client.request(
        "initialize",
        {
            "processId": None,
            "clientInfo": {"name": "remora-bench"},
            "rootUri": path_uri(workspace),
            "workspaceFolders": [{"uri": path_uri(workspace), "name": workspace.name}],
            "capabilities": vscode_capabilities(),
        },
        timeout=REQUEST_TIMEOUT_S,
    )
    await client.notify("initialized", {})
    info = result.get("serverInfo") or {}
    return f"{info.get('name', '?')} {info.get('version', '')}".strip()


async def first_symbols(client: LspClient, uri: str) -> Any:
    """Ask for documentSymbol until the answer is not empty."""
    deadline = time.monotonic() + FIRST_SYMBOLS_TIMEOUT_S
    params = {"textDocument": {"uri": uri}}
    while time.monotonic() < deadline:
        result = await client.request("textDocument/documentSymbol", params)
        if result:
            return result
        await asyncio.sleep(0.1)
    raise TimeoutError("documentSymbol stayed empty")


async def edit_and_ask(
    client: LspClient, uri: str, version: int, edit: Edit, insert: bool
) -> tuple[float, Any]:
    """One round: the change, then documentSymbol; (latency in ms, result)."""
    started = time.perf_counter()
    await client.notify(
        "textDocument/didChange", change_params(uri, version, edit, insert)
    )
    future = await client.send_request(
        "textDocument/documentSymbol", {"textDocument": {"uri": uri}}
    )
    arrived, result = await asyncio.wait_for(future, REQUEST_TIMEOUT_S)
    return (arrived - started) * 1000, result


async def measure(server: Server, source: str, expected: set[str]) -> Measurement:
    """Run the whole session against one server."""
    found = Measurement(server)
    with tempfile.TemporaryDirectory(prefix="remora-bench-") as tmp:
        workspace = Path(tmp) / "workspace"
        workspace.mkdir()
        path = workspace / SOURCE.name
        shutil.copyfile(SOURCE, path)
        uri = path_uri(path)
        client = LspClient()
        log = LOGS / f"document_symbol.{server.name}.stderr.log"
        log.unlink(missing_ok=True)
        await client.start(server.command, cwd=workspace, stderr=log)
        try:
            found.server_info = await open_session(client, workspace)
            await client.open_document(uri, source)
            first = await first_symbols(client, uri)
            found.shape, names = top_level_names(first)
            found.top_level = len(names)
            if problem := check(first, expected, 0, "first response"):
                found.problems.append(problem)
            version = 1
            for edit in edits(source):
                timed = found.latencies_ms.setdefault(edit.label, [])
                # An even number of rounds per position: the text is back as it was.
                for number in range(2 * ((WARMUP_ROUNDS + ROUNDS + 1) // 2)):
                    version += 1
                    insert = number % 2 == 0
                    ms, result = await edit_and_ask(client, uri, version, edit, insert)
                    if number >= WARMUP_ROUNDS:
                        timed.append(ms)
                    where = f"{edit.label} round {number + 1}"
                    count = found.top_level
                    if problem := check(result, expected, count, where, edit.renames):
                        found.problems.append(problem)
            await client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        finally:
            code = await client.stop()
            if code != 0:
                found.problems.append(f"exit code {code} (None: killed)")
    return found


# ---- report --------------------------------------------------------------------------


def report(results: list[Measurement], labels: list[str]) -> int:
    """Print the figures; return the exit status (1 if a check or a target failed)."""
    print()
    print(
        f"{'server':<22} {'edit':<7} {'median ms':>10} {'p95 ms':>9} {'top-level':>10}"
        "  shape"
    )
    for r in results:
        for label in labels:
            print(
                f"{r.server.name:<22} {label:<7} {r.median(label):>10.1f} "
                f"{r.p95(label):>9.1f} {r.top_level:>10}  {r.shape}  ({r.server_info})"
            )
    remora = results[0]
    status = 0
    print()
    for label in labels:
        fastest = min(
            (r for r in results if r.server.is_peer), key=lambda r: r.median(label)
        )
        ratio = remora.median(label) / fastest.median(label)
        verdict = "pass" if ratio <= TARGET_RATIO else "FAIL"
        status |= ratio > TARGET_RATIO
        print(
            f"{label:<7} remora median / fastest peer ({fastest.server.name}) median: "
            f"{ratio:.3f}  (target <= {TARGET_RATIO}: {verdict})"
        )
    top_over_middle = remora.median("top") / remora.median("middle")
    verdict = "pass" if top_over_middle <= TARGET_TOP_OVER_MIDDLE else "FAIL"
    status |= top_over_middle > TARGET_TOP_OVER_MIDDLE
    print(
        f"remora top median / middle median: {top_over_middle:.2f}  "
        f"(target <= {TARGET_TOP_OVER_MIDDLE}: {verdict})"
    )
    for r in results:
        for problem in r.problems:
            print(f"PROBLEM {r.server.name}: {problem}")
            status = 1
    return int(status)


async def run(names: list[str] | None) -> int:
    """Measure every server (or those named) one after the other."""
    source = SOURCE.read_text(encoding="utf-8")
    expected = top_level_definitions(source)
    positions = edits(source)
    where = ", ".join(f"{e.label} at line {e.line + 1}" for e in positions)
    print(
        f"{SOURCE} ({len(source.splitlines())} lines, {len(expected)} top-level "
        f"classes and functions); editing {where}; "
        f"{WARMUP_ROUNDS} warm-up + {ROUNDS} timed rounds each"
    )
    results = []
    for server in servers():
        if names and server.name not in names and server.is_peer:
            continue
        print(f"measuring {server.name} ...", flush=True)
        results.append(await measure(server, source, expected))
    if not any(r.server.is_peer for r in results):
        sys.exit("at least one peer is needed for the ratio")
    return report(results, [e.label for e in positions])


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--peer",
        action="append",
        help="measure only this peer (repeatable): basedpyright, jedi-language-server",
    )
    args = parser.parse_args()
    LOGS.mkdir(parents=True, exist_ok=True)
    ensure_peers()
    sys.exit(asyncio.run(run(args.peer)))


if __name__ == "__main__":
    main()
