"""Resolving files' edges while start-up is still parsing the others.

A file's ``calls`` and ``imports`` edges need the files of the modules it names
(``resolve.py``), so the first index of a project used to parse every file and
only then resolve every file: on a big project that last second ran on one
core while the parsing workers sat idle. Now a file is resolved as soon as
the files its imports name are in the graph (:func:`imported_files`), while
the rest are still being parsed. An attribute chain through a module that is
still pending (``import a`` … ``a.b.f()``) makes an attempt provisional
(:attr:`FileResolver.waited_on`): the file then waits for that file as well.
What is left when the last file is in is resolved then, as before.

Every file to parse is put in the ``ModuleMap`` first (the scan listed them), so
"is this a module of the project" has its final answer from the start. A file
that turns out unreadable while parsing (binary, huge, not UTF-8: on a first
index only the parsers read the files) leaves the map; the files resolved
before that whose imports name it, a module inside it or a package around it
(:func:`names_module`) are then resolved again at the end. Cycles between
modules cannot block: a file only ever waits for files not parsed yet, and
every one of them arrives.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from remora_core.index.resolve import imported_files, imported_names, module_name

if TYPE_CHECKING:
    from remora_core.discovery import FileExtraction
    from remora_core.index.code_index import CodeIndex
    from remora_core.index.resolve import ModuleMap


def parse_order(paths: list[str]) -> list[str]:
    """``paths`` in the order that lets files resolve soonest: what others
    import first (packages' ``__init__`` files, then shallow modules), test
    files (``test_*.py``, ``*_test.py``, ``conftest.py``: nobody imports them)
    last.
    """

    def key(path: str) -> tuple[bool, bool, int, str]:
        name = path.rsplit("/", 1)[-1]
        test = name.startswith("test_") or name.endswith(
            ("_test.py", "_test.pyi", "conftest.py")
        )
        package = name in ("__init__.py", "__init__.pyi")
        return (test, not package, path.count("/"), path)

    return sorted(paths, key=key)


class ResolveQueue:
    """Files parsed at start-up, resolved as soon as what they need is in."""

    def __init__(self, index: CodeIndex, paths: list[str]) -> None:
        self.index = index
        self.pending = set(paths)
        """Files whose parse has not arrived yet."""
        self._parsed: dict[str, tuple[FileExtraction, list[str]]] = {}
        """Parsed files: their extraction and node ids."""
        self._unresolved: set[str] = set()
        self._waiters: dict[str, list[str]] = defaultdict(list)
        """Pending file → parsed files waiting for it."""
        self._missing: dict[str, int] = {}
        """Parsed file → how many pending files it still waits for."""
        self._ready: list[str] = []
        self.early: list[str] = []
        """Files resolved before the last one arrived."""
        self._lost_modules: list[str] = []
        """Dotted names of the files that left the module map meanwhile."""
        for path in paths:
            index.modules.add(path)

    def parsed(self, path: str, extraction: FileExtraction, ids: list[str]) -> None:
        """``path`` was parsed and applied to the graph (edges not resolved)."""
        self._parsed[path] = (extraction, ids)
        self._unresolved.add(path)
        self._ready.append(path)
        self._arrived(path)

    def skipped(self, path: str, *, in_editor: bool) -> None:
        """``path`` will not be applied: open in the editor (its buffer is in
        the graph), or not indexed after all (unreadable: no module any more).
        """
        if not in_editor:
            self.index.modules.remove(path)
            if name := module_name(path):
                self._lost_modules.append(name)
        self._arrived(path)

    def _arrived(self, path: str) -> None:
        self.pending.discard(path)
        for waiter in self._waiters.pop(path, ()):
            self._missing[waiter] -= 1
            if self._missing[waiter] == 0:
                del self._missing[waiter]
                self._ready.append(waiter)

    def resolve_ready(self) -> list[str]:
        """Resolve every parsed file whose needs are in; return those resolved."""
        index = self.index
        resolved = []
        ready, self._ready = self._ready, []
        for path in ready:
            extraction, ids = self._parsed[path]
            if path in index.documents:  # opened meanwhile: its buffer rules
                self._unresolved.discard(path)
                continue
            needs = imported_files(path, extraction, index.modules) & self.pending
            if not needs:
                needs = index.resolve(path, extraction, ids, self.pending)
            if needs:
                self._wait(path, needs)
                continue
            index.settle(path, extraction.content_hash)
            self._unresolved.discard(path)
            resolved.append(path)
        self.early += resolved
        return resolved

    def _wait(self, path: str, needs: set[str]) -> None:
        self._missing[path] = len(needs)
        for need in needs:
            self._waiters[need].append(path)

    def left(self) -> list[tuple[str, FileExtraction, list[str]]]:
        """Once every file arrived: the files still to resolve (nothing is
        pending any more), and the files resolved before a module was lost
        whose imports name it (they may have counted on it).
        """
        assert not self.pending, "files are still being parsed"
        again = set(self._unresolved)
        if self._lost_modules:
            modules = self.index.modules
            lost = LostModules(self._lost_modules)
            for path in self.early:
                extraction = self._parsed[path][0]
                if lost.named_by(path, extraction, modules):
                    again.add(path)
        return [(path, *self._parsed[path]) for path in self._parsed if path in again]


class LostModules:
    """Dotted names of modules that left the module map while indexing."""

    def __init__(self, names: list[str]) -> None:
        self.names = set(names)
        self.packages = {
            name[:dot] for name in names for dot, ch in enumerate(name) if ch == "."
        }
        """The packages around them (``a`` and ``a.b`` for ``a.b.c``)."""

    def named_by(
        self, path: str, extraction: FileExtraction, modules: ModuleMap
    ) -> bool:
        """Whether an import of ``path`` names one of these modules, a module
        inside one, or a package holding one: what its resolution may have
        looked at (an attribute chain ``a.b.f()`` after ``import a`` goes
        through ``a.b``; a star import through the package's own file).

        Set lookups, one per dotted prefix of each imported name: comparing
        every name with every lost module took 0.05 s of the one-core tail of
        a first index at 1.7 M lines (eight files refused by the parsers).
        """
        names, packages = self.names, self.packages
        for name in imported_names(path, extraction, modules):
            if name in packages:  # holds a lost module
                return True
            while name:  # the module, or one around it, was lost
                if name in names:
                    return True
                name = name.rpartition(".")[0]
        return False
