"""Proposals: the text an agent's edit puts in the file, its diff, and its life.

What a person reviews is the file after the edit and its diff, so these tests
assert whole resulting files, whole diffs, and the messages a model gets back
when its source cannot be used.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from remora_core.discovery import extract_source
from remora_core.model import CodeNode, NodeKind, Span
from remora_core.review.proposals import (
    Proposal,
    ProposalError,
    ProposalStore,
    prepare_new_node,
    prepare_rewrite,
)
from remora_core.store import Database

PATH = "pkg/box.py"


def nodes_of(text: bytes, path: str = PATH) -> dict[str, CodeNode]:
    """Every node of a file by qualified name; the file node under ''."""
    extraction = extract_source(path, text, read_inline_ids=False)
    assert extraction.span is not None
    file_node = CodeNode(
        id="rm_file0000",
        kind=NodeKind.FILE,
        name=path.rsplit("/", 1)[-1],
        qualified_name=path,
        file_path=path,
        span=extraction.span,
        name_span=Span(0, 0, 0, 0, 0, 0),
        parent_id=None,
        source_hash=extraction.content_hash,
    )
    found = {"": file_node}
    ids = []
    for index, definition in enumerate(extraction.definitions):
        ids.append(f"rm_{index:08d}")
        parent = ids[definition.parent] if definition.parent >= 0 else file_node.id
        found[definition.qualified_name] = CodeNode(
            id=ids[-1],
            kind=definition.kind,
            name=definition.name,
            qualified_name=definition.qualified_name,
            file_path=path,
            span=definition.span,
            name_span=definition.name_span,
            parent_id=parent,
            source_hash=definition.source_hash,
        )
    return found


def rewritten(text: bytes, qualified_name: str, new_source: str) -> tuple[bytes, str]:
    """The file after the rewrite, and the diff."""
    node = nodes_of(text)[qualified_name]
    replacement, diff = prepare_rewrite(node, text, new_source)
    start, end = node.span.start_byte, node.span.end_byte
    return text[:start] + replacement.encode() + text[end:], diff


def inserted(
    text: bytes,
    anchor: str,
    kind: str,
    name: str,
    source: str,
    after: str | None = None,
) -> tuple[bytes, str, str]:
    """The file after inserting a new node, the inserted text and the diff."""
    found = nodes_of(text)
    offset, insertion, diff = prepare_new_node(
        text, PATH, found[anchor], kind, name, source, found[after] if after else None
    )
    return text[:offset] + insertion.encode() + text[offset:], insertion, diff


def apply_diff(old: str, diff: str) -> str:
    """Apply a unified diff (as ``patch`` would), checking every context line."""
    lines = old.splitlines(keepends=True)
    out: list[str] = []
    position = 0
    body = diff.splitlines(keepends=True)[2:]
    index = 0
    while index < len(body):
        header = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", body[index])
        assert header, body[index]
        start = int(header.group(1)) - (0 if header.group(2) == "0" else 1)
        out.extend(lines[position:start])
        position = start
        index += 1
        while index < len(body) and not body[index].startswith("@@"):
            sign, content = body[index][0], body[index][1:]
            if sign in " -":
                assert lines[position].rstrip("\r\n") == content.rstrip("\n")
                if sign == " ":
                    out.append(lines[position])
                position += 1
            elif sign == "+":
                out.append(content)
            index += 1
    out.extend(lines[position:])
    return "".join(out)


def whole_file_diff(old: bytes, new: bytes) -> str:
    """What difflib says about the whole files: the reference for small files."""
    return "".join(
        difflib.unified_diff(
            old.decode().splitlines(keepends=True),
            new.decode().splitlines(keepends=True),
            f"a/{PATH}",
            f"b/{PATH}",
        )
    )


BOX = b'''"""Boxes."""


class Box:
    """A box."""

    def load(self):
        return 1

    def save(self):
        pass


def helper():
    return 2
'''


# ---- rewrites: where the text goes ---------------------------------------------------


def test_a_method_written_at_column_zero_lands_at_its_place_with_a_git_style_diff():
    new, diff = rewritten(BOX, "Box.load", "def load(self, path):\n    return path\n")
    assert new == BOX.replace(
        b"    def load(self):\n        return 1",
        b"    def load(self, path):\n        return path",
    )
    assert diff == (
        "--- a/pkg/box.py\n"
        "+++ b/pkg/box.py\n"
        "@@ -4,8 +4,8 @@\n"
        " class Box:\n"
        '     """A box."""\n'
        " \n"
        "-    def load(self):\n"
        "-        return 1\n"
        "+    def load(self, path):\n"
        "+        return path\n"
        " \n"
        "     def save(self):\n"
        "         pass\n"
    )
    assert diff == whole_file_diff(BOX, new)


CASES = {
    "method copied with its indentation": (
        BOX,
        "Box.load",
        "    def load(self, path):\n        return path\n",
        b"    def load(self, path):\n        return path\n",
    ),
    "method copied from the file's own text (first line bare)": (
        BOX,
        "Box.load",
        "def load(self, path):\n        return path",
        b"    def load(self, path):\n        return path\n",
    ),
    "blank lines around the source are trimmed": (
        BOX,
        "Box.load",
        "\n\n  \ndef load(self, path):\n    return path\n\n\n   \n",
        b"    def load(self, path):\n        return path\n",
    ),
    "a different name is allowed": (
        BOX,
        "Box.load",
        "async def fetch(self):\n    return await self.get()",
        b"    async def fetch(self):\n        return await self.get()\n",
    ),
    "decorators come along": (
        BOX,
        "Box.load",
        "@property\n@cache\ndef load(self):\n    return 2",
        b"    @property\n    @cache\n    def load(self):\n        return 2\n",
    ),
    "a docstring moves with the code": (
        BOX,
        "Box.load",
        'def load(self):\n    """Load.\n\n    From disk.\n    """\n    return 1',
        b'    def load(self):\n        """Load.\n\n        From disk.\n'
        b'        """\n        return 1\n',
    ),
    "a multi-line string keeps its value": (
        BOX,
        "Box.load",
        'def load(self):\n    text = """\nfirst\n    second\n"""\n    return text',
        b'    def load(self):\n        text = """\nfirst\n    second\n"""\n'
        b"        return text\n",
    ),
    "a comment line inside the body": (
        BOX,
        "Box.load",
        "def load(self):\n    # cached\n\n    return 1 + 1",
        b"    def load(self):\n        # cached\n\n        return 1 + 1\n",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_indentation_is_normalised_to_the_nodes_place(case):
    text, name, source, expected = CASES[case]
    new, diff = rewritten(text, name, source)
    node = nodes_of(text)[name]
    line_start = text.rfind(b"\n", 0, node.span.start_byte) + 1
    assert new[line_start:].startswith(expected)
    assert new[: node.span.start_byte] == text[: node.span.start_byte]
    ast.parse(new)
    assert apply_diff(text.decode(), diff) == new.decode()


NESTED = b"def outer():\n    def inner(x):\n        return x\n\n    return inner\n"


def test_a_nested_function_is_indented_as_the_body_it_lives_in():
    new, _ = rewritten(
        NESTED,
        "outer.inner",
        "def inner(x, y):\n    if x:\n        return y\n    return x",
    )
    assert new == (
        b"def outer():\n    def inner(x, y):\n        if x:\n            return y\n"
        b"        return x\n\n    return inner\n"
    )


def test_a_crlf_file_keeps_crlf_line_endings():
    text = BOX.replace(b"\n", b"\r\n")
    new, diff = rewritten(text, "Box.load", "def load(self, path):\n    return path\n")
    assert new == text.replace(
        b"    def load(self):\r\n        return 1",
        b"    def load(self, path):\r\n        return path",
    )
    assert "\r" not in diff
    assert "+        return path\n" in diff


def test_a_tab_indented_file_gets_tabs():
    text = (
        b"class Box:\n\tdef load(self):\n\t\treturn 1\n\n\tdef save(self):\n\t\tpass\n"
    )
    source = "def load(self):\n    if self:\n        return 2\n    return 1\n"
    new, _ = rewritten(text, "Box.load", source)
    assert new == (
        b"class Box:\n\tdef load(self):\n\t\tif self:\n\t\t\treturn 2\n\t\treturn 1\n"
        b"\n\tdef save(self):\n\t\tpass\n"
    )


def test_a_two_space_file_gets_two_spaces():
    text = b"class Box:\n  def load(self):\n    return 1\n"
    new, _ = rewritten(
        text, "Box.load", "def load(self):\n    if self:\n        return 2\n"
    )
    assert new == b"class Box:\n  def load(self):\n    if self:\n      return 2\n"


def test_non_ascii_text_before_the_node_does_not_shift_the_edit_or_the_diff():
    text = "# Ünïcode ✓ — 😀\n" + BOX.decode().replace("A box.", "Ä böx ✓.")
    new, diff = rewritten(text.encode(), "Box.load", "def load(self):\n    return '✓'")
    assert new.decode() == text.replace("return 1", "return '✓'")
    assert apply_diff(text, diff) == new.decode()
    assert "@@ -6,7 +6,7 @@\n" in diff


def test_a_class_node_is_rewritten_whole():
    new, _ = rewritten(
        BOX,
        "Box",
        "class Box:\n    def load(self):\n        return 1\n\n"
        "    def empty(self):\n        return []",
    )
    assert b"    def empty(self):\n        return []\n\n\ndef helper():" in new
    assert b"def save" not in new


def test_a_file_node_is_rewritten_whole_keeping_its_final_newline():
    new, diff = rewritten(BOX, "", "import os\n\n\ndef helper():\n    return os.sep")
    assert new == b"import os\n\n\ndef helper():\n    return os.sep\n"
    assert diff.startswith("--- a/pkg/box.py\n+++ b/pkg/box.py\n@@ -1,15 +1,5 @@\n")


# ---- rewrites: what the model hears when its source cannot be used ------------


ERRORS = {
    "syntax error, counted in the model's lines": (
        "\ndef load(self):\n    x = 1\n    return x +\n",
        "your code does not parse: line 4: invalid syntax: return x +",
    ),
    "empty body": (
        "def load(self):\nreturn 2",
        "your code does not parse: line 2: expected an indented block after "
        "function definition on line 1: return 2",
    ),
    "a class for a method": (
        "class Load:\n    pass",
        "expected one function definition (def) named or renamed from 'load', "
        "got a class 'Load'",
    ),
    "two definitions": (
        "def load(self):\n    return 1\n\ndef other(self):\n    return 2",
        "expected one function definition (def) named or renamed from 'load', "
        "got a function 'load' and a function 'other'",
    ),
    "a statement after the definition": (
        "import os\ndef load(self):\n    return os",
        "expected one function definition (def) named or renamed from 'load', "
        "got an import on line 1 and a function 'load'",
    ),
    "only comments": (
        "# nothing to see",
        "expected one function definition (def) named or renamed from 'load', "
        "got only comments",
    ),
    "empty": ("   \n\n", "new_source is empty; send the complete definition"),
    "identical": (
        "def load(self):\n    return 1",
        "no change: the new source is identical to the current one",
    ),
    "trailing whitespace only": (
        "def load(self):   \n    return 1  ",
        "no change: the new source differs from the current one only in whitespace "
        "at the ends of lines",
    ),
    "too big": (
        "def load(self):\n" + "    x = 1\n" * 25_000,
        "new_source is 250,016 bytes; the limit is 200 KB — send only the one "
        "definition",
    ),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_unusable_sources_get_a_message_the_model_can_act_on(case):
    source, message = ERRORS[case]
    with pytest.raises(ProposalError) as raised:
        rewritten(BOX, "Box.load", source)
    assert str(raised.value) == message


def test_a_node_whose_text_changed_is_refused():
    node = nodes_of(BOX)["Box.load"]
    edited = BOX.replace(b"return 1", b"return 7")
    with pytest.raises(ProposalError, match="changed since it was read"):
        prepare_rewrite(node, edited, "def load(self):\n    return 3")


def test_a_non_string_source_is_refused():
    with pytest.raises(ProposalError, match="must be a string"):
        prepare_rewrite(nodes_of(BOX)["Box.load"], BOX, None)  # type: ignore[arg-type]


# ---- rewrites: properties over many shapes ------------------------------------

LEAVES = [
    ["x = 1"],
    ["return x"],
    ["z = (1,", "     2)"],
    ["# a comment", "x = 2"],
    ['y = """', "raw", "  text", '"""'],  # lines 1+ are inside the string
]


def _indent(block: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    return [(line if literal else "    " + line, literal) for line, literal in block]


def _leaf(lines: list[str]) -> list[tuple[str, bool]]:
    return [
        (line, index > 0 and lines[0].endswith('"""'))
        for index, line in enumerate(lines)
    ]


statements = st.recursive(
    st.sampled_from(LEAVES).map(_leaf),
    lambda inner: st.lists(inner, min_size=1, max_size=3).map(
        lambda blocks: [
            ("if x:", False),
            *_indent([line for b in blocks for line in b]),
        ]
    ),
    max_leaves=6,
)


@st.composite
def methods(draw):
    """A method at column 0 in 4-space units: (lines, literal flags)."""
    body = [
        line
        for block in draw(st.lists(statements, min_size=1, max_size=4))
        for line in block
    ]
    if draw(st.booleans()):
        body = [
            ('"""Doc.', False),
            ("", False),
            ("More.", False),
            ('"""', False),
            *body,
        ]
    return [("def load(self, x):", False), *_indent(body), ("    return 0", False)]


def _in_unit(line: str, literal: bool, unit: str) -> str:
    if literal:
        return line
    width = len(line) - len(line.lstrip(" "))
    return unit * (width // 4) + " " * (width % 4) + line[width:]


@settings(max_examples=150, deadline=None)
@given(
    method=methods(),
    unit=st.sampled_from(["    ", "  ", "\t"]),
    newline=st.sampled_from(["\n", "\r\n"]),
    form=st.sampled_from(["column 0", "indented", "as in the file"]),
)
def test_any_method_lands_with_its_meaning_intact(method, unit, newline, form):
    file_lines = [
        "class Box:",
        unit + "def load(self, x):",
        unit * 2 + "return -1",
        "",
        unit + "def save(self):",
        unit * 2 + "pass",
        "",
    ]
    text = newline.join(file_lines).encode()
    canonical = "\n".join(line for line, _ in method)
    if form == "column 0":
        source = canonical
    elif form == "indented":
        source = "\n".join(line if lit else "    " + line for line, lit in method)
    else:  # first line bare, the rest as the file indents it
        shown = [_in_unit(line, lit, unit) for line, lit in method]
        source = "\n".join(
            [shown[0]]
            + [
                s if lit else unit + s
                for s, (_, lit) in zip(shown[1:], method[1:], strict=True)
            ]
        )
    new, diff = rewritten(text, "Box.load", source)
    decoded = new.decode()
    # Exactly the method as someone using the file's indentation would write it.
    expected = [_in_unit(line, lit, unit) for line, lit in method]
    expected = [expected[0]] + [
        s if lit else (unit + s if s.strip() else "")
        for s, (_, lit) in zip(expected[1:], method[1:], strict=True)
    ]
    assert decoded.startswith(
        newline.join(["class Box:", unit + expected[0], *expected[1:]])
    )
    assert _method_shape(ast.parse(decoded)) == _shape(canonical)
    if newline == "\r\n":
        assert "\n" not in decoded.replace("\r\n", "")
    # Diffs show lines without their endings: compare with \n everywhere.
    assert apply_diff(_lf(text.decode()), diff) == _lf(decoded)
    tail = newline.join(["", unit + "def save(self):", unit * 2 + "pass", ""])
    assert decoded.endswith(tail)
    with pytest.raises(ProposalError, match="no change"):
        rewritten(new, "Box.load", source)


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def _method_shape(module: ast.Module) -> str:
    cls = module.body[0]
    assert isinstance(cls, ast.ClassDef)
    return _clean_dump(cls.body[0])


def _shape(source: str) -> str:
    return _clean_dump(ast.parse(source).body[0])


def _clean_dump(tree: ast.AST) -> str:
    """The tree with docstrings as ``inspect.cleandoc`` shows them."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            node.value.value = inspect.cleandoc(node.value.value)
    return ast.dump(tree)


# ---- new nodes -----------------------------------------------------------------------


def test_a_new_function_goes_at_the_end_of_the_file_after_two_blank_lines():
    new, insertion, diff = inserted(
        BOX, "", "function", "extra", "def extra():\n    return 3\n"
    )
    assert new == BOX + b"\n\ndef extra():\n    return 3\n"
    assert insertion == "\n\n\ndef extra():\n    return 3"
    assert diff == (
        "--- a/pkg/box.py\n+++ b/pkg/box.py\n@@ -13,3 +13,7 @@\n \n"
        " def helper():\n     return 2\n+\n+\n+def extra():\n+    return 3\n"
    )
    assert diff == whole_file_diff(BOX, new)


def test_a_new_function_goes_before_the_main_guard_and_its_comment():
    text = (
        b"def main():\n    pass\n\n\n# Run it.\nif __name__ == '__main__':\n"
        b"    main()\n"
    )
    new, _, diff = inserted(text, "", "function", "extra", "def extra():\n    pass")
    assert new == (
        b"def main():\n    pass\n\n\ndef extra():\n    pass\n\n\n"
        b"# Run it.\nif __name__ == '__main__':\n    main()\n"
    )
    assert apply_diff(text.decode(), diff) == new.decode()


def test_a_new_method_goes_at_the_end_of_its_class_after_one_blank_line():
    new, _, _ = inserted(BOX, "Box", "method", "size", "def size(self):\n    return 0")
    assert new == BOX.replace(
        b"        pass\n", b"        pass\n\n    def size(self):\n        return 0\n"
    )


def test_a_new_method_after_a_sibling_is_surrounded_by_blank_lines():
    text = (
        b"class Box:\n    def load(self):\n        return 1\n"
        b"    def save(self):\n        pass\n"
    )
    new, _, _ = inserted(
        text, "Box", "method", "size", "def size(self):\n    return 0", "Box.load"
    )
    assert new == (
        b"class Box:\n    def load(self):\n        return 1\n\n    def size(self):\n"
        b"        return 0\n\n    def save(self):\n        pass\n"
    )


def test_a_new_class_after_a_top_level_sibling_gets_two_blank_lines_each_side():
    new, _, _ = inserted(
        BOX, "", "class", "Crate", "class Crate(Box):\n    pass", "Box"
    )
    assert b"        pass\n\n\nclass Crate(Box):\n    pass\n\n\ndef helper():" in new


def test_comments_closing_a_body_stay_with_it():
    text = (
        b"class Box:\n    def load(self):\n        return 1\n        # done loading\n"
    )
    new, _, _ = inserted(text, "Box", "method", "size", "def size(self):\n    return 0")
    assert new == text + b"\n    def size(self):\n        return 0\n"


def test_a_new_method_in_a_tab_indented_crlf_file():
    text = b"class Box:\r\n\tdef load(self):\r\n\t\treturn 1\r\n"
    new, _, _ = inserted(
        text, "Box", "method", "size", "def size(self):\n    if self:\n        return 0"
    )
    assert new == text + b"\r\n\tdef size(self):\r\n\t\tif self:\r\n\t\t\treturn 0\r\n"


def test_a_new_function_in_an_empty_file():
    new, _, _ = inserted(b"", "", "function", "first", "def first():\n    pass")
    assert new == b"def first():\n    pass\n"


def test_a_new_node_needs_current_spans_only_where_it_uses_them():
    found = nodes_of(BOX)
    edited = BOX.replace(b"return 1", b"return 7")
    with pytest.raises(ProposalError, match="'Box' changed since it was read"):
        prepare_new_node(
            edited, PATH, found["Box"], "method", "m", "def m(self):\n    pass", None
        )
    # The file node's span is not used: the end of the file is found afresh.
    offset, insertion, _ = prepare_new_node(
        edited, PATH, found[""], "function", "extra", "def extra():\n    pass", None
    )
    assert edited[:offset] + insertion.encode() + edited[offset:] == (
        edited + b"\n\ndef extra():\n    pass\n"
    )


NEW_NODE_ERRORS = {
    "name taken": (
        ("", "function", "helper", "def helper():\n    pass", None),
        "'helper' is already defined at the top level of pkg/box.py; choose another "
        "name, or ask that node to change itself",
    ),
    "method name taken": (
        ("Box", "method", "save", "def save(self):\n    return 1", None),
        "'save' is already defined in 'Box'; choose another name, or ask that node "
        "to change itself",
    ),
    "name differs from the source": (
        ("", "function", "extra", "def other():\n    pass", None),
        "you asked for a function named 'extra' but the source defines 'other'; "
        "make them the same",
    ),
    "kind differs": (
        ("", "class", "Extra", "def Extra():\n    pass", None),
        "expected one class definition named 'Extra', got a function 'Extra'",
    ),
    "bad kind": (
        ("", "module", "extra", "def extra():\n    pass", None),
        "kind must be 'function', 'class' or 'method'",
    ),
    "bad name": (
        ("", "function", "class", "def extra():\n    pass", None),
        "'class' is not a valid Python name",
    ),
    "syntax": (
        ("", "function", "extra", "def extra(:\n    pass", None),
        "your code does not parse: line 1: invalid syntax: def extra(:",
    ),
}


@pytest.mark.parametrize("case", list(NEW_NODE_ERRORS))
def test_unusable_new_nodes_get_a_message_the_model_can_act_on(case):
    arguments, message = NEW_NODE_ERRORS[case]
    with pytest.raises(ProposalError) as raised:
        inserted(BOX, *arguments)
    assert str(raised.value) == message


def test_a_class_with_its_body_on_its_header_line_takes_no_new_method():
    text = b"class Empty: pass\n"
    with pytest.raises(ProposalError, match="body on the line of its header"):
        inserted(text, "Empty", "method", "m", "def m(self):\n    pass")


# ---- the store ---------------------------------------------------------------------


def proposal(
    n: int, node_id: str = "rm_aaaaaaaa", path: str = PATH, **changes
) -> Proposal:
    fields = dict(
        id=f"pr_{n:012x}",
        node_id=node_id,
        run_id="run_1",
        kind="rewrite",
        file_path=path,
        base_version=3,
        base_hash="0" * 64,
        start_byte=10,
        end_byte=20,
        old_source="def a():\n    pass",
        new_source="def a():\n    return 1",
        diff="--- a/x\n+++ b/x\n",
        reasoning="because",
        status="pending",
        feedback=None,
        created_at=1000.0 + n,
        decided_at=None,
    )
    fields.update(changes)
    return Proposal(**fields)


async def test_a_second_proposal_for_a_node_supersedes_the_first():
    store = ProposalStore(None)
    assert await store.add(proposal(1)) == []
    assert await store.add(proposal(2, node_id="rm_bbbbbbbb")) == []
    assert await store.add(proposal(3)) == ["pr_000000000001"]
    assert [p.id for p in store.pending(node_id="rm_aaaaaaaa")] == ["pr_000000000003"]
    assert [p.id for p in store.pending(path=PATH)] == [
        "pr_000000000002",
        "pr_000000000003",
    ]
    assert store.pending(path="other.py") == []
    first = store.get("pr_000000000001")
    assert first is not None and first.status == "superseded" and first.decided_at


async def test_a_rewrite_and_a_new_helper_of_the_same_node_stand_together():
    store = ProposalStore(None)
    helper = "\n\n\ndef helper():\n    pass"
    await store.add(proposal(1, kind="new_node", new_source=helper))
    assert await store.add(proposal(2)) == []
    other = "\n\n\n@cache\nasync def other():\n    pass"
    assert await store.add(proposal(3, kind="new_node", new_source=other)) == []
    again = "\n\n\ndef helper():\n    return 1"
    assert await store.add(proposal(4, kind="new_node", new_source=again)) == [
        "pr_000000000001"
    ]
    assert [p.id[-1] for p in store.pending(node_id="rm_aaaaaaaa")] == ["2", "3", "4"]


async def test_decisions_are_final_and_explained():
    store = ProposalStore(None)
    await store.add(proposal(1))
    accepted = await store.decide("pr_000000000001", "accepted")
    assert accepted.status == "accepted" and accepted.decided_at is not None
    assert store.pending() == []
    with pytest.raises(
        ProposalError, match=r"^proposal pr_000000000001 is already accepted$"
    ):
        await store.decide("pr_000000000001", "rejected", "no")
    with pytest.raises(ProposalError, match=r"^there is no proposal pr_nope$"):
        await store.decide("pr_nope", "accepted")
    await store.add(proposal(2))
    with pytest.raises(ProposalError, match="not 'superseded'"):
        await store.decide("pr_000000000002", "superseded")


async def test_list_is_newest_first_and_filters():
    store = ProposalStore(None)
    for n in range(1, 4):
        await store.add(proposal(n, node_id=f"rm_{n:08d}", path=f"f{n % 2}.py"))
    await store.decide("pr_000000000002", "rejected", "too clever")
    assert [p.id[-1] for p in store.list()] == ["3", "2", "1"]
    assert [p.id[-1] for p in store.list(path="f1.py")] == ["3", "1"]
    assert [p.id[-1] for p in store.list(status="rejected")] == ["2"]
    assert store.list(status="rejected")[0].feedback == "too clever"


async def test_renaming_a_file_or_folder_moves_its_proposals():
    store = ProposalStore(None)
    await store.add(proposal(1, node_id="rm_1", path="pkg/box.py"))
    await store.add(proposal(2, node_id="rm_2", path="pkg/sub/deep.py"))
    await store.add(proposal(3, node_id="rm_3", path="pkg/boxes.py"))
    await store.move_file("pkg/box.py", "pkg/crate.py")
    await store.move_file("pkg/sub", "lib/sub")
    assert {p.id[-1]: p.file_path for p in store.list()} == {
        "1": "pkg/crate.py",
        "2": "lib/sub/deep.py",
        "3": "pkg/boxes.py",
    }
    assert [p.id[-1] for p in store.pending(path="pkg/crate.py")] == ["1"]
    assert store.pending(path="pkg/box.py") == []


async def test_nothing_is_lost_on_restart(tmp_path):
    database = await Database.open(tmp_path)
    store = ProposalStore(database)
    await store.add(proposal(1, node_id="rm_1"))
    await store.add(proposal(2, node_id="rm_1"))  # supersedes 1
    await store.add(proposal(3, node_id="rm_3", path="pkg/old.py"))
    await store.add(proposal(4, node_id="rm_4"))
    await store.decide("pr_000000000003", "rejected", "not like this")
    await store.move_file("pkg/old.py", "pkg/new.py")
    await database.close()

    database = await Database.open(tmp_path)
    try:
        reopened = ProposalStore(database)
        await reopened.load()
        assert {p.id[-1]: p.status for p in reopened.list()} == {
            "1": "superseded",
            "2": "pending",
            "3": "rejected",
            "4": "pending",
        }
        rejected = reopened.get("pr_000000000003")
        assert rejected is not None
        assert (rejected.feedback, rejected.file_path) == (
            "not like this",
            "pkg/new.py",
        )
        assert reopened.get("pr_000000000002") == store.get("pr_000000000002")
        assert [p.id[-1] for p in reopened.pending(node_id="rm_1")] == ["2"]
    finally:
        await database.close()


def test_to_json_carries_every_field():
    data = proposal(7).to_json()
    assert data["id"] == "pr_000000000007" and data["status"] == "pending"
    assert Proposal(**data) == proposal(7)
