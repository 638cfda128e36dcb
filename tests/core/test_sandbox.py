"""``.pym`` tools in the pydantic-monty sandbox: format, arguments, limits, escapes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from remora_core.agents.sandbox import PymError, PymResult, PymTool, Sandbox
from remora_core.project_paths import resolve_path

PYM = Path(__file__).parent / "pym"
SECRETS = (".env*", "*.pem", "*.key", "id_rsa*")


def tool(name: str) -> PymTool:
    return PymTool.load(PYM / f"{name}.pym")


@pytest.fixture
async def sandbox():
    """A sandbox with a short time limit, closed afterwards."""
    sandbox = Sandbox(timeout_s=1.0, max_memory=32 * 2**20)
    yield sandbox
    await sandbox.close()


@pytest.fixture
def project(tmp_path):
    """A project root with one readable file and one secret, and a host read_file."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("first line\nsecond line\n")
    (root / ".env").write_text("TOKEN=hunter2\n")

    def read_file(path: str) -> str:
        return (root / resolve_path(root, path, SECRETS)).read_text()

    return read_file


def monty_children() -> list[int]:
    """Live (not zombie) child processes of this process running the monty binary."""
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        state, parent = fields[0], int(fields[1])
        if parent == os.getpid() and state != "Z" and b"monty" in cmdline:
            children.append(int(entry.name))
    return children


# --- the .pym format ----------------------------------------------------------


def test_load_builds_the_tool_from_declarations():
    count_lines = tool("count_lines")

    assert count_lines.name == "count_lines"
    assert count_lines.description == (
        "Count the lines of a node's source and note the count."
    )
    assert count_lines.externals == ("read_node", "note")
    assert count_lines.parameters == {
        "type": "object",
        "properties": {
            "node_id": {"type": "string", "description": "the node to inspect"},
            "limit": {
                "type": "integer",
                "default": 10,
                "description": "report at most this many lines",
            },
            "verbose": {
                "type": "boolean",
                "default": False,
                "description": "print each line",
            },
        },
        "required": ["node_id"],
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    ("source", "line", "words"),
    [
        ('"""Doc."""\nx = (\n', 2, "syntax error"),
        ("x = 1\n", 1, "docstring"),
        ('"""Doc."""\n\nimport os\n', 3, "cannot import os"),
        ('"""Doc."""\nfrom pathlib import Path\n', 2, "cannot import pathlib"),
        ('"""Doc."""\ndef f():\n    import json\n', 3, "cannot import json"),
        ('"""Doc."""\nos = __import__("os")\n', 2, "__import__() is not allowed"),
        ('"""Doc."""\n\nexec("import os")\n', 3, "exec() is not allowed"),
        ('"""Doc."""\nfrom remora import Input\nx = Input()\n', 3, "name: type"),
        ('"""Doc."""\nfrom remora import Input\nx: set = Input()\n', 3, "a type:"),
        (
            '"""Doc."""\nfrom remora import Input\nx: int = Input(default="a")\n',
            3,
            "'x' must be an integer",
        ),
        (
            '"""Doc."""\nfrom remora import external\n@external\ndef f(): ...\n',
            4,
            "async def",
        ),
        (
            '"""Doc."""\nfrom remora import Input\nx: int = Input(); y = x\n',
            3,
            "lines of its own",
        ),
    ],
)
def test_bad_files_name_the_file_and_line(tmp_path, source, line, words):
    path = tmp_path / "bad_tool.pym"
    path.write_text(source)

    with pytest.raises(PymError) as caught:
        PymTool.load(path)

    assert f"bad_tool.pym, line {line}:" in str(caught.value)
    assert words in str(caught.value)


# --- running -------------------------------------------------------------------


async def test_a_tool_returns_its_value_and_prints_and_calls_the_host(sandbox):
    reads: list[str] = []
    notes: list[tuple[str, int]] = []

    async def read_node(node_id: str) -> str:  # an async host function
        reads.append(node_id)
        await asyncio.sleep(0)
        return "def f():\n    return 1\n"

    def note(text: str, level: int = 0) -> None:  # a sync one
        notes.append((text, level))

    result = await sandbox.run(
        tool("count_lines"),
        {"node_id": "n-42", "limit": 1, "verbose": True},
        {"read_node": read_node, "note": note},
    )

    assert result == PymResult(
        value={"node": "n-42", "lines": 2, "first": ["def f():"]},
        printed="read 22 characters\ndef f():\n",
    )
    assert reads == ["n-42"]
    assert notes == [("n-42 has 2 lines", 2)]


@pytest.mark.parametrize("arguments", [{}, {"times": None}])
async def test_defaults_fill_in_and_the_result_becomes_json(sandbox, arguments):
    result = await sandbox.run(tool("spy"), arguments, {})

    assert result.value == [1, [2, 3], {"a": None}]
    assert result.printed == "line 0\nline 1\nline 2\n"


async def test_runs_can_overlap(sandbox):
    results = await asyncio.gather(
        *(sandbox.run(tool("spy"), {"times": times}, {}) for times in range(4))
    )

    assert [result.printed.count("\n") for result in results] == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({}, "missing required argument 'node_id' (the node to inspect)"),
        ({"node_id": "n", "colour": "red"}, "unknown argument 'colour'"),
        ({"node_id": 42}, "'node_id' must be a string, not int"),
        ({"node_id": "n", "limit": "10"}, "'limit' must be an integer, not str"),
        ({"node_id": "n", "limit": True}, "'limit' must be an integer, not bool"),
        ({"node_id": "n", "verbose": 1}, "'verbose' must be true or false"),
    ],
)
async def test_bad_arguments_are_refused_before_running(sandbox, arguments, words):
    called = []

    with pytest.raises(PymError) as caught:
        await sandbox.run(tool("count_lines"), arguments, {"read_node": called.append})

    assert words in str(caught.value)
    assert called == []


async def test_nothing_reaches_stdout(sandbox, capfd):
    result = await sandbox.run(tool("spy"), {"times": 2}, {})
    with pytest.raises(PymError):
        await sandbox.run(tool("memory_bomb"), {}, {})

    captured = capfd.readouterr()
    assert result.printed == "line 0\nline 1\n"
    assert captured.out == ""
    assert "line 0" not in captured.err


async def test_an_error_reports_the_line_in_the_pym_file(sandbox):
    with pytest.raises(PymError) as caught:
        await sandbox.run(tool("error_line"), {}, {})

    assert str(caught.value) == (
        "error_line.pym, line 19: ZeroDivisionError: division by zero"
    )


# --- host functions ----------------------------------------------------------


async def test_a_host_function_reads_inside_the_project(sandbox, project):
    result = await sandbox.run(
        tool("read_file"), {"path": "notes.txt"}, {"read_file": project}
    )

    assert result.value == "first line"


async def test_a_refused_path_comes_back_as_an_error(sandbox, project):
    with pytest.raises(PymError) as caught:
        await sandbox.run(
            tool("read_file"), {"path": "../../etc/passwd"}, {"read_file": project}
        )

    message = str(caught.value)
    assert message.startswith("read_file.pym, line 11: ValueError:")
    assert "is outside the project; access refused" in message


async def test_a_script_can_catch_a_refusal(sandbox, project):
    result = await sandbox.run(
        tool("catch_refusal"), {"path": ".env"}, {"read_file": project}
    )

    assert result.value == {"refused": "'.env' matches secrets.exclude; access refused"}


async def test_only_declared_host_functions_are_reachable(sandbox, project):
    with pytest.raises(PymError) as caught:
        await sandbox.run(tool("undeclared"), {}, {"read_file": project})

    assert str(caught.value) == (
        "undeclared.pym, line 3: NameError: name 'read_file' is not defined; "
        "declare it with @external to call the host's read_file"
    )


async def test_a_declared_function_the_host_lacks_fails_clearly(sandbox):
    with pytest.raises(PymError) as caught:
        await sandbox.run(tool("read_file"), {"path": "notes.txt"}, {})

    assert "line 11" in str(caught.value)
    assert "the host provides no function 'read_file'" in str(caught.value)


# --- no way out --------------------------------------------------------------


async def test_open_is_refused(sandbox):
    with pytest.raises(PymError) as caught:
        await sandbox.run(tool("open_file"), {}, {})

    message = str(caught.value)
    assert message.startswith("open_file.pym, line 3: PermissionError: open()")
    assert "no access to files" in message


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("import_os", "import_os.pym, line 3: cannot import os: "),
        ("dunder_import", "dunder_import.pym, line 3: __import__() is not allowed"),
    ],
)
def test_imports_are_refused_when_loading(name, message):
    with pytest.raises(PymError) as caught:
        tool(name)

    assert str(caught.value).startswith(message)


async def test_an_endless_loop_hits_the_time_limit(sandbox):
    started = time.monotonic()

    with pytest.raises(PymError) as caught:
        await sandbox.run(tool("endless"), {}, {})

    assert str(caught.value).startswith("endless.pym")
    assert str(caught.value).endswith("took longer than 1 s")
    assert time.monotonic() - started < 4


@pytest.mark.parametrize("name", ["memory_bomb", "memory_growth"])
async def test_memory_bombs_hit_the_memory_limit(sandbox, name):
    with pytest.raises(PymError) as caught:
        await sandbox.run(tool(name), {}, {})

    assert str(caught.value).startswith(f"{name}.pym")
    assert str(caught.value).endswith("used more than 32 MiB of memory")


async def test_the_sandbox_still_works_after_a_limit_was_hit(sandbox):
    with pytest.raises(PymError):
        await sandbox.run(tool("memory_bomb"), {}, {})

    result = await sandbox.run(tool("spy"), {"times": 1}, {})

    assert result.printed == "line 0\n"


# --- lifecycle ---------------------------------------------------------------


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
async def test_close_leaves_no_worker_processes():
    sandbox = Sandbox()
    await sandbox.run(tool("spy"), {}, {})
    assert monty_children()

    await sandbox.close()

    for _ in range(50):
        if not monty_children():
            break
        await asyncio.sleep(0.02)
    assert monty_children() == []
    with pytest.raises(PymError, match="closed"):
        await sandbox.run(tool("spy"), {}, {})


def _loaded_after_importing(module: str) -> str:
    """Which of pydantic-monty and pydantic-ai a fresh interpreter holds
    once it imported ``module``.
    """
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys, {module}; print(sorted(m for m in "
            "('pydantic_monty', 'pydantic_ai') if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_a_server_starts_without_the_sandbox_and_the_kernel_brings_it():
    """pydantic-monty's native module is loaded by the first ``.pym`` run, or
    with the agents' kernel (imported by the preload, off the editor's path),
    not by every server start (~15 ms of each).
    """
    assert _loaded_after_importing("remora_lsp.assembly") == "[]"
    assert (
        _loaded_after_importing("remora_core.agents.kernel")
        == "['pydantic_ai', 'pydantic_monty']"
    )
