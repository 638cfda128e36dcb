"""Every read of a project path for a person, an agent or an MCP host goes
through one reader (``remora_core/project_paths.py``), which resolves the path
when it reads (issue 25 class 2): a path a store names (``/home/me/x.py``,
``../x.py``) or a file swapped for a link after indexing never reads a file
outside the project, nor one that a link makes secret.
"""

from __future__ import annotations

from tests.core.swarm_support import settings
from tests.project_harness import Project


async def started(root) -> Project:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("def alpha():\n    return 1\n", "utf-8")
    (root / "pkg" / "b.py").write_text("def beta():\n    return 2\n", "utf-8")
    project = Project(root, settings())
    await project.start()
    return project


async def test_a_path_naming_a_file_outside_reads_nothing(tmp_path):
    outside = tmp_path / "home" / "credentials.py"
    outside.parent.mkdir()
    outside.write_text("TOKEN = 'the-persons-token'\n")
    project = await started(tmp_path / "repo")
    try:
        index = project.index
        assert index.read_text("pkg/a.py") is not None
        for named in (str(outside), "../home/credentials.py"):
            assert index.read_text(named) is None
            assert index.line_index(named) is None
    finally:
        await project.close()


async def test_a_file_swapped_for_a_link_is_resolved_when_read(tmp_path):
    outside = tmp_path / "home" / "credentials.py"
    outside.parent.mkdir()
    outside.write_text("TOKEN = 'the-persons-token'\n")
    root = tmp_path / "repo"
    project = await started(root)
    try:
        (root / "pkg" / "a.py").unlink()
        (root / "pkg" / "a.py").symlink_to(outside)
        assert project.index.read_text("pkg/a.py") is None
        (root / "pkg" / "a.py").unlink()
        (root / "pkg" / "a.py").symlink_to(root / "pkg" / "b.py")  # inside: fine
        assert project.index.read_text("pkg/a.py") == b"def beta():\n    return 2\n"
    finally:
        await project.close()
