"""Node ids across edits, renames and restarts (DESIGN §4).

Each test plays an edit sequence through the real engine — ``extract_source``
then ``apply_extraction`` on a :class:`CodeGraph`, or a whole :class:`Project` —
and checks the ids a user (or an agent holding an id) would see.
"""

from __future__ import annotations

import re
import textwrap
from typing import TYPE_CHECKING

import pytest
from remora_core.config import RemoraConfig, validate
from remora_core.discovery import extract_source
from remora_core.index.codegraph import CodeGraph
from remora_core.index.identity import is_node_id, new_id
from remora_core.index.updates import apply_extraction, move_file, orphan_file
from remora_core.model import NodeKind, NodeStatus

from tests.project_harness import Project

if TYPE_CHECKING:
    from pathlib import Path

ID_SHAPE = re.compile(r"rm_[a-z0-9]{8}")


class Editor:
    """A file being edited: each ``write`` re-parses it into the graph."""

    def __init__(self, *, inline: bool = False, graph: CodeGraph | None = None):
        self.graph = graph or CodeGraph()
        self.inline = inline

    def write(self, source: str, path: str = "mod.py"):
        text = textwrap.dedent(source).encode()
        extraction = extract_source(path, text, read_inline_ids=self.inline)
        return apply_extraction(self.graph, path, extraction)

    def ids(self, path: str = "mod.py") -> dict[str, str]:
        """Qualified name → id of the active nodes (names must be unique)."""
        nodes = self.graph.file_nodes(path)
        ids = {n.qualified_name: n.id for n in nodes}
        assert len(ids) == len(nodes), "duplicate names: use id_list"
        return ids

    def id_list(self, path: str = "mod.py") -> list[tuple[str, str]]:
        return [(n.qualified_name, n.id) for n in self.graph.file_nodes(path)]

    def status(self, node_id: str) -> NodeStatus:
        node = self.graph.get(node_id)
        assert node is not None, f"{node_id} was dropped from the graph"
        return node.status


# ---- the shape of an id --------------------------------------------------------------


def test_ids_have_the_documented_shape():
    minted = {new_id() for _ in range(500)}
    assert len(minted) == 500
    assert all(ID_SHAPE.fullmatch(i) for i in minted)
    assert all(is_node_id(i) for i in minted)


@pytest.mark.parametrize(
    "value", ["rm_ABCD1234", "rm_abc123", "rm_abcd12345", "xx_abcd1234", 42, None]
)
def test_things_that_are_not_ids(value):
    assert not is_node_id(value)


def test_new_id_avoids_taken_ids():
    seen: list[str] = []

    def taken(candidate: str) -> bool:
        seen.append(candidate)
        return len(seen) < 3  # refuse the first two candidates

    chosen = new_id(taken)
    assert chosen == seen[-1] and len(seen) == 3


def test_every_node_of_a_parse_gets_an_id_and_the_file_one_too():
    editor = Editor()
    update = editor.write(
        """\
        class Store:
            def load(self):
                pass
        def main():
            pass
        """
    )
    ids = editor.ids()
    assert set(ids) == {"Store", "Store.load", "main"}
    assert all(ID_SHAPE.fullmatch(i) for i in ids.values())
    assert len(set(ids.values())) == 3
    file_node = editor.graph.file_node("mod.py")
    assert file_node is not None and file_node.kind is NodeKind.FILE
    assert ID_SHAPE.fullmatch(file_node.id) and file_node.id not in ids.values()
    assert update.file_id == file_node.id
    assert editor.graph.get(ids["Store.load"]).parent_id == ids["Store"]
    assert editor.graph.get(ids["main"]).parent_id == file_node.id


# ---- edits ---------------------------------------------------------------------------

ORIGINAL = """\
class Config:
    def load(self):
        return 1

def main():
    return Config().load()
"""


def test_ids_survive_unrelated_edits():
    editor = Editor()
    editor.write(ORIGINAL)
    before = editor.ids()
    file_id = editor.graph.file_ids["mod.py"]

    # Lines added above, a body edited, a new function added below.
    update = editor.write(
        """\
        import os


        class Config:
            def load(self):
                path = os.getcwd()
                return path

        def main():
            return Config().load()

        def extra():
            pass
        """
    )
    after = editor.ids()
    assert {k: after[k] for k in before} == before
    assert editor.graph.file_ids["mod.py"] == file_id
    assert update.created == [after["extra"]]
    assert update.orphaned == []
    assert after["Config.load"] in update.modified
    assert after["main"] not in update.modified  # same text, only moved down


def test_a_rename_is_a_new_node_and_the_old_one_is_orphaned_not_deleted():
    editor = Editor()
    editor.write(ORIGINAL)
    load = editor.ids()["Config.load"]

    update = editor.write(ORIGINAL.replace("def load", "def load_config"))
    load_config = editor.ids()["Config.load_config"]
    assert load_config != load
    assert "Config.load" not in editor.ids()
    assert update.orphaned == [load] and update.created == [load_config]
    assert editor.status(load) is NodeStatus.ORPHANED
    assert editor.graph.get(load).qualified_name == "Config.load"

    # Renaming back (or undo) revives the old node with its id.
    update = editor.write(ORIGINAL)
    assert editor.ids()["Config.load"] == load
    assert editor.status(load) is NodeStatus.ACTIVE
    assert editor.status(load_config) is NodeStatus.ORPHANED
    assert update.created == [load]


def test_deleting_and_restoring_a_function_brings_its_id_back():
    editor = Editor()
    editor.write(ORIGINAL)
    main = editor.ids()["main"]
    editor.write(ORIGINAL.split("def main")[0])
    assert editor.status(main) is NodeStatus.ORPHANED
    editor.write(ORIGINAL)
    assert editor.ids()["main"] == main


def test_a_kind_change_is_a_new_node():
    editor = Editor()
    editor.write("def thing():\n    pass\n")
    function_id = editor.ids()["thing"]
    editor.write("class thing:\n    pass\n")
    assert editor.ids()["thing"] != function_id
    assert editor.status(function_id) is NodeStatus.ORPHANED


PROPERTY = """\
class Item:
    @property
    def label(self):
        return self._label

    @label.setter
    def label(self, value):
        self._label = value
"""


def test_duplicate_names_pair_up_in_document_order():
    editor = Editor()
    editor.write(PROPERTY)
    (_, item), (_, getter), (_, setter) = editor.id_list()
    assert len({item, getter, setter}) == 3

    editor.write(
        "# header\n" + PROPERTY.replace("self._label\n", "self._label or ''\n")
    )
    assert editor.id_list() == [
        ("Item", item),
        ("Item.label", getter),
        ("Item.label", setter),
    ]

    # Deleting the setter orphans the second of the pair, not the getter.
    editor.write(PROPERTY.split("    @label.setter")[0])
    assert editor.id_list() == [("Item", item), ("Item.label", getter)]
    assert editor.status(setter) is NodeStatus.ORPHANED


def test_moving_a_method_to_another_class_changes_its_identity():
    editor = Editor()
    editor.write(
        """\
        class A:
            def shared(self):
                pass

        class B:
            pass
        """
    )
    old = editor.ids()["A.shared"]
    editor.write(
        """\
        class A:
            pass

        class B:
            def shared(self):
                pass
        """
    )
    ids = editor.ids()
    assert ids["B.shared"] != old
    assert editor.status(old) is NodeStatus.ORPHANED
    assert editor.graph.get(ids["B.shared"]).parent_id == ids["B"]


# ---- inline ids ----------------------------------------------------------------------


def test_an_inline_id_survives_a_rename():
    editor = Editor(inline=True)
    editor.write("def load():    # rm_abcd1234\n    pass\n")
    assert editor.ids() == {"load": "rm_abcd1234"}
    update = editor.write("def load_config():    # rm_abcd1234\n    pass\n")
    assert editor.ids() == {"load_config": "rm_abcd1234"}
    assert update.orphaned == [] and update.created == []


def test_an_inline_id_wins_over_name_matching():
    editor = Editor(inline=True)
    editor.write("def load():\n    pass\n")
    by_name = editor.ids()["load"]
    editor.write("def load():    # rm_abcd1234\n    pass\n")
    assert editor.ids() == {"load": "rm_abcd1234"}
    assert editor.status(by_name) is NodeStatus.ORPHANED


def test_inline_id_comments_are_ignored_when_the_option_is_off():
    editor = Editor(inline=False)
    editor.write("def load():    # rm_abcd1234\n    pass\n")
    assert editor.ids()["load"] != "rm_abcd1234"


def test_a_copied_inline_id_is_not_given_twice():
    editor = Editor(inline=True)
    editor.write(
        "def a():    # rm_abcd1234\n    pass\n\ndef b():    # rm_abcd1234\n    pass\n"
    )
    ids = editor.ids()
    assert ids["a"] == "rm_abcd1234"
    assert ids["b"] != "rm_abcd1234" and is_node_id(ids["b"])


def test_an_inline_id_active_in_another_file_is_not_taken():
    editor = Editor(inline=True)
    editor.write("def a():    # rm_abcd1234\n    pass\n", path="one.py")
    editor.write("def copy():    # rm_abcd1234\n    pass\n", path="two.py")
    assert editor.ids("one.py") == {"a": "rm_abcd1234"}
    assert editor.ids("two.py")["copy"] != "rm_abcd1234"


def test_a_function_moved_to_another_file_keeps_its_inline_id():
    """Cut from one file, pasted in another: the id moves with the node.

    Later edits of the first file must not orphan it.
    """
    editor = Editor(inline=True)
    editor.write("def f():    # rm_abcd1234\n    pass\n\ndef g():\n    pass\n", "a.py")
    editor.write("def h():\n    pass\n", "b.py")

    editor.write("def g():\n    pass\n", "a.py")  # cut
    editor.write("def h():\n    pass\n\ndef f():    # rm_abcd1234\n    pass\n", "b.py")
    assert editor.ids("b.py")["f"] == "rm_abcd1234"
    assert editor.status("rm_abcd1234") is NodeStatus.ACTIVE
    assert "f" not in editor.ids("a.py")

    editor.write("def g():\n    return 1\n", "a.py")  # a later edit of a.py
    assert editor.status("rm_abcd1234") is NodeStatus.ACTIVE
    assert editor.graph.get("rm_abcd1234").file_path == "b.py"
    assert [n.name for n in editor.graph.file_nodes("a.py", orphans=True)] == ["g"]


def test_the_file_id_comment_names_the_file_node():
    editor = Editor(inline=True)
    editor.write("# remora-file: rm_file0001\ndef f():\n    pass\n")
    assert editor.graph.file_ids["mod.py"] == "rm_file0001"


# ---- files deleted and moved ---------------------------------------------------------


def test_a_deleted_file_orphans_its_nodes_and_keeps_them():
    editor = Editor()
    editor.write(ORIGINAL)
    ids = editor.ids()
    update = orphan_file(editor.graph, "mod.py")
    assert update is not None and sorted(update.orphaned) == sorted(ids.values())
    assert all(editor.status(i) is NodeStatus.ORPHANED for i in ids.values())
    assert editor.ids() == {}


def test_a_moved_file_keeps_its_ids():
    editor = Editor()
    editor.write(ORIGINAL, path="old.py")
    ids, file_id = editor.ids("old.py"), editor.graph.file_ids["old.py"]
    assert move_file(editor.graph, "old.py", "pkg/new.py")
    assert editor.ids("pkg/new.py") == ids
    assert editor.graph.file_ids["pkg/new.py"] == file_id
    assert editor.graph.get(ids["main"]).file_path == "pkg/new.py"
    editor.write(ORIGINAL, path="pkg/new.py")  # the next parse matches them
    assert editor.ids("pkg/new.py") == ids


# ---- a whole project, restarted ------------------------------------------------------


def project_ids(project: Project) -> dict[tuple[str, str, int], str]:
    """(path, qualified name, occurrence) → id of every active node."""
    found: dict[tuple[str, str, int], str] = {}
    for node in project.graph.active():
        key = (node.file_path, node.qualified_name, 0)
        while key in found:
            key = (key[0], key[1], key[2] + 1)
        found[key] = node.id
    return found


async def run_project(root: Path) -> tuple[dict, int]:
    project = Project(root, validate({"discovery": {"workers": 1}})[0])
    try:
        await project.start()
        return project_ids(project), project.disk.parsed
    finally:
        await project.close()


async def test_ids_are_identical_after_a_restart(workspace: Path):
    first, parsed = await run_project(workspace)
    assert parsed == 5  # every file of the fixture
    assert (workspace / ".remora" / "remora.db").is_file()

    second, reparsed = await run_project(workspace)
    assert second == first
    assert reparsed == 0  # a warm start reads nothing it already knows


async def test_a_file_changed_while_stopped_keeps_its_unchanged_ids(workspace: Path):
    first, _ = await run_project(workspace)
    models = workspace / "pkg" / "models.py"
    models.write_text("# edited offline\n" + models.read_text(encoding="utf-8"))
    second, parsed = await run_project(workspace)
    assert parsed == 1
    assert second == first


async def test_a_file_renamed_on_disk_between_runs_keeps_its_ids(workspace: Path):
    first, _ = await run_project(workspace)
    (workspace / "pkg" / "models.py").rename(workspace / "pkg" / "inventory.py")
    second, _ = await run_project(workspace)
    moved = {
        (path.replace("pkg/models.py", "pkg/inventory.py"), name, n): node_id
        for (path, name, n), node_id in first.items()
        if name != "pkg/models.py"  # a file node's qualified name is its path
    }
    moved[("pkg/inventory.py", "pkg/inventory.py", 0)] = first[
        ("pkg/models.py", "pkg/models.py", 0)
    ]
    assert second == moved
    third, _ = await run_project(workspace)  # and the move itself was stored
    assert third == second


async def test_a_memory_only_project_gives_ids_to_open_documents():
    project = Project(None, RemoraConfig())
    try:
        await project.start()
        project.open_document("/tmp/scratch.py", 1, "def f():\n    pass\n")
        (node,) = project.outline("/tmp/scratch.py")
        assert node.qualified_name == "f" and is_node_id(node.id)
        assert project.database is None
    finally:
        await project.close()


async def test_a_rename_while_running_is_stored_under_the_new_path(workspace):
    """A rename the editor reports moves the file's record and edges in the
    store too, not only in memory: no stale row under the old path.
    """
    import sqlite3

    from remora_core.config import RemoraConfig

    from tests.project_harness import Project

    project = Project(workspace, RemoraConfig())
    await project.start()
    ids_before = {
        n.qualified_name: n.id for n in project.graph.file_nodes("pkg/service.py")
    }
    (workspace / "pkg/service.py").rename(workspace / "pkg/orders.py")
    await project.disk.rename([("pkg/service.py", "pkg/orders.py")])
    await project.close()

    db = sqlite3.connect(workspace / ".remora" / "remora.db")
    try:
        paths = dict(db.execute("SELECT path, status FROM files").fetchall())
        assert "pkg/service.py" not in paths
        assert paths["pkg/orders.py"] == "present"
        edge_paths = {p for (p,) in db.execute("SELECT DISTINCT file_path FROM edges")}
        assert "pkg/service.py" not in edge_paths
        assert "pkg/orders.py" in edge_paths
    finally:
        db.close()

    again = Project(workspace, RemoraConfig())
    await again.start()
    try:
        ids_after = {
            n.qualified_name: n.id for n in again.graph.file_nodes("pkg/orders.py")
        }
        assert ids_after == ids_before
        assert again.disk.parsed == 0  # nothing changed since the last run
    finally:
        await again.close()
