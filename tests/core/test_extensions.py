"""Extensions: ``.remora/models/*.py`` classes matched to nodes, reloaded, reported."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from pydantic_ai import Tool
from remora_core.agents.extensions import ExtensionNode, ExtensionRegistry
from remora_core.model import CodeNode, NodeKind, Span

SPAN = Span(0, 0, 0, 0, 0, 0)

API = '''\
from remora_core.agents.extensions import ExtensionNode, tool


class ApiHandlers(ExtensionNode):
    match_type = "function"
    match_pattern = "api.*.handle_*"
    system_prompt = "You are an HTTP handler; keep responses JSON."

    def get_workspaces(self) -> list[str]:
        return ["api/schemas.py"]

    @tool
    async def list_routes(self, prefix: str, limit: int = 10) -> list[str]:
        """List the routes that start with prefix."""
        return [r for r in ("/users", "/items") if r.startswith(prefix)][:limit]

    def helper(self) -> None:
        """Not a tool."""


class Everywhere(ExtensionNode):
    system_prompt = "Be brief."
'''


def node(kind: NodeKind, qualified: str, path: str = "api/users.py") -> CodeNode:
    return CodeNode(
        id="rm_aaaaaaaa",
        kind=kind,
        name=qualified.rsplit(".", 1)[-1],
        qualified_name=qualified,
        file_path=path,
        span=SPAN,
        name_span=SPAN,
        parent_id=None,
        source_hash="",
    )


def write(root: Path, name: str, text: str) -> Path:
    path = root / ".remora" / "models" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    bump(path)
    return path


def bump(path: Path, seconds: int = 2) -> None:
    """Move the mtime forward so the change is seen even on coarse clocks."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + seconds * 10**9))


def classes(extensions: list[ExtensionNode]) -> list[str]:
    return [type(extension).__name__ for extension in extensions]


@pytest.fixture
def messages() -> list[str]:
    return []


def test_matching_by_kind_and_pattern(tmp_path, messages):
    write(tmp_path, "api.py", API)
    registry = ExtensionRegistry(tmp_path, messages.append, trusted=True)
    handler = node(NodeKind.FUNCTION, "handle_get")
    assert classes(registry.matching(handler)) == ["ApiHandlers", "Everywhere"]
    # The pattern is tried on the dotted module path and on path::qualified name.
    assert classes(registry.matching(node(NodeKind.FUNCTION, "other"))) == [
        "Everywhere"
    ]
    assert classes(registry.matching(node(NodeKind.METHOD, "handle_get"))) == [
        "Everywhere"
    ]
    assert classes(
        registry.matching(node(NodeKind.FUNCTION, "handle_x", "web/users.py"))
    ) == ["Everywhere"]
    assert messages == []


def test_pattern_on_path_and_qualified_name(tmp_path):
    write(
        tmp_path,
        "paths.py",
        """\
        from remora_core.agents.extensions import ExtensionNode

        class Models(ExtensionNode):
            match_pattern = "models/*.py::*.save"

        class Classes(ExtensionNode):
            match_type = "class"
            match_pattern = "*Repository"
        """,
    )
    registry = ExtensionRegistry(tmp_path, trusted=True)
    save = node(NodeKind.METHOD, "User.save", "models/user.py")
    assert classes(registry.matching(save)) == ["Models"]
    repo = node(NodeKind.CLASS, "UserRepository", "db.py")
    assert classes(registry.matching(repo)) == ["Classes"]
    assert registry.matching(node(NodeKind.FUNCTION, "UserRepository", "db.py")) == []


async def test_tools_become_pydantic_ai_tools(tmp_path):
    write(tmp_path, "api.py", API)
    registry = ExtensionRegistry(tmp_path, trusted=True)
    extension = registry.matching(node(NodeKind.FUNCTION, "handle_get"))[0]
    assert extension.system_prompt.startswith("You are an HTTP handler")
    assert extension.get_workspaces() == ["api/schemas.py"]
    functions = extension.tools()
    assert [f.__name__ for f in functions] == ["list_routes"]
    tool = Tool(functions[0])
    assert tool.name == "list_routes"
    assert tool.description == "List the routes that start with prefix."
    assert tool.function_schema.json_schema == {
        "additionalProperties": False,
        "properties": {
            "prefix": {"type": "string"},
            "limit": {"default": 10, "type": "integer"},
        },
        "required": ["prefix"],
        "type": "object",
    }
    assert await functions[0]("/u") == ["/users"]


def test_edited_file_is_reloaded_and_deleted_file_forgotten(tmp_path):
    path = write(tmp_path, "api.py", API)
    registry = ExtensionRegistry(tmp_path, trusted=True)
    handler = node(NodeKind.FUNCTION, "handle_get")
    first = registry.matching(handler)
    assert registry.matching(handler) == first  # unchanged: same instances
    path.write_text(API.replace("Be brief.", "Be very brief."), encoding="utf-8")
    bump(path, 4)
    assert registry.matching(handler)[1].system_prompt == "Be very brief."
    path.unlink()
    assert registry.matching(handler) == []


def test_new_file_is_picked_up(tmp_path):
    registry = ExtensionRegistry(tmp_path, trusted=True)
    handler = node(NodeKind.FUNCTION, "handle_get")
    assert registry.matching(handler) == []
    write(tmp_path, "api.py", API)
    assert classes(registry.matching(handler)) == ["ApiHandlers", "Everywhere"]


def test_syntax_error_reported_with_line_while_other_file_works(tmp_path, messages):
    write(tmp_path, "api.py", API)
    broken = write(
        tmp_path,
        "broken.py",
        """\
        from remora_core.agents.extensions import ExtensionNode

        class Broken(ExtensionNode)
            pass
        """,
    )
    registry = ExtensionRegistry(tmp_path, messages.append, trusted=True)
    handler = node(NodeKind.FUNCTION, "handle_get")
    assert classes(registry.matching(handler)) == ["ApiHandlers", "Everywhere"]
    assert classes(registry.matching(handler)) == ["ApiHandlers", "Everywhere"]
    assert len(messages) == 1  # once per change of the file
    assert messages[0].startswith(
        "Remora: extension .remora/models/broken.py, line 3: SyntaxError:"
    )
    broken.write_text(
        "from remora_core.agents.extensions import ExtensionNode\n"
        "class Fixed(ExtensionNode):\n    pass\n"
    )
    bump(broken, 4)
    assert classes(registry.matching(handler)) == [
        "ApiHandlers",
        "Everywhere",
        "Fixed",
    ]
    assert len(messages) == 1


def test_error_while_executing_names_its_line(tmp_path, messages):
    write(tmp_path, "boom.py", "import os\n\nvalue = 1 / 0\n")
    registry = ExtensionRegistry(tmp_path, messages.append, trusted=True)
    assert registry.matching(node(NodeKind.FILE, "api/users.py")) == []
    assert messages == [
        "Remora: extension .remora/models/boom.py, line 3: "
        "ZeroDivisionError: division by zero; skipped"
    ]


def test_bad_class_skipped_and_its_neighbours_kept(tmp_path, messages):
    write(
        tmp_path,
        "mixed.py",
        """\
        from remora_core.agents.extensions import ExtensionNode, tool

        class Good(ExtensionNode):
            match_type = "method"

        class WrongKind(ExtensionNode):
            match_type = "functon"

        class FailsToStart(ExtensionNode):
            def __init__(self):
                raise RuntimeError("no database")

        class Clash(ExtensionNode):
            @tool
            def rewrite_self(self, new_source: str) -> str:
                \"\"\"Shadow a core tool.\"\"\"
                return ""
        """,
    )
    registry = ExtensionRegistry(tmp_path, messages.append, trusted=True)
    assert classes(registry.matching(node(NodeKind.METHOD, "A.b"))) == ["Good"]
    assert len(messages) == 3
    wrong, fails, clash = messages
    assert wrong.startswith("Remora: extension .remora/models/mixed.py, line 6: ")
    assert "class WrongKind: ValueError: match_type must be one of" in wrong
    assert "line 11: class FailsToStart: RuntimeError: no database" in fails
    assert "line 13: class Clash:" in clash
    assert "'rewrite_self' has the name of a core tool" in clash


def test_no_root_and_no_directory_mean_no_extensions(tmp_path):
    assert ExtensionRegistry(None).matching(node(NodeKind.FILE, "a.py")) == []
    assert (
        ExtensionRegistry(tmp_path, trusted=True).matching(node(NodeKind.FILE, "a.py"))
        == []
    )


def test_base_class_defaults_match_everything():
    base = ExtensionNode()
    assert base.matches(node(NodeKind.CLASS, "Anything"))
    assert base.get_workspaces() == []
    assert base.tools() == []
