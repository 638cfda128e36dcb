"""Accepting a change to a module that is a symbolic link (issue 25 class 2).

``remora accept`` without a server writes the file itself. A module that is
a link inside the project (``pkg/service.py`` → ``lib/service_impl.py``) had
its link replaced by a regular file, and the real file left unchanged. Now
the edit goes through to the link's target when that is inside the project,
and the link stays; a link that leads outside the project (swapped in after
the file was indexed) is refused, saying why, and nothing is written.

Run as a person runs it: the ``remora`` command line, a scripted model.
"""

from __future__ import annotations

import json
import os
import shutil

import yaml
from remora_core.front.disk_editor import DiskEditor
from remora_core.review.edits import FileEdit, PlannedEdit

from remora_lsp.testing.model_server import ModelServer
from tests.lsp.test_agent_runs import DOCSTRING, settings
from tests.lsp.test_command_line import HELPER, remora, script_rewrite


def link_service(workspace):
    real = workspace / "lib" / "service_impl.py"
    real.parent.mkdir()
    shutil.move(workspace / "pkg" / "service.py", real)
    (workspace / "pkg" / "service.py").symlink_to(
        os.path.relpath(real, workspace / "pkg")
    )
    return real


async def proposal(workspace, person_files, model) -> str:
    config = person_files / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.yaml").write_text(yaml.safe_dump(settings(model)))
    script_rewrite(model)
    code, out, err = await remora(
        workspace, "ask", HELPER, "Docstring please", "--json"
    )
    assert code == 0, err
    [made] = json.loads(out)["proposals"]
    return made["proposal_id"]


async def test_accept_writes_through_a_link_inside_the_project(workspace, person_files):
    real = link_service(workspace)
    link = workspace / "pkg" / "service.py"
    with ModelServer() as model:
        proposal_id = await proposal(workspace, person_files, model)
        code, _out, err = await remora(workspace, "accept", proposal_id)
    assert code == 0, err
    assert link.is_symlink()  # still the person's link
    assert DOCSTRING in real.read_text()
    assert not list(workspace.rglob("*.remora-tmp"))


async def test_the_disk_writer_refuses_a_link_out_of_the_project(tmp_path):
    """A module swapped for a link out after it was indexed: the writer of
    ``remora accept`` (and of the control socket for files no editor holds)
    refuses it, saying why, and writes nothing anywhere.
    """
    root, home = tmp_path / "repo", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    outside = home / "service.py"
    outside.write_bytes(b"x = 1\n")
    (root / "service.py").symlink_to(outside)
    edit = PlannedEdit("pr_1", "service.py", None, 0, 1, "y", b"x = 1\n")
    applied = await DiskEditor(root).apply([FileEdit.of(edit)], "accept")
    assert not applied.applied
    assert "outside the project" in (applied.reason or "")
    assert outside.read_bytes() == b"x = 1\n"
    assert (root / "service.py").is_symlink()
