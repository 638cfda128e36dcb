"""The pytest plugin (entry point ``pytest11: remora``): fixtures that start
``remora-lsp`` on a temporary copy of your project with a scripted model.

Fixtures (override any of them in a ``conftest.py``):

- ``remora_project_source`` — the project to copy: the path given by the
  ``remora_project`` marker, else the ``remora_project`` ini option, both
  relative to pytest's rootdir;
- ``remora_project`` — a fresh copy of it in ``tmp_path`` (without Remora's
  store, ``.git/``, virtualenvs and caches; with ``.remora/bundles`` and the
  rest of ``.remora/``), so a test never touches the original;
- ``remora_model`` — a :class:`~remora_lsp.testing.model_server.ModelServer`
  on 127.0.0.1 (script it with ``remora_model.on(...)`` before asking);
- ``remora_settings`` — the ``initializationOptions``: the scripted model with
  tool calling, no cooldown, the workspace trusted (it is your own repository,
  so its bundles and ``.pym`` tools load), merged with the
  ``remora_settings(dict)`` marker key by key;
- ``remora_editor`` — ``"neovim"`` and ``"visual-studio-code"`` (the ini
  option ``remora_editors`` chooses): every test using ``remora_client`` runs
  once per editor;
- ``remora_client`` — a :class:`~remora_lsp.testing.client.RemoraClient`
  session, initialized and indexed, answering ``workspace/applyEdit`` like an
  editor; shut down after the test. The server's user-level files
  (``REMORA_CONFIG_HOME``, ``REMORA_STATE_HOME``) point into ``tmp_path``, so
  your own settings and trust answers are neither read nor changed.

Without pytest-lsp installed the plugin registers nothing but explains itself
when a ``remora_*`` fixture is used, so an environment that has Remora without
its ``testing`` extra still runs pytest.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from remora_lsp.testing.model_server import ModelServer  # standard library only

log = logging.getLogger(__name__)

NOT_COPIED = (".git", ".venv", "venv", "__pycache__", "node_modules")
"""What a project copy leaves out: VCS data, environments, caches."""
STORE_FILES = ("remora.db*", "owner.lock", "control.sock", "*.log")
"""What it leaves out of ``.remora/``: the store and what a running server
keeps there (bundles, tools, extensions and graphs are copied)."""


def _ignore_for(target: Path):
    """``copytree``'s ignore: :data:`NOT_COPIED`, :data:`STORE_FILES` inside
    ``.remora/``, and the folder holding the copy itself (pytest's temporary
    folder may lie inside the project, e.g. with ``--basetemp``), also
    through a symbolic link (pytest's ``…-current``).
    """

    def ignore(directory: str, names: list[str]) -> set[str]:
        store = Path(directory).name == ".remora"
        patterns = NOT_COPIED + (STORE_FILES if store else ())
        skipped = set(shutil.ignore_patterns(*patterns)(directory, names))
        holding = {
            n for n in names if target.is_relative_to(Path(directory, n).resolve())
        }
        return skipped | holding

    return ignore


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ini options ``remora_project`` and ``remora_editors``."""
    parser.addini(
        "remora_project",
        "project directory remora_client opens a copy of (relative to rootdir)",
        default=None,
    )
    parser.addini(
        "remora_editors",
        "client capabilities remora_client runs with, each a test",
        type="args",
        default=["neovim", "visual-studio-code"],
    )


def pytest_configure(config: pytest.Config) -> None:
    """Declare the kit's markers (so ``--strict-markers`` accepts them)."""
    config.addinivalue_line(
        "markers", "remora_project(path): the project remora_client opens a copy of"
    )
    config.addinivalue_line(
        "markers", "remora_settings(dict): initializationOptions merged over the kit's"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run every test that uses ``remora_editor`` once per configured editor."""
    if "remora_editor" not in metafunc.fixturenames:
        return
    for marker in metafunc.definition.iter_markers("parametrize"):
        if "remora_editor" in str(marker.args[0]):
            return  # the test chose its editors itself
    editors = metafunc.config.getini("remora_editors")
    metafunc.parametrize("remora_editor", editors, scope="function")


def _require_kit() -> None:
    """Fail the test with what to install if the kit's packages are missing
    (:data:`MISSING`, found where ``remora_client`` is defined).
    """
    if MISSING is not None:
        pytest.fail(
            f"remora_lsp.testing needs pytest-lsp ({MISSING}): "
            "pip install 'remora-lsp[testing]'",
            pytrace=False,
        )


@pytest.fixture
def remora_editor() -> str:
    """The editor whose capabilities the client announces (parametrized)."""
    return "neovim"


@pytest.fixture
def remora_project_source(request: pytest.FixtureRequest) -> Path:
    """The project directory to copy (marker, else ini option)."""
    marker = request.node.get_closest_marker("remora_project")
    configured = marker.args[0] if marker else request.config.getini("remora_project")
    if not configured:
        pytest.fail(
            "remora_client needs a project: set `remora_project = path/to/project` "
            "in pytest's ini options, mark the test @pytest.mark.remora_project"
            "(path), or override the remora_project_source fixture",
            pytrace=False,
        )
    source = Path(request.config.rootpath, configured)
    if not source.is_dir():
        pytest.fail(f"remora_project: {source} is not a directory", pytrace=False)
    return source


@pytest.fixture
def remora_project(remora_project_source: Path, tmp_path: Path) -> Path:
    """A fresh copy of the project in ``tmp_path``."""
    target = tmp_path / (remora_project_source.resolve().name or "project")
    shutil.copytree(remora_project_source, target, ignore=_ignore_for(target.resolve()))
    return target


@pytest.fixture
def remora_model() -> Iterator[ModelServer]:
    """A scripted OpenAI-compatible model server on 127.0.0.1."""
    _require_kit()
    with ModelServer() as server:
        yield server


@pytest.fixture
def remora_settings(
    remora_model: ModelServer, request: pytest.FixtureRequest
) -> dict[str, Any]:
    """``initializationOptions``: the scripted model, trusted, plus the marker's."""
    # Needs pytest-lsp: here only with the kit (remora_model required it).
    from remora_lsp.testing.actions import model_settings

    settings: dict[str, Any] = {**model_settings(remora_model), "workspaceTrust": True}
    marker = request.node.get_closest_marker("remora_settings")
    for key, value in (marker.args[0] if marker else {}).items():
        if isinstance(value, dict) and isinstance(settings.get(key), dict):
            settings[key] = {**settings[key], **value}
        else:
            settings[key] = value
    return settings


@pytest.fixture
def remora_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The server's environment: yours, with user-level files in a temp folder."""
    home = tmp_path_factory.mktemp("remora-person")
    return {
        **os.environ,
        "REMORA_CONFIG_HOME": str(home / "config"),
        "REMORA_STATE_HOME": str(home / "state"),
    }


try:
    import pytest_asyncio

    from remora_lsp.testing.buffers import apply_workspace_edits
    from remora_lsp.testing.client import RemoraClient, start_session
except ImportError as missing:  # the ``testing`` extra is not installed
    MISSING: ImportError | None = missing

    @pytest.fixture(name="remora_client")
    def _remora_client_unavailable() -> None:
        """Unavailable: explains which extra to install."""
        _require_kit()

else:
    MISSING = None

    @pytest_asyncio.fixture
    async def remora_client(
        remora_editor: str,
        remora_project: Path,
        remora_settings: dict[str, Any],
        remora_env: dict[str, str],
    ) -> AsyncIterator[RemoraClient]:
        """A session of ``remora-lsp`` on the project copy, indexed and ready."""
        async with start_session(
            remora_editor, remora_project, remora_settings, env=remora_env
        ) as client:
            apply_workspace_edits(client)
            yield client
