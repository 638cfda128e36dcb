"""Shared test helpers: fixture workspaces copied to a temporary directory."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

WORKSPACES = Path(__file__).parent / "workspaces"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "workspace(name): the fixture workspace a test runs on"
    )
    config.addinivalue_line(
        "markers", "editor_settings(dict): initializationOptions sent by the client"
    )


@pytest.fixture(autouse=True)
def person_files(tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> Path:
    """The person's settings and state (``user_files.py``) in a fresh temporary
    folder for every test, never the real home: servers started by a test
    inherit the variables.
    """
    home = tmp_path_factory.mktemp("person")
    # Servers started by tests do not preload the kernel and the embedded model
    # (hundreds of starts would each pay for it); tests of preloading say so.
    (home / "config").mkdir()
    (home / "config" / "config.yaml").write_text("model:\n  preload: false\n")
    monkeypatch.setenv("REMORA_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("REMORA_STATE_HOME", str(home / "state"))
    return home


@pytest.fixture
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A fresh copy of the fixture workspace named by ``@pytest.mark.workspace``."""
    marker = request.node.get_closest_marker("workspace")
    name = marker.args[0] if marker else "basic"
    target = tmp_path / name
    shutil.copytree(WORKSPACES / name, target)
    return target


@pytest.fixture
def no_person_config(person_files: Path) -> None:
    """No settings file of the person's at all (not even ``preload: false``)."""
    (person_files / "config" / "config.yaml").unlink()


collect_ignore_glob = ["workspaces/*"]
"""Fixture projects have tests of their own: they run only in them."""
