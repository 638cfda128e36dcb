"""Turning a file's raw call sites and imports into ``calls`` and ``imports`` edges.

Name resolution is deliberately simple and predictable (no type inference):

- modules are named by their path from the project root (``pkg/mod.py`` is
  ``pkg.mod``, ``pkg/__init__.py`` is ``pkg``); a leading ``src/`` is dropped,
  as in the common src layout;
- a bare name ``f()`` is looked up as Python scopes it: definitions local to the
  enclosing functions (innermost first; a class body only for code directly in
  it), then the module's top level, then names bound by imports;
- ``self.m()`` / ``cls.m()`` inside a method look up ``m`` in the enclosing class;
- ``a.b.c()`` resolves ``a`` as above, then walks attributes through modules
  (sub-modules and top-level definitions) and classes (their members).

A call that names something outside the project, or something only known at
run time, produces no edge.

Everything a file's edges depend on outside the file is reached through the
files of the modules it names (``FileResolver._file_id_unless_pending``):
start-up uses that to resolve a file as soon as those files are in the graph,
while others are still being parsed (``resolve_queue.py``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Container, Iterator
from typing import TYPE_CHECKING, NamedTuple

from remora_core.model import Edge, EdgeKind, NodeKind

if TYPE_CHECKING:
    from remora_core.discovery.extract import FileExtraction
    from remora_core.discovery.references import ImportRef
    from remora_core.index.codegraph import CodeGraph


def module_name(path: str) -> str:
    """Dotted module name of a project-relative ``.py``/``.pyi`` path."""
    parts = path.split("/")
    if parts and parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    last = parts[-1].rsplit(".", 1)[0]
    parts = parts[:-1] if last == "__init__" else [*parts[:-1], last]
    return ".".join(parts)


class ModuleMap:
    """Dotted module names ↔ project files; package prefixes are known too."""

    def __init__(self) -> None:
        self._files: dict[str, str] = {}
        self._packages: dict[str, int] = defaultdict(int)

    def add(self, path: str) -> None:
        """Register the file at ``path``."""
        name = module_name(path)
        if not name or self._files.get(name) == path:
            return
        # ``pkg/mod.py`` beats ``pkg/mod.pyi`` only by arriving first; both fine.
        self._files.setdefault(name, path)
        parts = name.split(".")
        for depth in range(1, len(parts)):
            self._packages[".".join(parts[:depth])] += 1

    def remove(self, path: str) -> None:
        """Forget the file at ``path``."""
        name = module_name(path)
        if self._files.get(name) == path:
            del self._files[name]
            parts = name.split(".")
            for depth in range(1, len(parts)):
                prefix = ".".join(parts[:depth])
                self._packages[prefix] -= 1
                if self._packages[prefix] <= 0:
                    del self._packages[prefix]

    def file(self, name: str) -> str | None:
        """Path of module ``name``, if it is a project file."""
        return self._files.get(name)

    def is_module(self, name: str) -> bool:
        """Whether ``name`` is a module or package of the project."""
        return name in self._files or name in self._packages

    def absolute(self, path: str, ref: ImportRef) -> str:
        """The absolute module an import in ``path`` refers to."""
        if ref.level == 0:
            return ref.module
        package = module_name(path).split(".")
        if not path.endswith(("__init__.py", "__init__.pyi")):
            package = package[:-1]
        base = package[: max(0, len(package) - (ref.level - 1))]
        return ".".join([*base, ref.module] if ref.module else base)


class _Target(NamedTuple):
    """A resolved name: a module (``node_id`` None) or a node.

    A named tuple: ``_member`` keys its answers by target, and a tuple hashes
    and compares in C (a frozen dataclass ran Python code for each, and for
    each field it set).
    """

    module: str | None
    node_id: str | None
    kind: NodeKind | None = None


_SELF_NAMES = frozenset({"self", "cls"})
"""Heads looked up in the class of the method they are called from."""


class FileResolver:
    """Resolves the references of one file against the project graph."""

    def __init__(
        self,
        extraction: FileExtraction,
        ids: list[str],
        file_id: str,
        graph: CodeGraph,
        modules: ModuleMap,
        pending: Container[str] = (),
    ) -> None:
        self.extraction = extraction
        self.ids = ids
        self.file_id = file_id
        self.graph = graph
        self.modules = modules
        self.pending = pending
        """Files not in the graph yet (start-up): consulting one makes the
        answer provisional."""
        self.waited_on: set[str] = set()
        """Pending files these edges needed: empty when they are final."""
        self.local: dict[tuple[int, str], list[int]] = defaultdict(list)
        for index, definition in enumerate(extraction.definitions):
            self.local[(definition.parent, definition.name)].append(index)
        self.local_names = {name for _scope, name in self.local}
        """Every name the file defines in any scope: most calls (``len``,
        ``isinstance``) name none, and skip the walk up the scopes."""
        self.index_of = {node_id: index for index, node_id in enumerate(ids)}
        self._locals: dict[int, _Target] = {}
        """``_local_target`` answers, by definition index."""
        self.bindings: dict[str, _Target] = {}
        self.import_targets: set[str] = set()
        self._members: dict[tuple[_Target, str], list[_Target]] = {}
        """``_member`` answers: ``self.save`` in ten methods is looked up once."""
        for ref in extraction.imports:
            self._bind(ref)

    def edges(self) -> list[Edge]:
        """``imports`` edges of the file and ``calls`` edges of its definitions."""
        edges = {
            Edge(self.file_id, target, EdgeKind.IMPORTS)
            for target in self.import_targets
            if target != self.file_id
        }
        # Call sites are unique per (owner, callee) (``extract_calls``); a
        # callee whose head no scope of the file defines (``len``, ``os.path.
        # join``) means the same from every owner: resolved once per file.
        local_names = self.local_names
        anywhere: dict[tuple[str, ...], list[_Target]] = {}
        for owner_index, parts in self.extraction.calls:
            head = parts[0]
            if head in local_names or (head in _SELF_NAMES and len(parts) > 1):
                targets = self._resolve_call(owner_index, parts)
            else:
                targets = anywhere.get(parts)
                if targets is None:
                    targets = anywhere[parts] = self._resolve_call(-1, parts)
            if not targets:
                continue
            owner = self.ids[owner_index] if owner_index >= 0 else self.file_id
            for target in targets:
                if target.node_id is not None and target.kind is not NodeKind.FILE:
                    edges.add(Edge(owner, target.node_id, EdgeKind.CALLS))
        return sorted(edges, key=lambda e: (e.kind, e.from_id, e.to_id))

    # ---- imports ---------------------------------------------------------------

    def _bind(self, ref: ImportRef) -> None:
        path = self.extraction.path
        module = self.modules.absolute(path, ref)
        self._note_import(module)
        if ref.name is None:  # ``import a.b`` binds ``a``; ``import a.b as c``, c
            bound = module if ref.binding != module.split(".")[0] else ref.binding
            if self.modules.is_module(bound):
                self.bindings[ref.binding] = _Target(bound, None)
            return
        if ref.name == "*":
            return
        submodule = f"{module}.{ref.name}" if module else ref.name
        if self.modules.is_module(submodule):
            self._note_import(submodule)
            self.bindings[ref.binding] = _Target(submodule, None)
            return
        found = self._module_member(module, ref.name)
        if found:
            self.bindings[ref.binding] = found[0]

    def _note_import(self, module: str) -> None:
        target = self.modules.file(module)
        if target is not None:
            file_id = self._file_id_unless_pending(target)
            if file_id is not None:
                self.import_targets.add(file_id)

    # ---- calls -----------------------------------------------------------------

    def _resolve_call(self, owner: int, parts: tuple[str, ...]) -> list[_Target]:
        head, rest = parts[0], parts[1:]
        if head in _SELF_NAMES and rest:
            klass = self._enclosing_class(owner)
            current = [self._local_target(klass)] if klass is not None else []
        else:
            current = self._lookup(head, owner)
        for attribute in rest:
            current = [t for c in current for t in self._member(c, attribute)]
            if not current:
                break
        return current

    def _enclosing_class(self, owner: int) -> int | None:
        """The class a method (or a function nested in one) belongs to."""
        definitions = self.extraction.definitions
        index = owner
        while index >= 0:
            definition = definitions[index]
            if definition.kind is NodeKind.METHOD:
                return definition.parent
            index = definition.parent
        return None

    def _lookup(self, name: str, owner: int) -> list[_Target]:
        if name not in self.local_names:
            return self._imported(name)
        definitions = self.extraction.definitions
        index, first = owner, True
        while index >= 0:
            definition = definitions[index]
            if definition.kind is not NodeKind.CLASS or first:
                hits = self.local.get((index, name))
                if hits:
                    return [self._local_target(i) for i in hits]
            first = False
            index = definition.parent
        hits = self.local.get((-1, name))
        if hits:
            return [self._local_target(i) for i in hits]
        return self._imported(name)

    def _imported(self, name: str) -> list[_Target]:
        """What an import binds ``name`` to, if one does."""
        bound = self.bindings.get(name)
        return [bound] if bound else []

    def _local_target(self, index: int) -> _Target:
        target = self._locals.get(index)
        if target is None:
            kind = self.extraction.definitions[index].kind
            target = self._locals[index] = _Target(None, self.ids[index], kind)
        return target

    def _member(self, target: _Target, name: str) -> list[_Target]:
        key = (target, name)
        found = self._members.get(key)
        if found is None:
            found = self._members[key] = self._find_member(target, name)
        return found

    def _find_member(self, target: _Target, name: str) -> list[_Target]:
        if target.module is not None:
            submodule = f"{target.module}.{name}"
            if self.modules.is_module(submodule):
                return [_Target(submodule, None)]
            return self._module_member(target.module, name)
        if target.kind is not NodeKind.CLASS or target.node_id is None:
            return []
        local = self.index_of.get(target.node_id)
        if local is not None:
            return [self._local_target(i) for i in self.local.get((local, name), [])]
        return [
            _Target(None, child.id, child.kind)
            for child in self.graph.children_named(target.node_id, name)
        ]

    def _module_member(self, module: str, name: str) -> list[_Target]:
        path = self.modules.file(module)
        if path is None:
            return []
        if path == self.extraction.path:
            return [self._local_target(i) for i in self.local.get((-1, name), [])]
        file_id = self._file_id_unless_pending(path)
        if file_id is None:
            return []
        return [
            _Target(None, child.id, child.kind)
            for child in self.graph.children_named(file_id, name)
        ]

    def _file_id_unless_pending(self, path: str) -> str | None:
        """The file node of another project file, noting it if still pending."""
        if path in self.pending:
            self.waited_on.add(path)
            return None
        return self.graph.file_ids.get(path)


def imported_files(
    path: str, extraction: FileExtraction, modules: ModuleMap
) -> set[str]:
    """The project files ``path``'s imports name (their modules, and for
    ``from m import n`` the submodule ``m.n`` if it is one): what resolving it
    needs first, short of attribute chains through modules.
    """
    found = set()
    for name in imported_names(path, extraction, modules):
        target = modules.file(name)
        if target is not None and target != path:
            found.add(target)
    return found


def imported_names(
    path: str, extraction: FileExtraction, modules: ModuleMap
) -> Iterator[str]:
    """The dotted names ``path``'s imports name: each import's absolute
    module, and for ``from m import n`` also ``m.n`` (a submodule, perhaps).
    """
    for ref in extraction.imports:
        module = modules.absolute(path, ref)
        yield module
        if ref.name is not None and ref.name != "*":
            yield f"{module}.{ref.name}" if module else ref.name
