"""The type checker passes: basedpyright, standard mode, over ``core/`` and
``remora_lsp/`` (configured under ``[tool.basedpyright]`` in pyproject.toml).

A suppression (``# type: ignore[...]`` or ``# pyright: ignore[...]``) names
its rule and says why, in a comment after it or on the line above.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BASEDPYRIGHT = shutil.which("basedpyright", path=str(Path(sys.executable).parent))
"""The one installed beside this interpreter (the dev extra)."""
CHECKED = ("core", "remora_lsp")
IGNORE = re.compile(r"#\s*(?:type|pyright):\s*ignore(?P<rule>\[[^\]]+\])?(?P<rest>.*)")


@pytest.mark.slow
def test_basedpyright_reports_no_errors() -> None:
    """About ten seconds: the whole of ``core/`` and ``remora_lsp/``."""
    assert BASEDPYRIGHT is not None, (
        f"no basedpyright beside {sys.executable}: pip install -e '.[dev]'"
    )
    done = subprocess.run(
        [
            BASEDPYRIGHT,
            "--outputjson",
            "--project",
            str(REPO / "pyproject.toml"),
            # This interpreter's packages, whatever the venv is called.
            "--pythonpath",
            sys.executable,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(
            f"basedpyright failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    listing = "\n".join(
        f"{Path(d['file']).relative_to(REPO)}:{d['range']['start']['line'] + 1}:"
        f"{d['range']['start']['character'] + 1}: {d['message']}"
        + (f" ({d['rule']})" if d.get("rule") else "")
        for d in errors
    )
    assert not errors, f"{len(errors)} type errors:\n{listing}"
    assert report["summary"]["filesAnalyzed"] > 100, report["summary"]


def test_every_type_ignore_names_its_rule_and_says_why() -> None:
    unexplained = []
    for folder in CHECKED:
        for path in sorted((REPO / folder).rglob("*.py")):
            lines = path.read_text(encoding="utf-8").splitlines()
            with path.open("rb") as file:
                tokens = list(tokenize.tokenize(file.readline))
            for token in tokens:
                if token.type != tokenize.COMMENT:
                    continue
                found = IGNORE.search(token.string)
                if found is None:
                    continue
                line = token.start[0]
                above = lines[line - 2].strip() if line > 1 else ""
                reason = re.search(r"#\s*\S", found["rest"]) or above.startswith("#")
                if found["rule"] is None or not reason:
                    where = path.relative_to(REPO)
                    unexplained.append(f"{where}:{line}: {token.string}")
    assert not unexplained, "ignores without a rule or a reason:\n" + "\n".join(
        unexplained
    )
