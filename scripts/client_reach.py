"""Which command of each client reaches which command of the table.

A client *declares* its commands in its manifest and *reaches* the table by
sending a command's name as a string literal; this module reads both, for
each client in its own language, and joins them by following calls from each
command's handler (:data:`HOPS` calls deep, not into the helpers most of
its commands share: :func:`credit`):

- **VS Code**: the commands of ``clients/vscode/package.json``
  (``contributes.commands``); each is registered in ``src/**/*.ts`` with its
  id as a literal, and the handler is the statement registering it
  (``add("remora.acceptProposal", (a) => this.accept(a))``). Functions and
  methods (top level or class members) are found by their definition line
  and end at the closing brace of the same indentation (the sources are
  formatted); a call ``x(`` or ``obj.x(``, or a method passed on
  (``this.x``), reaches every function named ``x``.
- **Neovim**: the user commands ``:Remora…`` created in
  ``clients/nvim/lua/**/*.lua`` (``nvim_create_user_command('RemoraX', …)``
  or a local ``command('RemoraX', …)`` wrapper); the handler is the function
  given, up to the ``end`` at the registering line's indentation; a
  module's functions are its top-level ``function`` definitions.
  ``require('remora.mod').f(``, ``mod.f(`` (``mod`` a module of the plugin),
  ``M.f(`` and ``f(`` reach that module's (or the same file's) ``f``.
- **CLI**: each verb module of ``core/remora_cli/verbs`` is one verb
  (``NAME``): every table literal in it is the verb's (read with :mod:`ast`).
- **MCP**: each ``@server.tool()`` function of ``core/remora_cli/mcp_server.py``,
  read with :mod:`ast`.

A table command is reached when its name (``"remora.<noun>.<verb>"``, quoted)
is a literal in the handler or in a function it calls or passes on, at most
:data:`HOPS` calls away: deep enough for a command → its use case → the module
showing the answer. A helper most of a client's commands share (the node at
the cursor) is not entered unless a command reaches nothing without it, and a
name only compared with (``=== "remora.node.get"``) is not sent. The page
lists each table command under the client's commands reaching it in the
fewest calls. A literal no command reaches (a code lens, a view) still counts:
the client reaches the command, from no command of its own. A client that
builds a name at run time, or registers a command under a name held in a
variable, is not seen — write names as literals.
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


def _block(lines: list[str], start: int, closing: re.Pattern[str]) -> str:
    """From ``lines[start]`` to the first later line at the same indentation
    matching ``closing`` (the whole rest of the file if none).
    """
    indent = len(lines[start]) - len(lines[start].lstrip())
    for end in range(start + 1, len(lines)):
        line = lines[end]
        same = line.strip() and len(line) - len(line.lstrip()) == indent
        if same and closing.match(line.strip()):
            return "\n".join(lines[start : end + 1])
    return "\n".join(lines[start:])


# ---- VS Code (TypeScript) ---------------------------------------------------------

TS_DEFINITION = re.compile(
    r"^\s*(?:(?:export|default|public|private|protected|static|async|function)\s+)*"
    r"(?:const\s+)?([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\s*(?:=\s*(?:async\s*)?)?"
    r"\((?!.*;\s*$).*\{\s*$"
)
TS_CALL = re.compile(r"(?:\.|\b)([A-Za-z_$][\w$]*)\s*\(|\bthis\.([A-Za-z_$][\w$]*)")
"""A call ``f(`` / ``x.f(``, or a method passed as a callback (``this.f``)."""
TS_END = re.compile(r"^\}")
TS_MEMBER_INDENT = 2
"""The indentation of a class's methods (the sources are formatted)."""
TS_KEYWORDS = frozenset({"if", "for", "while", "switch", "catch", "function", "return"})


def _ts_function(text: str) -> Function:
    calls = {a or b for a, b in TS_CALL.findall(text)} - TS_KEYWORDS
    return Function(_literals(text), calls)


def _statement(lines: list[str], start: int) -> str:
    """The statement starting at ``lines[start]``: until its parentheses close."""
    depth, taken = 0, []
    for line in lines[start:]:
        taken.append(line)
        depth += line.count("(") - line.count(")")
        if depth <= 0:
            break
    return "\n".join(taken)


def vscode(table: set[str], root: Path = VSCODE) -> Client:
    """The VS Code extension's contributed commands and what they reach."""
    manifest = json.loads((root / "package.json").read_text(encoding="utf-8"))
    declared = [c["command"] for c in manifest["contributes"]["commands"]]
    functions: dict[str, list[Function]] = {}
    registrations: dict[str, Function] = {}
    literals: set[str] = set()
    for path in sorted((root / "src").rglob("*.ts")):
        lines = path.read_text(encoding="utf-8").splitlines()
        literals |= _literals("\n".join(lines)) & table
        for number, line in enumerate(lines):
            found = TS_DEFINITION.match(line)
            # functions and class methods; nested ones are in their parent's body
            top = len(line) - len(line.lstrip()) <= TS_MEMBER_INDENT
            if found and top and found.group(1) not in TS_KEYWORDS:
                body = _block(lines, number, TS_END)
                functions.setdefault(found.group(1), []).append(_ts_function(body))
            for command in declared:
                if re.search(rf"""["']{re.escape(command)}["']\s*,""", line):
                    registrations[command] = _ts_function(_statement(lines, number))
    reached = credit(registrations, functions, table)
    return Client({c: reached.get(c, {}) for c in declared}, literals)


# ---- Neovim (Lua) -----------------------------------------------------------------

LUA_DEFINITION = re.compile(
    r"^\s*(?:local\s+)?function\s+(?:([\w]+)[.:])?(\w+)\s*\(|^\s*(?:M|\w+)\.(\w+)\s*=\s*function\s*\("
)
LUA_USER_COMMAND = re.compile(
    r"""(?:nvim_create_user_command|\bcommand)\(\s*['"](Remora\w*)['"]"""
)
LUA_REQUIRE_CALL = re.compile(r"""require\(\s*['"]remora\.(\w+)['"]\s*\)\.(\w+)\s*\(""")
LUA_QUALIFIED_CALL = re.compile(r"\b(\w+)\.(\w+)\b")
"""A call of, or a reference to (a callback), ``module.f``."""
LUA_CALL = re.compile(r"(?<![.:\w])(\w+)\s*\(")
LUA_END = re.compile(r"^end\b")


def _lua_function(text: str, module: str, modules: set[str]) -> Function:
    calls = {f"{m}.{f}" for m, f in LUA_REQUIRE_CALL.findall(text)}
    for owner, name in LUA_QUALIFIED_CALL.findall(text):
        if owner == "M":
            calls.add(f"{module}.{name}")
        elif owner in modules:
            calls.add(f"{owner}.{name}")
    calls |= {f"{module}.{name}" for name in LUA_CALL.findall(text)}
    return Function(_literals(text), calls)


def neovim(table: set[str], root: Path = NVIM) -> Client:
    """The Neovim plugin's ``:Remora…`` commands and what they reach."""
    paths = sorted((root / "lua").rglob("*.lua"))
    modules = {p.stem for p in paths}
    functions: dict[str, list[Function]] = {}
    commands: dict[str, Function] = {}
    literals: set[str] = set()
    for path in paths:
        module = path.stem
        lines = path.read_text(encoding="utf-8").splitlines()
        literals |= _literals("\n".join(lines)) & table
        for number, line in enumerate(lines):
            found = LUA_DEFINITION.match(line)
            if found and not line[0].isspace():  # nested ones are in their parent
                name = found.group(2) or found.group(3)
                body = _lua_function(_block(lines, number, LUA_END), module, modules)
                functions.setdefault(f"{module}.{name}", []).append(body)
            for name in LUA_USER_COMMAND.findall(line):
                handler = _block(lines, number, LUA_END)
                commands[f":{name}"] = _lua_function(handler, module, modules)
    return Client(credit(commands, functions, table), literals)


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
