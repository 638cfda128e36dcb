"""``calls`` and ``imports`` edges of a real project.

These are what hover shows as callers and callees.
The project is a copy of ``tests/workspaces/basic`` started like the server
starts it (store, indexing, resolution); a few tests add a module to the copy
to reach call shapes the fixture does not have.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from remora_core.config import validate
from remora_core.discovery.references import ImportRef
from remora_core.index.resolve import ModuleMap, module_name
from remora_core.model import CodeNode, EdgeKind

from tests.project_harness import Project

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

EXTRA = '''\
"""Call shapes the basic fixture does not have."""

import pkg.models
import pkg.models as m
from pkg import models
from pkg.models import make_item


def via_package_attribute():
    return models.make_item("a")


def via_dotted_module():
    return pkg.models.make_item("b")


def via_alias():
    return m.Item("c", 1.0)


def via_class_member(item):
    return models.Item.total(item, 2)


def shadowed():
    def make_item(name):
        return name

    return make_item("local")


def unknown():
    return json.dumps(make_item)


module_level = make_item("at import time")
'''


@pytest.fixture
async def project(workspace: Path) -> AsyncIterator[Project]:
    (workspace / "pkg" / "extra.py").write_text(EXTRA, encoding="utf-8")
    project = Project(workspace, validate({"discovery": {"workers": 1}})[0])
    try:
        await project.start()
        yield project
    finally:
        await project.close()


def find(project: Project, path: str, qualified_name: str) -> CodeNode:
    matches = [
        n for n in project.graph.file_nodes(path) if n.qualified_name == qualified_name
    ]
    assert len(matches) == 1, (path, qualified_name, matches)
    return matches[0]


def names(nodes: list[CodeNode]) -> list[str]:
    return [f"{n.file_path}:{n.qualified_name}" for n in nodes]


def callees(project: Project, path: str, qualified_name: str) -> list[str]:
    return names(project.graph.callees(find(project, path, qualified_name).id))


def callers(project: Project, path: str, qualified_name: str) -> list[str]:
    return names(project.graph.callers(find(project, path, qualified_name).id))


# ---- calls ---------------------------------------------------------------------------


async def test_a_call_to_a_module_level_function(project):
    assert callees(project, "pkg/service.py", "Service.helper") == [
        "pkg/service.py:order"
    ]


async def test_a_call_through_self_finds_the_method_of_the_class(project):
    assert callees(project, "pkg/models.py", "Item.refresh") == [
        "pkg/models.py:Item.total"
    ]
    assert "pkg/service.py:Service.helper" in callees(
        project, "pkg/service.py", "Service.run"
    )


async def test_a_call_to_a_nested_function(project):
    assert callees(project, "pkg/service.py", "Service.run") == [
        "pkg/service.py:Service.run.step",
        "pkg/service.py:Service.helper",
    ]
    assert callees(project, "pkg/service.py", "Service.run.step") == [
        "pkg/service.py:order"
    ]


async def test_a_call_to_an_imported_function(project):
    # ``from pkg.models import make_item`` and ``models.make_item(...)``
    assert callees(project, "pkg/service.py", "order") == ["pkg/models.py:make_item"]
    assert callees(project, "scripts/tool.py", "main") == ["pkg/service.py:order"]


async def test_class_instantiation_is_a_call_of_the_class(project):
    assert callees(project, "pkg/models.py", "make_item") == ["pkg/models.py:Item"]
    assert callees(project, "pkg/extra.py", "via_alias") == ["pkg/models.py:Item"]


@pytest.mark.parametrize(
    ("caller", "callee"),
    [
        ("via_package_attribute", "pkg/models.py:make_item"),
        ("via_dotted_module", "pkg/models.py:make_item"),
        ("via_class_member", "pkg/models.py:Item.total"),
        ("shadowed", "pkg/extra.py:shadowed.make_item"),
    ],
)
async def test_module_attribute_and_scoped_calls(project, caller, callee):
    assert callees(project, "pkg/extra.py", caller) == [callee]


async def test_calls_to_things_outside_the_project_make_no_edge(project):
    # ``json`` is not imported and not a project module; make_item is an argument.
    assert callees(project, "pkg/extra.py", "unknown") == []
    assert callees(project, "pkg/service.py", "unused") == []


async def test_module_level_calls_belong_to_the_file(project):
    graph = project.graph
    extra = graph.file_node("pkg/extra.py")
    assert names(graph.callees(extra.id)) == ["pkg/models.py:make_item"]
    tool = graph.file_node("scripts/tool.py")
    assert names(graph.callees(tool.id)) == ["scripts/tool.py:main"]


async def test_callers_of_a_function_across_files(project):
    assert callers(project, "pkg/service.py", "order") == [
        "pkg/service.py:Service.run.step",
        "pkg/service.py:Service.helper",
        "scripts/tool.py:main",
    ]
    make_item_callers = callers(project, "pkg/models.py", "make_item")
    assert make_item_callers == [
        "pkg/extra.py:pkg/extra.py",  # the module-level call, owned by the file
        "pkg/extra.py:via_package_attribute",
        "pkg/extra.py:via_dotted_module",
        "pkg/service.py:order",
    ]


# ---- imports -------------------------------------------------------------------------


def imported(project: Project, path: str) -> set[str]:
    graph = project.graph
    file_id = graph.file_ids[path]
    return {graph.get(i).file_path for i in graph.targets(file_id, EdgeKind.IMPORTS)}


async def test_imports_edges_link_file_to_file(project):
    # ``from pkg.models import …``; ``from . import models`` runs pkg/__init__ too
    assert imported(project, "pkg/service.py") == {"pkg/models.py", "pkg/__init__.py"}
    assert imported(project, "scripts/tool.py") == {"pkg/service.py"}
    assert imported(project, "pkg/models.py") == set()  # dataclasses is not ours
    assert sorted(project.graph.importers("pkg/models.py")) == [
        "pkg/extra.py",
        "pkg/service.py",
    ]


# ---- edges follow edits --------------------------------------------------------------


async def test_renaming_a_callee_on_disk_updates_its_callers_edges(project, workspace):
    models = workspace / "pkg" / "models.py"
    original = models.read_text(encoding="utf-8")
    models.write_text(original.replace("def make_item", "def build_item"), "utf-8")
    await project.disk.files_changed(changed=["pkg/models.py"])
    assert callees(project, "pkg/service.py", "order") == []

    models.write_text(original, encoding="utf-8")
    await project.disk.files_changed(changed=["pkg/models.py"])
    assert callees(project, "pkg/service.py", "order") == ["pkg/models.py:make_item"]


async def test_edges_are_stored_and_loaded_on_a_warm_start(project, workspace):
    before = callers(project, "pkg/service.py", "order")
    await project.close()
    again = Project(workspace, validate({"discovery": {"workers": 1}})[0])
    try:
        await again.start()
        assert again.disk.parsed == 0
        assert callers(again, "pkg/service.py", "order") == before
    finally:
        await again.close()


async def test_the_last_import_of_a_name_wins(workspace):
    (workspace / "pkg" / "a.py").write_text("def f():\n    pass\n", encoding="utf-8")
    (workspace / "pkg" / "b.py").write_text("def f():\n    pass\n", encoding="utf-8")
    (workspace / "use.py").write_text(
        "import os\nimport pkg.a as mod\nimport pkg.b as mod\nx = mod.f()\n",
        encoding="utf-8",
    )
    project = Project(workspace, validate({"discovery": {"workers": 1}})[0])
    try:
        await project.start()
        use = project.graph.file_node("use.py")
        assert names(project.graph.callees(use.id)) == ["pkg/b.py:f"]
    finally:
        await project.close()


# ---- module names --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("pkg/mod.py", "pkg.mod"),
        ("pkg/__init__.py", "pkg"),
        ("src/pkg/mod.py", "pkg.mod"),
        ("pkg/stub.pyi", "pkg.stub"),
        ("top.py", "top"),
    ],
)
def test_module_names_follow_python_packaging(path, name):
    assert module_name(path) == name


@pytest.mark.parametrize(
    ("path", "ref", "absolute"),
    [
        ("pkg/sub/mod.py", ImportRef("", 1, "x", "x"), "pkg.sub"),
        ("pkg/sub/mod.py", ImportRef("other", 1, "x", "x"), "pkg.sub.other"),
        ("pkg/sub/mod.py", ImportRef("other", 2, "x", "x"), "pkg.other"),
        ("pkg/sub/__init__.py", ImportRef("mod", 1, "x", "x"), "pkg.sub.mod"),
        ("pkg/sub/__init__.py", ImportRef("", 2, "x", "x"), "pkg"),
        ("pkg/sub/mod.py", ImportRef("json", 0, None, "json"), "json"),
    ],
)
def test_relative_imports_resolve_against_the_importing_package(path, ref, absolute):
    assert ModuleMap().absolute(path, ref) == absolute


def test_module_map_knows_packages_until_their_last_module_goes():
    modules = ModuleMap()
    modules.add("pkg/sub/mod.py")
    assert modules.file("pkg.sub.mod") == "pkg/sub/mod.py"
    assert modules.is_module("pkg") and modules.is_module("pkg.sub")
    modules.remove("pkg/sub/mod.py")
    assert not modules.is_module("pkg") and modules.file("pkg.sub.mod") is None


async def test_renaming_an_imported_module_drops_the_importers_edges(
    project, workspace
):
    """``pkg/models.py`` renamed: ``from pkg.models import …`` now names nothing."""
    models, inventory = (
        workspace / "pkg" / "models.py",
        workspace / "pkg" / "inventory.py",
    )
    models.rename(inventory)
    await project.disk.rename([("pkg/models.py", "pkg/inventory.py")])
    assert callees(project, "pkg/service.py", "order") == []
    assert "pkg/inventory.py" not in imported(project, "pkg/service.py")


async def test_a_module_renamed_while_stopped_drops_the_importers_edges(workspace):
    config = validate({"discovery": {"workers": 1}})[0]
    first = Project(workspace, config)
    try:
        await first.start()
    finally:
        await first.close()
    (workspace / "pkg" / "models.py").rename(workspace / "pkg" / "inventory.py")
    again = Project(workspace, config)
    try:
        await again.start()
        assert callees(again, "pkg/service.py", "order") == []
    finally:
        await again.close()


async def test_a_file_open_in_the_editor_during_a_first_index_gets_its_edges(
    workspace: Path,
):
    """Its buffer was resolved while the graph was still empty or filling;
    once every file is in, it is resolved again.
    """
    (workspace / "caller.py").write_text(
        "import pkg\n\n\ndef run():\n    return pkg.models.make_item('x')\n",
        encoding="utf-8",
    )
    project = Project(workspace, validate({"discovery": {"workers": 1}})[0])
    try:
        text = (workspace / "caller.py").read_text(encoding="utf-8")
        project.open_document("caller.py", 1, text)
        await project.start()
        assert callees(project, "caller.py", "run") == ["pkg/models.py:make_item"]
        assert project.index.opened_while_indexing == {"caller.py"}
    finally:
        await project.close()
