"""``.pym`` tool scripts, run in the pydantic-monty sandbox (DESIGN §8, bundles).

A ``.pym`` file is one agent tool written in the Python subset monty runs::

    \"\"\"Count the lines of a node.\"\"\"          # docstring: the tool's description
    from remora import Input, external          # declarations, never executed

    node_id: str = Input(description="the node to inspect")
    limit: int = Input(default=10, description="at most this many")

    @external
    async def read_node(node_id: str) -> str: ...

    source = await read_node(node_id)
    {"lines": len(source.splitlines())}         # the last expression is the result

What the script prints is captured into ``PymResult.printed``, never written out.

- Name: the file stem; description: the module docstring.
- ``name: T = Input(default=..., description=...)`` declares a parameter (``T`` one
  of ``str int float bool list dict``, literal values, no default = required);
  together they make the JSON schema. ``null`` for an argument means its default.
- ``@external async def f(...): ...`` declares a host function, always awaited; only
  declared ones are reachable. A host function's exception is raised *inside* the
  sandbox (``PathRefused`` as ``ValueError``), so a script may catch it; uncaught,
  it becomes a :class:`PymError` naming the file and line, like any error.
- No imports besides the declaration line, no ``exec eval compile __import__``
  (refused by :meth:`PymTool.load`); every OS call (``open``, ``pathlib``, ``os``)
  is refused at run time and nothing is mounted. The result must be JSON data.

Declarations are blanked out line by line before monty sees the script, so monty's
line numbers are the ``.pym`` file's. Limits are monty's own: ``timeout_s`` of
sandbox execution per run (time inside host functions does not count; ``sleep``
draws on a budget of the same size), ``max_memory`` of heap, 1 MiB of print.
Scripts run in a pool of ``monty`` worker processes whose stdin/stdout are the
pool's pipes and whose stderr is ours (the log); ``print`` is always collected.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    import pydantic_monty as monty

logger = logging.getLogger(__name__)

_TYPES: dict[str, tuple[str, type | tuple[type, ...], str]] = {
    "str": ("string", str, "a string"),
    "int": ("integer", int, "an integer"),
    "float": ("number", (int, float), "a number"),
    "bool": ("boolean", bool, "true or false"),
    "list": ("array", list, "a list"),
    "dict": ("object", dict, "an object"),
}
_JSON_TYPES = {schema: (kind, what) for schema, kind, what in _TYPES.values()}
_FORBIDDEN_CALLS = {"exec", "eval", "compile", "__import__"}
_PRINT_LIMIT = 2**20
# monty's tokio threads may still call into Python just after the pool closes; a
# process exiting then aborts (pydantic-monty 1.4.0), so close() waits this long.
_SETTLE_S = 0.05


class PymError(Exception):
    """A bad ``.pym`` file, bad arguments or a failed run; the message is for models."""


@dataclass(frozen=True)
class PymResult:
    """What a run produced: the last expression's value and everything printed."""

    value: Any
    printed: str


@dataclass(frozen=True)
class PymTool:
    """One ``.pym`` tool, checked and ready to run (see the module docstring)."""

    name: str  # the file stem
    description: str  # the module docstring
    parameters: dict[str, Any]  # JSON schema object from the Input() declarations
    externals: tuple[str, ...]  # the @external host functions it may call
    path: Path
    source: str
    code: str  # ``source`` with the declarations blanked out, for monty

    @classmethod
    def load(cls, path: Path) -> PymTool:
        """Read and check ``path``; :class:`PymError` names the file and line."""
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise PymError(f"{path.name}: cannot read the tool: {error}") from None
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", path.stem):
            raise PymError(f"{path.name}: name a tool with letters, digits, _ or -")
        return _parse(path, source)


def _fail(path: Path, node: ast.AST | int, message: str) -> PymError:
    line = node if isinstance(node, int) else getattr(node, "lineno", 1)
    return PymError(f"{path.name}, line {line}: {message}")


def _parse(path: Path, source: str) -> PymTool:
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    try:
        tree = compile(source, path.name, "exec", flags=flags, dont_inherit=True)
    except SyntaxError as error:
        raise _fail(path, error.lineno or 1, f"syntax error: {error.msg}") from None
    description = ast.get_docstring(tree)
    if not description:
        raise _fail(path, 1, "start with a docstring saying what the tool does")
    _check_forbidden(path, tree)
    properties: dict[str, Any] = {}
    externals: list[str] = []
    blank: dict[int, tuple[int, int]] = {}  # id(declaration) → its first, last line
    for index, stmt in enumerate(tree.body):
        start, end = stmt.lineno, stmt.end_lineno or stmt.lineno
        if parameter := _parameter(path, stmt):
            properties[parameter[0]] = parameter[1]
        elif external := _external(path, stmt):
            externals.append(external[0])
            start = external[1]
        elif index and not _declares(stmt):  # index 0: the docstring
            continue
        blank[id(stmt)] = (start, end)
    if clash := set(properties) & set(externals):
        raise _fail(path, 1, f"{clash.pop()!r} is both a parameter and an external")
    lines = source.splitlines()
    for stmt in tree.body:  # blanking must not remove a neighbour after a `;`
        end = stmt.end_lineno or stmt.lineno
        if id(stmt) not in blank and any(
            stmt.lineno <= last and end >= first for first, last in blank.values()
        ):
            raise _fail(path, stmt, "put each declaration on lines of its own")
    for first, last in blank.values():
        lines[first - 1 : last] = [""] * (last - first + 1)
    required = [name for name, schema in properties.items() if "default" not in schema]
    return PymTool(
        name=path.stem,
        description=description,
        parameters={
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
        externals=tuple(externals),
        path=path,
        source=source,
        code="\n".join(lines) + "\n",
    )


def _check_forbidden(path: Path, tree: ast.Module) -> None:
    """Refuse imports (but the declaration line) and dynamic code."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and not _declares(node):
            module = getattr(node, "module", None) or node.names[0].name
            raise _fail(
                path,
                node,
                f"cannot import {module}: a .pym tool has no modules (only `from "
                "remora import Input, external`); ask the host through an @external",
            )
        if isinstance(node, ast.Name) and node.id in _FORBIDDEN_CALLS:
            raise _fail(path, node, f"{node.id}() is not allowed in a .pym tool")


def _declares(node: ast.AST) -> bool:
    """Whether ``node`` is a top-level ``from remora import Input, external``."""
    return (
        isinstance(node, ast.ImportFrom)
        and node.module == "remora"
        and not node.level
        and node.col_offset == 0
        and all(a.name in {"Input", "external"} and not a.asname for a in node.names)
    )


def _parameter(path: Path, stmt: ast.stmt) -> tuple[str, dict[str, Any]] | None:
    """The name and JSON schema of an ``Input()`` declaration, else ``None``."""
    call = getattr(stmt, "value", None)
    if not isinstance(call, ast.Call) or getattr(call.func, "id", "") != "Input":
        return None
    if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
        raise _fail(path, stmt, "declare a parameter as `name: type = Input(...)`")
    annotation = stmt.annotation
    if isinstance(annotation, ast.Subscript):  # list[str] → list
        annotation = annotation.value
    type_name = getattr(annotation, "id", "")
    if type_name not in _TYPES:
        raise _fail(path, stmt, f"give a parameter a type: {', '.join(_TYPES)}")
    schema: dict[str, Any] = {"type": _TYPES[type_name][0]}
    for keyword in call.keywords:
        if call.args or keyword.arg not in {"default", "description"}:
            raise _fail(path, stmt, "Input() takes default=... and description=...")
        try:
            schema[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:
            raise _fail(path, keyword, f"{keyword.arg}= must be a literal") from None
    name = stmt.target.id
    if schema.get("default") is not None and (
        problem := _type_problem(name, schema, schema["default"])
    ):
        raise _fail(path, stmt, f"the default of {problem}")
    return name, schema


def _external(path: Path, stmt: ast.stmt) -> tuple[str, int] | None:
    """The name and first line of an ``@external`` stub, else ``None``."""
    decorators = getattr(stmt, "decorator_list", [])
    if not any(getattr(d, "id", "") == "external" for d in decorators):
        return None
    if not isinstance(stmt, ast.AsyncFunctionDef):
        raise _fail(path, stmt, "declare an @external function with `async def`")
    if len(decorators) != 1:
        raise _fail(path, stmt, "an @external function takes no other decorator")
    if any(not isinstance(s, ast.Expr) for s in stmt.body):
        raise _fail(path, stmt, "the host implements @external functions: write ...")
    return stmt.name, decorators[0].lineno


def _type_problem(name: str, schema: dict[str, Any], value: Any) -> str | None:
    """Why ``value`` does not fit the parameter ``name``, or ``None``."""
    kind, what = _JSON_TYPES[schema["type"]]
    if isinstance(value, kind) and isinstance(value, bool) == (kind is bool):
        return None
    return f"{name!r} must be {what}, not {type(value).__name__} {value!r:.40}"


def _bind(tool: PymTool, arguments: dict[str, Any]) -> dict[str, Any]:
    """The script's inputs: ``arguments`` checked, defaults for absent or null ones."""
    properties = tool.parameters["properties"]
    if unknown := sorted(set(arguments) - set(properties)):
        takes = ", ".join(properties) or "no arguments"
        raise PymError(f"{tool.name}: unknown argument {unknown[0]!r}; takes {takes}")
    inputs: dict[str, Any] = {}
    for name, schema in properties.items():
        value = arguments.get(name)
        if value is None and "default" in schema:
            inputs[name] = schema["default"]
        elif value is None:
            about = f" ({schema['description']})" if "description" in schema else ""
            raise PymError(f"{tool.name}: missing required argument {name!r}{about}")
        elif problem := _type_problem(name, schema, value):
            raise PymError(f"{tool.name}: argument {problem}")
        else:
            number = schema["type"] == "number" and isinstance(value, int)
            inputs[name] = float(value) if number else value
    return inputs


def _host(name: str, function: Callable[..., Any] | None) -> Callable[..., Any]:
    """An async host function for the sandbox; awaits ``function`` if it is async."""

    async def call(*args: Any, **kwargs: Any) -> Any:
        if function is None:
            raise NameError(f"the host provides no function {name!r} here")
        logger.debug("pym external %s%r", name, args)
        result = function(*args, **kwargs)
        return (await result) if inspect.isawaitable(result) else result

    return call


def _deny_os(*, name: str, **_: Any) -> Any:
    """The ``os=`` handler: every file, network or OS call monty would make."""
    raise PermissionError(
        f"{name}() is not available: a .pym tool has no access to files, the "
        "network or the OS; ask the host through an @external function"
    )


def _jsonable(tool: PymTool, value: Any) -> Any:
    """``value`` as JSON data (tuples become lists), or :class:`PymError`."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as error:
        raise PymError(
            f"{tool.path.name}: the result must be JSON-compatible: {error}"
        ) from None


def _monty():  # no annotation: the type checker infers the module itself
    """pydantic-monty, imported on the first run (or with the agents' kernel,
    which the preload imports off the editor's path): its native module was
    ~15 ms of every server start, and most sessions run no ``.pym`` tool.
    """
    import pydantic_monty

    return pydantic_monty


class Sandbox:
    """Runs :class:`PymTool` scripts in monty worker processes, within limits.

    The worker pool starts on the first run; :meth:`close` stops it.
    """

    def __init__(self, *, timeout_s: float = 5.0, max_memory: int = 64 * 2**20):
        self.timeout_s = timeout_s
        self.max_memory = max_memory
        self._pool: monty.AsyncMonty | None = None
        self._starting = asyncio.Lock()
        self._closed = False

    async def run(
        self,
        tool: PymTool,
        arguments: dict[str, Any],
        externals: dict[str, Callable[..., Any]],
    ) -> PymResult:
        """Run ``tool``; :class:`PymError` for bad arguments or a failed run."""
        monty = _monty()
        inputs = _bind(tool, arguments)
        lookup = {name: _host(name, externals.get(name)) for name in tool.externals}
        printed = monty.CollectString(max_bytes=_PRINT_LIMIT)
        limits: monty.ResourceLimits = {
            "max_feed_duration_secs": self.timeout_s,
            "max_total_sleep_secs": self.timeout_s,
            "max_memory": self.max_memory,
        }
        pool = await self._start()
        try:
            async with pool.checkout(script_name=tool.path.name, limits=limits) as run:
                value = await run.feed_run(
                    tool.code,
                    inputs=inputs,
                    external_lookup=lookup,
                    print_callback=printed,
                    os=_deny_os,
                )
        except monty.MontyError as error:
            raise self._error(tool, error, externals) from None
        return PymResult(_jsonable(tool, value), printed.output)

    def _error(
        self, tool: PymTool, error: monty.MontyError, externals: dict[str, Any]
    ) -> PymError:
        """The message for a failed run, naming the ``.pym`` file and line."""
        where = tool.path.name
        monty = _monty()
        traced = isinstance(error, monty.MontyRuntimeError | monty.MontySyntaxError)
        frames = error.traceback() if traced else []
        lines = [f.line for f in frames if f.filename.startswith("<python-input")]
        if lines:
            where += f", line {lines[-1]}"
        message = str(error)
        limit = re.search(r"memory limit exceeded: .* > (\d+) bytes", message)
        if "time limit exceeded" in message or getattr(error, "timed_out", False):
            message = f"took longer than {self.timeout_s:g} s"
        elif limit and int(limit[1]) == self.max_memory:
            message = f"used more than {self.max_memory / 2**20:g} MiB of memory"
        elif limit and int(limit[1]) == _PRINT_LIMIT:
            message = f"printed more than {_PRINT_LIMIT // 2**20} MiB"
        elif (name := re.search(r"name '(\w+)' is not def", message)) and (
            name[1] in externals
        ):
            message += f"; declare it with @external to call the host's {name[1]}"
        logger.debug("pym %s failed: %s", tool.name, error)
        return PymError(f"{where}: {message}")

    async def _start(self) -> monty.AsyncMonty:
        if self._closed:
            raise PymError("the sandbox is closed")
        async with self._starting:
            if self._pool is None:
                pool = _monty().AsyncMonty(min_processes=1, max_processes=4)
                await pool.__aenter__()
                self._pool = pool
                logger.info("pym sandbox: worker pool started")
            return self._pool

    async def close(self) -> None:
        """Stop the worker pool and its processes; later runs raise PymError."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.__aexit__(None, None, None)
            await asyncio.sleep(_SETTLE_S)
            logger.info("pym sandbox: worker pool stopped")
