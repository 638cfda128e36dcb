"""Extensions: ``.remora/models/*.py`` classes that customise matching agents.

A project file there may define subclasses of :class:`ExtensionNode`::

    from remora_core.agents.extensions import ExtensionNode, tool

    class ApiHandlers(ExtensionNode):
        match_type = "function"             # a node kind, or None for any
        match_pattern = "api.*.handle_*"    # fnmatch syntax, or None for any
        system_prompt = "Keep responses JSON."

        def get_workspaces(self) -> list[str]:
            return ["api/schemas.py"]

        @tool
        async def list_routes(self, prefix: str) -> list[str]:
            \"\"\"List the routes that start with prefix.\"\"\"
            ...

``match_pattern`` is tried against the node's qualified name (``Cls.method``),
its dotted module path (``api.users.Cls.method``) and ``path::qualified_name``
(``api/users.py::Cls.method``). Each ``@tool`` method becomes a plain
pydantic-ai tool: its type hints are the parameters, its docstring the
description.

The files are the user's own project code: they are executed with importlib
under a unique module name (as pytest does with ``conftest.py``), once per
change of the file, and every class is instantiated once per load (its instance
serves every matching node). A file that fails, or a class that cannot be used,
is reported once per change of that file and skipped; the others keep working.
Being the repository's code, they are loaded only in a trusted project
(``trust.py``): an untrusted project has no extensions.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import logging
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from remora_core.agents.bundles import CORE_TOOLS
from remora_core.globs import name_matches
from remora_core.model import CodeNode, NodeKind

log = logging.getLogger(__name__)

_MARK = "__remora_tool__"
_F = TypeVar("_F", bound=Callable[..., Any])


def tool(function: _F) -> _F:
    """Mark a method of an :class:`ExtensionNode` as a tool for its agents."""
    setattr(function, _MARK, True)
    return function


class ExtensionNode:
    """Base class of project extensions; subclass it in ``.remora/models/*.py``."""

    match_type: ClassVar[str | None] = None
    """The node kind this extension applies to (``function``, ...), None = any."""
    match_pattern: ClassVar[str | None] = None
    """An fnmatch pattern for the node's name (see the module docs), None = any."""
    system_prompt: ClassVar[str] = ""
    """Instructions appended to the matching agents' system prompts."""

    def get_workspaces(self) -> list[str]:
        """Project paths the matching agents may read and write in their overlay."""
        return []

    def tools(self) -> list[Callable[..., Any]]:
        """The bound methods marked with :func:`tool`, in definition order."""
        names: dict[str, None] = {}
        for klass in reversed(type(self).__mro__):
            for name, value in vars(klass).items():
                if getattr(value, _MARK, False):
                    names[name] = None
        return [getattr(self, name) for name in names]

    def matches(self, node: CodeNode) -> bool:
        """Whether this extension applies to ``node``."""
        if self.match_type is not None and node.kind.value != self.match_type:
            return False
        if self.match_pattern is None:
            return True
        return any(name_matches(name, self.match_pattern) for name in _names(node))


def _names(node: CodeNode) -> tuple[str, ...]:
    """The spellings of a node's name that ``match_pattern`` is tried against."""
    module = node.file_path.rsplit(".", 1)[0].replace("/", ".")
    module = module.removesuffix(".__init__")
    if node.kind is NodeKind.FILE:
        return (node.qualified_name, module, node.file_path)
    return (
        node.qualified_name,
        f"{module}.{node.qualified_name}",
        f"{node.file_path}::{node.qualified_name}",
    )


@dataclass
class _Loaded:
    """One extension file as last loaded."""

    signature: tuple[int, int]
    module_name: str | None
    instances: list[ExtensionNode] = field(default_factory=list)


class ExtensionRegistry:
    """The extensions of one project, reloaded when their files change."""

    def __init__(
        self,
        root: Path | None,
        notify: Callable[[str], None] | None = None,
        *,
        trusted: bool = False,
    ) -> None:
        self._directory = (
            root / ".remora" / "models" if root is not None and trusted else None
        )
        """None: no extensions (no root, or the repository is not trusted)."""
        self._notify = notify
        self._files: dict[Path, _Loaded] = {}
        self._loads = 0

    def matching(self, node: CodeNode) -> list[ExtensionNode]:
        """The extensions that apply to ``node``, by file name then definition."""
        self.refresh()
        return [
            instance
            for path in sorted(self._files)
            for instance in self._files[path].instances
            if instance.matches(node)
        ]

    def refresh(self) -> None:
        """Load new and changed files, forget deleted ones (one ``stat`` each)."""
        found: dict[Path, tuple[int, int]] = {}
        if self._directory is not None and self._directory.is_dir():
            for path in self._directory.glob("*.py"):
                try:
                    stat = path.stat()
                except OSError:
                    continue
                found[path] = (stat.st_mtime_ns, stat.st_size)
        for path in set(self._files) - set(found):
            self._forget(path)
            log.info("extension file %s removed", path)
        for path, signature in found.items():
            loaded = self._files.get(path)
            if loaded is None or loaded.signature != signature:
                if loaded is not None:
                    self._forget(path)
                self._files[path] = self._load(path, signature)

    def _shown(self, path: Path) -> str:
        """``path`` as the user knows it: relative to the project root."""
        root = self._directory.parent.parent if self._directory else None
        try:
            return path.relative_to(root).as_posix() if root else str(path)
        except ValueError:
            return str(path)

    def _forget(self, path: Path) -> None:
        loaded = self._files.pop(path, None)
        if loaded is not None and loaded.module_name is not None:
            sys.modules.pop(loaded.module_name, None)

    def _load(self, path: Path, signature: tuple[int, int]) -> _Loaded:
        """Execute one file and instantiate its extension classes."""
        self._loads += 1
        digest = hashlib.sha1(str(path).encode(), usedforsecurity=False).hexdigest()
        name = f"remora_extension_{path.stem}_{digest[:8]}_{self._loads}"
        loaded = _Loaded(signature, None)
        try:
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module  # dataclasses and pickling look it up
            loaded.module_name = name
            spec.loader.exec_module(module)
        except (Exception, SystemExit) as error:
            self._problem(path, error)
            return loaded
        for klass in _extension_classes(module):
            try:
                _check(klass)
                instance = klass()
                instance.tools()
            except (Exception, SystemExit) as error:
                self._problem(path, error, klass)
                continue
            loaded.instances.append(instance)
        log.info("loaded %d extension(s) from %s", len(loaded.instances), path)
        return loaded

    def _problem(
        self, path: Path, error: BaseException, klass: type | None = None
    ) -> None:
        """Report a failed file or class once (a later change reloads it)."""
        where = f"{self._shown(path)}, line {_line(path, error, klass)}"
        what = f"class {klass.__name__}: " if klass is not None else ""
        message = (
            f"Remora: extension {where}: {what}{type(error).__name__}: "
            f"{_text(error)}; skipped"
        )
        log.warning("%s", message)
        if self._notify is not None:
            try:
                self._notify(message)
            except Exception:
                log.exception("notify failed")


def _extension_classes(module: Any) -> list[type[ExtensionNode]]:
    """The :class:`ExtensionNode` subclasses defined in ``module``, in order."""
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, ExtensionNode)
        and value is not ExtensionNode
        and value.__module__ == module.__name__
    ]


def _check(klass: type[ExtensionNode]) -> None:
    """Refuse match fields and tools an extension cannot have."""
    kinds = [kind.value for kind in NodeKind]
    if klass.match_type is not None and klass.match_type not in kinds:
        raise ValueError(
            f"match_type must be one of {', '.join(kinds)} or None, "
            f"not {klass.match_type!r}"
        )
    if klass.match_pattern is not None and not isinstance(klass.match_pattern, str):
        raise ValueError(
            f"match_pattern must be a string or None, not {klass.match_pattern!r}"
        )
    if not isinstance(klass.system_prompt, str):
        raise ValueError("system_prompt must be a string")
    for name, value in inspect.getmembers(klass):
        if getattr(value, _MARK, False):
            if name in CORE_TOOLS:
                raise ValueError(f"tool {name!r} has the name of a core tool")
            if not callable(value):
                raise ValueError(f"@tool {name!r} is not a method")


def _line(path: Path, error: BaseException, klass: type | None) -> int | str:
    """The line of ``path`` where ``error`` happened, or where ``klass`` starts."""
    if isinstance(error, SyntaxError) and error.filename == str(path):
        return error.lineno or "?"
    frames = [
        f for f in traceback.extract_tb(error.__traceback__) if f.filename == str(path)
    ]
    if frames:
        return frames[-1].lineno or "?"
    if klass is not None:
        try:
            return inspect.getsourcelines(klass)[1]
        except (OSError, TypeError):
            pass
    return "?"


def _text(error: BaseException) -> str:
    """The error's message without the file and line already given."""
    if isinstance(error, SyntaxError):
        return error.msg
    return str(error)
