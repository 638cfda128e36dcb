"""What a fenced reply's one code block asks for, when it is more than one
definition (issue 27 §4).

A small model does not write ``CREATE_FILE:`` or ``CHANGE`` lines; asked for
tests or for a new helper, the embedded 0.5B model writes them in its one
block, where the protocol expects the node's new source. Two shapes of those
replies say plainly what was meant, and are read as such:

- **tests only** (imports, ``test_*`` functions, ``Test*`` classes,
  decorated fixtures; no other definition but a copy of the asked one, left
  out) when the request asked for tests: a new file
  — the path the request names, else ``tests/test_<module>.py`` — whose text
  is the block, with an import of the tested name when the block uses it
  without one (``create_file``);
- **the asked definition and new ones** (``tax_of`` + ``receipt``) for a
  top-level function or class: a change set in its file — the asked node
  rewritten, the other definitions added as its siblings (or rewritten, when
  the file has one of that name), tests moved to the test file when tests
  were asked for (``propose_changes``).

Any other block stays the node's new source (``rewrite_self``), refused as
before when it is not one definition. What comes out is only a tool call: the
tools check it as any other (paths inside the project and outside
``secrets.exclude``, the intent guard, syntax), and nothing is written before
a person accepts.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from remora_core.discovery.parser import parse
from remora_core.model import NodeKind
from remora_core.review.source_checks import definition_of, name_of, top_level

if TYPE_CHECKING:
    from collections.abc import Iterator

    import tree_sitter

    from remora_core.agents.context import AgentContext
    from remora_core.model import CodeNode

ASKED_TESTS = re.compile(r"\b(?:unit ?)?tests?\b|\bpytest\b", re.IGNORECASE)
"""A request that asks for tests."""
NAMED_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]*test[\w.-]*\.py)\b")
"""A test file the request names (``tests/test_pricing.py``)."""
TEST_NAME = re.compile(r"^(?:test_?\w*|Test\w*)$")
"""What pytest collects: ``test*`` functions, ``Test*`` classes."""
IMPORTS = ("import_statement", "import_from_statement", "future_import_statement")
CALL = ("print(", "unittest.main(", "pytest.main(")


def read_block(
    context: AgentContext, code: str, reasoning: str
) -> tuple[str, dict[str, Any]] | None:
    """The ``create_file`` or ``propose_changes`` call ``code`` stands for, or
    None: the block is the node's new source (``rewrite_self``).
    """
    node = context.node
    if node.kind is NodeKind.FILE:
        return None  # a module's new text is a module: any statements
    raw = code.encode("utf-8", "replace")
    tree = parse(raw)
    if tree.root_node.has_error:
        return None
    statements = top_level(tree)
    named = [(s, _name(s)) for s in statements]
    asked_tests = _asked_tests(context)
    tests = [s for s, name in named if name is not None and TEST_NAME.match(name)]
    own = [s for s, name in named if name == node.name]
    if asked_tests and tests and own and all(_unchanged(context, raw, s) for s in own):
        # The function copied beside its tests: the tests are what is new
        # (and must test the module's function, not the copy).
        named = [(s, name) for s, name in named if s not in own]
        code = "\n\n\n".join(_text(raw, s) for s, _name in named)
        own = []
    offered = context.bundle.tool_names
    only_tests = all(
        name is None or TEST_NAME.match(name) or s.type == "decorated_definition"
        for s, name in named
    )  # a fixture is decorated; a copy of the tested class is not a test
    if asked_tests and tests and only_tests and not own and "create_file" in offered:
        return "create_file", {
            "path": test_path(context),
            "content": _test_module(node, code),
            "reason": reasoning or f"tests for {node.qualified_name}",
        }
    if len(own) != 1 or len(statements) < 2 or "propose_changes" not in offered:
        return None
    if "." in node.qualified_name:  # a method's siblings are methods: not here
        return None
    return _change_set(context, raw, named, own[0], asked_tests, reasoning)


def _change_set(
    context: AgentContext,
    raw: bytes,
    named: list[tuple[tree_sitter.Node, str | None]],
    own: tree_sitter.Node,
    asked_tests: bool,
    reasoning: str,
) -> tuple[str, dict[str, Any]] | None:
    """The asked definition, its new siblings and (asked) the tests, as one set."""
    node = context.node
    imports = [s for s, _name in named if s.type in IMPORTS]
    siblings, tests = [], []
    for statement, name in named:
        if statement is own or statement.type in IMPORTS:
            continue
        if name is None:
            if asked_tests and _stray_call(statement):
                continue  # ``print("All tests passed!")``: the test file has pytest
            return None  # a statement of the module: not a definition
        if asked_tests and TEST_NAME.match(name):
            tests.append(statement)
        else:
            siblings.append(statement)
    if not siblings and not tests:
        return None
    file_text = context.services.read_text(node.file_path) or b""
    new_imports = [s for s in imports if _text(raw, s) not in _lines(file_text)]
    code = " ".join(_text(raw, s) for s in [own, *siblings])
    if any(_uses(code, _bound(_text(raw, s))) for s in new_imports) or (
        new_imports and not tests
    ):
        return None  # a new import has nowhere to go in a definition's rewrite
    changes: list[dict[str, Any]] = [
        {"node_id": node.id, "new_source": _text(raw, own)}
    ]
    changes += [{"path": node.file_path, "new_source": _text(raw, s)} for s in siblings]
    if tests:
        module = "\n".join(_text(raw, s) for s in imports)
        module += "\n\n\n" + "\n\n\n".join(_text(raw, s) for s in tests)
        changes.append(
            {"path": test_path(context), "new_source": _test_module(node, module)}
        )
    names = [_name(s) for s in siblings] + ([test_path(context)] if tests else [])
    summary = reasoning.strip().splitlines()[0] if reasoning.strip() else ""
    return "propose_changes", {
        "changes": changes,
        "summary": summary or f"{node.name} with {', '.join(map(str, names))}",
    }


def test_path(context: AgentContext) -> str:
    """The test file: the one the request names, else ``tests/test_<module>.py``."""
    for text in _requests(context):
        if found := NAMED_PATH.search(text):
            return found.group(1)
    return f"tests/test_{PurePosixPath(context.node.file_path).stem}.py"


def _test_module(node: CodeNode, code: str) -> str:
    """The tests' text, importing the tested name when the block uses it
    without binding it (the model wrote its tests as if beside the function).
    """
    name = node.qualified_name.split(".")[0]
    module = _module_of(node.file_path)
    text = code.strip("\n") + "\n"
    if module is None or not re.search(rf"\b{re.escape(name)}\b", text):
        return text
    tree = parse(text.encode("utf-8", "replace"))
    for statement in top_level(tree):
        line = (statement.text or b"").decode("utf-8", "replace")
        if statement.type in IMPORTS and (
            re.search(rf"\b{re.escape(name)}\b", line) or f"{module} import *" in line
        ):
            return text
        if statement.type == "future_import_statement":
            return text  # the import would have to come after it: leave as written
        if _name(statement) == name:
            return text
    return f"from {module} import {name}\n\n\n{text}"


def _module_of(path: str) -> str | None:
    """The dotted module of a project file (``src/`` layouts drop ``src``)."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def _asked_tests(context: AgentContext) -> bool:
    return any(ASKED_TESTS.search(text) for text in _requests(context))


def _requests(context: AgentContext) -> list[str]:
    """What the turn was asked: the person's and other agents' messages."""
    texts = []
    for stored in context.turn.events:
        if stored.event.type in ("human_chat", "agent_message"):
            texts.append(str(getattr(stored.event, "message", "")))
    return texts


def _name(statement: tree_sitter.Node) -> str | None:
    definition = definition_of(statement)
    return name_of(definition) if definition is not None else None


def _unchanged(context: AgentContext, raw: bytes, statement: tree_sitter.Node) -> bool:
    """Whether the block's definition is the node's source as it is (what
    the agent was shown, up to trailing spaces and comments).
    """
    return _code(_text(raw, statement)) == _code(context.shown_own_source())


def _code(source: str) -> object:
    try:
        return ast.dump(ast.parse(textwrap.dedent(source)))
    except (
        SyntaxError,
        ValueError,
        RecursionError,
    ):  # another Python's syntax: the text itself
        return "\n".join(line.rstrip() for line in source.strip().splitlines())


def _bound(statement: str) -> set[str]:
    """The names an import statement binds."""
    try:
        tree = ast.parse(statement)
    except (SyntaxError, ValueError, RecursionError):
        return {"*"}
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".")[0])
    return names


def _uses(code: str, names: set[str]) -> bool:
    return "*" in names or any(re.search(rf"\b{re.escape(n)}\b", code) for n in names)


def _stray_call(statement: tree_sitter.Node) -> bool:
    text = (statement.text or b"").decode("utf-8", "replace").lstrip()
    if statement.type == "if_statement":
        return text.startswith("if __name__")
    return statement.type == "expression_statement" and text.startswith(CALL)


def _text(raw: bytes, statement: tree_sitter.Node) -> str:
    return raw[statement.start_byte : statement.end_byte].decode("utf-8", "replace")


def _lines(text: bytes) -> set[str]:
    return {line.strip() for line in text.decode("utf-8", "replace").splitlines()}


def whole_prefixes(code: str, most: int = 400) -> Iterator[str]:
    """The parts of a block cut off mid-way that are whole Python, longest
    first: the text up to the end of one of its last ``most`` lines (the
    last, which the cut broke, left out), where that parses.
    """
    lines = code.splitlines()[:-1]
    for end in range(len(lines), max(0, len(lines) - most), -1):
        text = "\n".join(lines[:end]).rstrip()
        if text and _whole(text):
            yield text


def _whole(text: str) -> bool:
    """Whether ``text`` is whole Python (tree-sitter takes a ``def`` line
    without its body; Python does not).
    """
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return True
