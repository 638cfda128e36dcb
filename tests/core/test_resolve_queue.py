"""Start-up resolves a file as soon as the files it names are parsed.

Whatever order the parsed files arrive in, the edges must be exactly those of
resolving every file once all of them are in the graph (what start-up did
before): the callers and callees hover shows cannot depend on which worker
finished first. Projects are generated: packages and modules that import each
other in every spelling the resolver follows (plain, dotted, aliased, ``from``
with names, submodules and relative levels), call through those bindings and
attribute chains (``pkg.sub.mod.Klass.method``), import in cycles, and lose a
module that turns out unreadable while the others are parsed.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from remora_core.config import validate
from remora_core.discovery.extract import extract_source
from remora_core.index.code_index import CodeIndex
from remora_core.index.resolve import FileResolver, module_name
from remora_core.index.resolve_queue import ResolveQueue, parse_order

MODULES = [
    "app.py",
    "tools.py",
    "pkg/__init__.py",
    "pkg/core.py",
    "pkg/sub/__init__.py",
    "pkg/sub/deep.py",
    "test_app.py",
]


def _source(path: str, imports: list[tuple[str, str]], calls: list[str]) -> str:
    """A module with two functions and a class; its functions call ``calls``."""
    lines = [statement for statement, _ in imports]
    body = "\n".join(f"    {call}" for call in calls) or "    pass"
    lines += [
        "",
        "def helper(x):",
        "    return x",
        "",
        "class Klass:",
        "    def method(self):",
        "        return self.other()",
        "",
        "    def other(self):",
        "        return helper(1)",
        "",
        "def run():",
        body,
        "    return Klass().method()",
    ]
    return "\n".join(lines) + "\n"


def _import_choices(path: str) -> list[tuple[str, str]]:
    """Import statements ``path`` may contain, each with the call it enables."""
    choices = []
    for other in MODULES:
        if other == path:
            continue
        name = module_name(other)
        head = name.split(".")[0]
        choices += [
            (f"import {name}", f"{name}.helper(1)"),
            (f"import {name}", f"{name}.Klass.method(None)"),
            (f"import {name} as alias_{head}", f"alias_{head}.helper(2)"),
        ]
        if "." in name:
            package, last = name.rsplit(".", 1)
            choices += [
                (f"from {package} import {last}", f"{last}.Klass().method()"),
                (f"from {name} import helper as h_{last}", f"h_{last}(3)"),
                (f"import {package}", f"{name}.helper(4)"),
            ]
        else:
            choices.append((f"from {name} import Klass as K_{name}", f"K_{name}()"))
    if path.startswith("pkg/"):
        choices += [
            ("from . import core", "core.helper(5)"),
            ("from .core import Klass as Core", "Core().other()"),
            ("from .. import tools", "tools.helper(6)"),
        ]
    return choices


@st.composite
def projects(draw):
    """Sources of every module, the arrival order, and a module lost midway."""
    sources = {}
    for path in MODULES:
        chosen = draw(st.lists(st.sampled_from(_import_choices(path)), max_size=6))
        sources[path] = _source(path, chosen, [call for _, call in chosen])
    order = draw(st.permutations(MODULES))
    lost = draw(st.none() | st.sampled_from(MODULES))
    return sources, order, lost


def _reference_edges(index: CodeIndex, parsed) -> dict[str, set]:
    """Every file resolved again now that everything is in."""
    return {
        path: set(
            FileResolver(
                extraction, ids, index.graph.file_ids[path], index.graph, index.modules
            ).edges()
        )
        for path, (extraction, ids) in parsed.items()
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(projects())
def test_files_resolved_on_arrival_get_the_edges_of_resolving_at_the_end(project):
    sources, order, lost = project
    index = CodeIndex(None, validate({})[0])
    queue = ResolveQueue(index, parse_order(list(sources)))
    parsed = {}
    for path in order:
        if path == lost:  # unreadable after all: never in the graph
            index.skip(path, "not valid UTF-8")
            queue.skipped(path, in_editor=False)
        else:
            extraction = extract_source(
                path, sources[path].encode(), read_inline_ids=False
            )
            update = index.apply(path, extraction, resolve=False)
            parsed[path] = (extraction, update.ids)
            queue.parsed(path, extraction, update.ids)
        queue.resolve_ready()
    for path, extraction, ids in queue.left():
        index.resolve(path, extraction, ids)

    expected = _reference_edges(index, parsed)
    assert {path: set(index.graph.file_edges(path)) for path in parsed} == expected


def test_a_file_waits_for_the_module_its_attribute_chain_goes_through():
    """``import pkg`` … ``pkg.core.helper()``: the import names only ``pkg``,
    the chain needs ``pkg/core.py`` too; resolved before that arrives, the
    call would have no edge.
    """
    sources = {
        "pkg/__init__.py": '"""The package."""\n',
        "pkg/core.py": "def helper(x):\n    return x\n",
        "app.py": "import pkg\n\ndef run():\n    return pkg.core.helper(1)\n",
    }
    index = CodeIndex(None, validate({})[0])
    queue = ResolveQueue(index, list(sources))
    resolved = []
    for path in ["pkg/__init__.py", "app.py", "pkg/core.py"]:
        extraction = extract_source(path, sources[path].encode(), read_inline_ids=False)
        update = index.apply(path, extraction, resolve=False)
        queue.parsed(path, extraction, update.ids)
        resolved.append(queue.resolve_ready())
    assert "app.py" not in resolved[1], "app.py resolved before pkg/core.py was in"
    assert "app.py" in resolved[2]
    (run,) = [n for n in index.graph.file_nodes("app.py") if n.name == "run"]
    assert [n.qualified_name for n in index.graph.callees(run.id)] == ["helper"]


def test_libraries_are_parsed_before_the_tests_that_import_them():
    paths = [
        "test_app.py",
        "pkg/sub/deep.py",
        "app.py",
        "pkg/__init__.py",
        "tests/conftest.py",
    ]
    assert parse_order(paths) == [
        "pkg/__init__.py",
        "app.py",
        "pkg/sub/deep.py",
        "test_app.py",
        "tests/conftest.py",
    ]
