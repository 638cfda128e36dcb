"""The type checker passes: basedpyright, standard mode, over ``core/`` and
``remora_lsp/`` (configured under ``[tool.basedpyright]`` in pyproject.toml).

A suppression (``# type: ignore[...]`` or ``# pyright: ignore[...]``) says
why on its line; none is blanket.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BASEDPYRIGHT = Path(sys.executable).parent / "basedpyright"


@pytest.mark.slow
def test_basedpyright_reports_no_errors() -> None:
    """About ten seconds: the whole of ``core/`` and ``remora_lsp/``."""
    assert BASEDPYRIGHT.exists(), (
        f"{BASEDPYRIGHT} missing: install the dev extra (pip install -e '.[dev]')"
    )
    done = subprocess.run(
        [
            str(BASEDPYRIGHT),
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
