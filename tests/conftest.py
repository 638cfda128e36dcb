"""Shared test helpers: fixture workspaces copied to a temporary directory."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

try:
    import fcntl
except ImportError:  # Windows: serial groups are not locked
    fcntl = None

# The VS Code e2e's checks live in helper modules (one per scenario): have
# pytest rewrite their asserts too, so a failure shows the values it saw.
pytest.register_assert_rewrite(
    "tests.clients.vscode_batch", "tests.clients.vscode_sets"
)

WORKSPACES = Path(__file__).parent / "workspaces"
LOCK_FOLDER = tempfile.gettempdir()
"""Where serial groups' locks live (read once, before any test changes it)."""


SERIAL_GROUPS: dict[str, str] = {
    # Both tests build the one clients/vscode/remora.vsix (npm run package
    # rewrites dist/ and the .vsix in place): never at once.
    "tests/clients/test_vscode.py": "vscode",
    # The embedded model (llama.cpp) takes a core per run and answers in
    # 10-60 s on 2 cores; two at once each take twice as long, near their
    # limits. One at a time, beside the rest of the suite.
    "tests/clients/test_demo.py": "embedded-model",
    "tests/core/test_real_model.py": "embedded-model",
    "tests/core/test_local_model.py": "embedded-model",
    "tests/lsp/test_graph_local_model.py": "embedded-model",
    "tests/lsp/test_preload.py": "embedded-model",
    "tests/lsp/test_model_pause_real.py": "embedded-model",
    "tests/lsp/test_agent_runs.py::test_the_local_model_end_to_end": "embedded-model",
}
"""Tests that run one at a time (by the start of their node id), and why.
Everything else runs on any pytest-xdist worker at any time: its files,
sockets, ports and settings are its own. Not ``xdist_group``: pytest 9.2
keeps node ids where pytest-xdist 3.8 no longer changes them, so
``--dist loadgroup`` silently hands grouped tests to any worker.
"""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (``pyproject.toml``): one worker more than the CPUs.

    Why: the suite is not CPU-bound throughout. On 2 cores with 2 workers a
    quiet clean run used 16.5 min of CPU in 11.7 min of wall time (the cores
    ~70 % busy: tests wait for servers to start, sockets, subprocesses and
    the serial groups' locks); with 3 workers the same 1,348 tests took
    9 min 6 s instead of 11 min 10 s (2026-11-27). Leaves
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` to pytest-xdist, which reads it first.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist's own hook reads it
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return cpus + 1


def serial_group(item: pytest.Item) -> str | None:
    """The :data:`SERIAL_GROUPS` group of ``item``, if any."""
    for prefix, group in SERIAL_GROUPS.items():
        if item.nodeid == prefix or item.nodeid.startswith(
            (f"{prefix}::", f"{prefix}[")
        ):
            return group
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Run a test of a serial group holding its group's lock (setup, call and
    teardown): a file lock shared by this run's workers, in the temporary
    folder as it was when the run started (tests change ``TMPDIR``).
    """
    group = serial_group(item)
    if group is None or fcntl is None:
        return (yield)
    run = getattr(item.config, "workerinput", {}).get("testrunuid", str(os.getpid()))
    path = Path(LOCK_FOLDER) / f"remora-tests-{run}-{group}.lock"
    with path.open("a") as lock:
        asked = time.monotonic()
        fcntl.flock(lock, fcntl.LOCK_EX)  # released on close, or if killed
        # How long this worker sat idle behind the group (in a --junitxml
        # report: scripts/suite_times.py sums it).
        item.user_properties.append(
            ("serial_wait_s", round(time.monotonic() - asked, 1))
        )
        return (yield)


PACKAGES = ("remora_lsp", "remora_core", "remora_cli")
"""The project's own packages (an editable install: imported from the clone)."""


def compile_project() -> None:
    """Compile the project's modules into ``__pycache__``, as an installed
    package has them (pip compiles what it installs; an editable install's
    modules are compiled by whichever process first imports them).

    Why: where ``PYTHONDONTWRITEBYTECODE`` is set (CI's machine sets it), no
    process writes them, and every server, CLI and worker the suite starts
    compiled Remora's sources again (~0.1 s of CPU each, hundreds of starts).
    Once, in the controller, before pytest-xdist starts its workers.
    """
    import compileall
    import importlib.util

    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        for location in (spec.submodule_search_locations or []) if spec else []:
            compileall.compile_dir(location, quiet=2)


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller, or a run without -n
        compile_project()
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
