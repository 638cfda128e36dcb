"""Which command of each client reaches which command of the table.

A client reaches the table by sending a command's name as a string literal.
How each client's commands are joined to the table commands they send:

- **VS Code** and **Neovim**: each editor client *declares* in its
  ``reach.json`` which table commands each of its commands sends
  (``{"commands": {"remora.acceptProposal": ["remora.proposal.accept"]},
  "elsewhere": {"remora.node.at": "the node at the cursor"}}``), and the
  declaration is checked against the client (:func:`problems`, a test): its
  commands are exactly those of VS Code's ``package.json`` or the Neovim
  plugin's ``:Remora…`` user commands, every table command it names is sent
  somewhere in its sources (a quoted literal), and every one its sources send
  is named. Reading TypeScript and Lua call graphs with patterns was tried
  first and misread handlers as the clients grew (a shared helper hid what a
  command was for); a short declaration that cannot drift from the sources
  unnoticed is plainer.
- **CLI**: each verb module of ``core/remora_cli/verbs`` is one verb
  (``NAME``): every table literal in it is the verb's (read with :mod:`ast`).
- **MCP**: each ``@server.tool()`` function of ``core/remora_cli/mcp_server.py``,
  read with :mod:`ast`.
- **Dashboard**: each script of the ``remora dashboard`` page
  (``core/remora_cli/dashboard/static/js``) is a part of the page (the node
  page, the runs panel, …): every table literal in it is that part's. What
  the page sends is exactly what its server lets through (``web.ALLOWED``; a
  test).

For MCP, a table command is reached when its name is a literal in the tool
or in a function it calls, at most :data:`HOPS` calls away (a helper most
tools share is not entered unless a tool reaches nothing without it). A name
only compared with (``=== "remora.node.get"``) is not sent. A literal no
command reaches (a code lens, a view) still counts: the client reaches the
command, from no command of its own.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

HOPS = 4
"""How many calls from a command's handler a literal is still its."""

REPO = Path(__file__).resolve().parent.parent
VSCODE = REPO / "clients" / "vscode"
NVIM = REPO / "clients" / "nvim"
CLI_VERBS = REPO / "core" / "remora_cli" / "verbs"
MCP_SERVER = REPO / "core" / "remora_cli" / "mcp_server.py"
DASHBOARD_JS = REPO / "core" / "remora_cli" / "dashboard" / "static" / "js"
DASHBOARD_PARTS = {
    "main": "page",
    "graph": "graph",
    "node": "node page",
    "runs": "runs",
    "events": "events",
    "graphruns": "graph runs",
}
"""The dashboard's scripts → the part of the page each draws."""

LITERAL = re.compile(r"""["'`](remora\.[a-z_]+(?:\.[a-z_]+)*)["'`]""")
COMPARED = re.compile(r"(?:===|!==|==|~=|!=)\s*\Z")
"""A comparison operator right before a literal."""


@dataclass
class Function:
    """A function's table literals and the names it calls."""

    literals: set[str] = field(default_factory=set)
    calls: set[str] = field(default_factory=set)
    """Keys of the functions it calls (resolved by the reader)."""


@dataclass
class Client:
    """One client's commands and what each reaches."""

    commands: dict[str, dict[str, int]]
    """Client command (as a person types or picks it) → the table commands
    it reaches, each with the number of calls it takes."""
    literals: set[str]
    """Every table command named anywhere in its sources."""


def _walk(
    handler: Function,
    functions: dict[str, list[Function]],
    skip: frozenset[int] = frozenset(),
):
    """``(depth, function)`` of the handler and what it calls, breadth first,
    up to :data:`HOPS` calls; the functions in ``skip`` (ids) are not entered.
    """
    yield 0, handler
    frontier, seen = [handler], {id(handler)}
    for depth in range(1, HOPS + 1):
        following = []
        for function in frontier:
            for key in sorted(function.calls):
                for callee in functions.get(key, ()):
                    if id(callee) not in seen and id(callee) not in skip:
                        seen.add(id(callee))
                        following.append(callee)
                        yield depth, callee
        frontier = following


def reach(
    handler: Function,
    functions: dict[str, list[Function]],
    table: set[str],
    skip: frozenset[int] = frozenset(),
) -> dict[str, int]:
    """Table commands named in ``handler`` or up to :data:`HOPS` calls away,
    each with the fewest calls it takes.
    """
    found: dict[str, int] = {}
    for depth, function in _walk(handler, functions, skip):
        for literal in function.literals & table:
            found.setdefault(literal, depth)
    return found


def credit(
    handlers: dict[str, Function], functions: dict[str, list[Function]], table: set[str]
) -> dict[str, dict[str, int]]:
    """What each client command reaches, not through the helpers most of them
    share (finding the node at the cursor, say: what a command is for is not
    what every command does first) — unless it reaches nothing else.
    """
    uses: dict[int, int] = {}
    for handler in handlers.values():
        for _depth, function in _walk(handler, functions):
            if function is not handler:
                uses[id(function)] = uses.get(id(function), 0) + 1
    shared = frozenset(f for f, count in uses.items() if count * 2 > len(handlers))
    return {
        name: reach(handler, functions, table, shared)
        or reach(handler, functions, table)
        for name, handler in handlers.items()
    }


def _literals(text: str) -> set[str]:
    """The table names quoted in ``text``, but not those only compared with
    (``command === "remora.node.get"`` recognises a name, it sends nothing).
    """
    return {
        found.group(1)
        for found in LITERAL.finditer(text)
        if not COMPARED.search(text, 0, found.start())
    }


# ---- the editors: declared in ``reach.json``, checked against the sources ------------

LUA_USER_COMMAND = re.compile(
    r"""(?:nvim_create_user_command|\bcommand)\(\s*['"](Remora\w*)['"]"""
)


@dataclass
class Declared:
    """An editor client's ``reach.json``, and what its sources say."""

    client: Client
    own_commands: set[str]
    """The commands the client's manifest or sources create."""
    declared: dict[str, list[str]]
    """Client command → the table commands it sends (``reach.json``)."""
    elsewhere: dict[str, str]
    """Table command → where the client sends it from besides its commands."""


def _sources_literals(paths: list[Path], table: set[str]) -> set[str]:
    return {
        literal
        for path in paths
        for literal in _literals(path.read_text(encoding="utf-8"))
    } & table


def _declared(root: Path, own: set[str], sources: list[Path], table: set[str]):
    reach = json.loads((root / "reach.json").read_text(encoding="utf-8"))
    declared: dict[str, list[str]] = reach["commands"]
    elsewhere: dict[str, str] = reach.get("elsewhere", {})
    commands = {
        name: dict.fromkeys(set(sent) & table, 0) for name, sent in declared.items()
    }
    literals = _sources_literals(sources, table)
    return Declared(Client(commands, literals), own, declared, elsewhere)


def vscode_declared(table: set[str], root: Path = VSCODE) -> Declared:
    """The VS Code extension: the commands of ``package.json`` and
    ``reach.json``'s word on what each sends.
    """
    manifest = json.loads((root / "package.json").read_text(encoding="utf-8"))
    own = {c["command"] for c in manifest["contributes"]["commands"]}
    return _declared(root, own, sorted((root / "src").rglob("*.ts")), table)


def neovim_declared(table: set[str], root: Path = NVIM) -> Declared:
    """The Neovim plugin: its ``:Remora…`` user commands and ``reach.json``'s
    word on what each sends.
    """
    sources = sorted((root / "lua").rglob("*.lua"))
    own = {
        f":{name}"
        for path in sources
        for name in LUA_USER_COMMAND.findall(path.read_text(encoding="utf-8"))
    }
    return _declared(root, own, sources, table)


def vscode(table: set[str], root: Path = VSCODE) -> Client:
    """The VS Code extension's commands and what they reach."""
    return vscode_declared(table, root).client


def neovim(table: set[str], root: Path = NVIM) -> Client:
    """The Neovim plugin's ``:Remora…`` commands and what they reach."""
    return neovim_declared(table, root).client


def problems(found: Declared, table: set[str]) -> list[str]:
    """Where ``reach.json`` and the client's sources disagree: a command
    declared that the client does not have (or one it has, undeclared); a
    table command declared that its sources never send, or not in the table;
    one its sources send that ``reach.json`` does not name.
    """
    said: list[str] = []
    for name in sorted(found.own_commands - found.declared.keys()):
        said.append(f"{name}: a command of the client, missing from reach.json")
    for name in sorted(found.declared.keys() - found.own_commands):
        said.append(f"{name}: in reach.json, but the client has no such command")
    named = {s for sent in found.declared.values() for s in sent} | set(found.elsewhere)
    for name in sorted(named - table):
        said.append(f"{name}: in reach.json, but not a command of the table")
    for name in sorted((named & table) - found.client.literals):
        said.append(f"{name}: in reach.json, but the sources never send it")
    for name in sorted(found.client.literals - named):
        said.append(f"{name}: sent by the sources, but reach.json does not say where")
    return said


# ---- the command line and MCP (Python) ----------------------------------------------


def _python_functions(tree: ast.Module) -> dict[str, list[Function]]:
    """Every function and method of a module by name, with its literals and
    calls (``f(``, ``obj.f(``).
    """
    functions: dict[str, list[Function]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            functions.setdefault(node.name, []).append(_python_function(node))
    return functions


def _python_function(node: ast.AST) -> Function:
    function = Function()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            if LITERAL.fullmatch(f'"{inner.value}"'):
                function.literals.add(inner.value)
        elif isinstance(inner, ast.Call):
            if isinstance(inner.func, ast.Name):
                function.calls.add(inner.func.id)
            elif isinstance(inner.func, ast.Attribute):
                function.calls.add(inner.func.attr)
    return function


def command_line(table: set[str], verbs: Path = CLI_VERBS) -> Client:
    """The ``remora`` verbs and what they reach."""
    commands: dict[str, dict[str, int]] = {}
    literals: set[str] = set()
    for path in sorted(verbs.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        name = next(
            (
                node.value.value
                for node in tree.body
                if isinstance(node, ast.Assign)
                and any(
                    isinstance(t, ast.Name) and t.id == "NAME" for t in node.targets
                )
                and isinstance(node.value, ast.Constant)
            ),
            None,
        )
        functions = _python_functions(tree)
        literals |= {
            literal for fs in functions.values() for f in fs for literal in f.literals
        } & table
        if isinstance(name, str):  # one verb per module: all its literals
            mine = {
                literal
                for fs in functions.values()
                for f in fs
                for literal in f.literals
            }
            commands[f"remora {name}"] = dict.fromkeys(mine & table, 0)
    return Client(commands, literals)


def dashboard(table: set[str], scripts: Path = DASHBOARD_JS) -> Client:
    """The parts of the dashboard's page and what each sends."""
    commands: dict[str, dict[str, int]] = {}
    literals: set[str] = set()
    for path in sorted(scripts.glob("*.js")):
        sent = _literals(path.read_text(encoding="utf-8")) & table
        literals |= sent
        if sent:
            commands[DASHBOARD_PARTS.get(path.stem, path.stem)] = dict.fromkeys(sent, 0)
    return Client(commands, literals)


def mcp(table: set[str], module: Path = MCP_SERVER) -> Client:
    """The MCP server's tools and what they reach."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    functions = _python_functions(tree)
    tools: dict[str, Function] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            isinstance(d, ast.Call)
            and isinstance(d.func, ast.Attribute)
            and d.func.attr == "tool"
            for d in node.decorator_list
        ):
            tools[node.name] = _python_function(node)
    commands = credit(tools, functions, table)
    literals = {
        literal for fs in functions.values() for f in fs for literal in f.literals
    }
    return Client(commands, literals & table)
