"""Intent guards on the AST (``guards.py``) and intents read from requests.

Property tests draw definitions from hand-built parts — decorators, defaults,
f-strings, nested definitions, ``async`` — render them with and without
docstrings, annotations and renamed names, and check that the guard lets
through exactly what it allows, and that every hand-built change of
behaviour is refused with a line the model can find.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from remora_core.review.guards import Guard, GuardViolation, check_guard
from remora_core.review.intent import guard_for, read_intent

DOCSTRING = Guard(frozenset({"docstring"}))
HINTS = Guard(frozenset({"type_hints"}))
RENAME = Guard(frozenset({"rename"}))


@dataclasses.dataclass(frozen=True)
class Spec:
    """A function built from parts."""

    name: str
    params: tuple[str, ...]
    default: int | None
    decorator: str | None
    is_async: bool
    fstring: str
    nested: bool
    inner_value: int
    indent: str


specs = st.builds(
    Spec,
    name=st.sampled_from(["quote", "total", "price_for"]),
    params=st.sampled_from([("item",), ("item", "qty"), ("a", "b", "c")]),
    default=st.none() | st.integers(0, 5),
    decorator=st.none() | st.sampled_from(["functools.cache", "staticmethod"]),
    is_async=st.booleans(),
    fstring=st.sampled_from(["{x}!", "total: {x:>4}", "{x!r}"]),
    nested=st.booleans(),
    inner_value=st.integers(0, 3),
    indent=st.sampled_from(["", "    "]),
)
docstrings = st.sampled_from(
    ['"""Quote it."""', '"""Quote it.\n\nArgs:\n    item: what.\n"""', "'''x'''"]
)


def render(
    spec: Spec,
    docstring: str | None = None,
    *,
    annotate: bool = False,
    names: dict[str, str] | None = None,
    comment: bool = False,
) -> str:
    """The source of ``spec`` as the file holds it (later lines indented)."""
    names = names or {}

    def n(identifier: str) -> str:
        return names.get(identifier, identifier)

    params = []
    for index, param in enumerate(spec.params):
        text = n(param) + (": int" if annotate else "")
        if index == len(spec.params) - 1 and spec.default is not None:
            text += " = " if annotate else "="
            text += str(spec.default)
        params.append(text)
    lines = [f"@{spec.decorator}"] if spec.decorator else []
    keyword = "async def" if spec.is_async else "def"
    returns = " -> str" if annotate else ""
    lines.append(f"{keyword} {n(spec.name)}({', '.join(params)}){returns}:")
    body = []
    if docstring:
        body += docstring.splitlines()
    if comment:
        body.append("# why: the price includes VAT")
    first = n(spec.params[0])
    body.append(f"x{': int' if annotate else ''} = {first}")
    if spec.nested:
        body.append(f"def inner(){' -> int' if annotate else ''}:")
        body.append(f"    return {spec.inner_value}")
        body.append("x = inner() + x")
    if spec.is_async:
        body.append("await helper(x)")
    body.append(f'return f"{spec.fstring}"')
    lines += ["    " + line if line else "" for line in body]
    return ("\n" + spec.indent).join(lines)


def refused(guard: Guard, old: str, new: str, indent: str) -> str:
    with pytest.raises(GuardViolation) as raised:
        check_guard(guard, old, new, indent)
    return str(raised.value)


# ---- what a guard allows passes --------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(specs, st.none() | docstrings, docstrings)
def test_a_new_docstring_or_comment_passes_the_docstring_guard(spec, old_doc, new_doc):
    old = render(spec, old_doc)
    new = render(spec, new_doc, comment=True)
    check = check_guard(DOCSTRING, old, new, spec.indent)
    assert check.ok and check.name == "docstring-only"
    assert check.detail == "code unchanged except docstrings"


@settings(max_examples=60, deadline=None)
@given(specs)
def test_annotations_pass_the_type_hints_guard_but_not_the_docstring_one(spec):
    old, new = render(spec), render(spec, annotate=True)
    assert check_guard(HINTS, old, new, spec.indent).ok
    assert "you changed the code: line" in refused(DOCSTRING, old, new, spec.indent)


@settings(max_examples=60, deadline=None)
@given(specs)
def test_a_consistent_rename_passes_the_rename_guard(spec):
    first = spec.params[0]
    old = render(spec)
    new = render(spec, names={first: f"{first}_renamed"})
    asked = Guard(frozenset({"rename"}), ((first, f"{first}_renamed"),))
    check = check_guard(asked, old, new, spec.indent)
    assert check.ok and f"{first} → {first}_renamed" in check.detail
    assert check_guard(RENAME, old, new, spec.indent).ok
    other = Guard(frozenset({"rename"}), (("zzz", "yyy"),))
    assert "which was not asked" in refused(other, old, new, spec.indent)


# ---- a change of behaviour is refused, with its line --------------------------------

MUTATIONS = {
    "default": lambda s: dataclasses.replace(
        s, default=(s.default or 0) + 1 if s.default is not None else 7
    ),
    "f-string": lambda s: dataclasses.replace(s, fstring=s.fstring + "?"),
    "decorator": lambda s: dataclasses.replace(
        s, decorator=None if s.decorator else "functools.cache"
    ),
    "async": lambda s: dataclasses.replace(s, is_async=not s.is_async),
    "nested": lambda s: dataclasses.replace(
        s, nested=True, inner_value=s.inner_value + 1
    ),
}


@settings(max_examples=100, deadline=None)
@given(specs, st.sampled_from(sorted(MUTATIONS)), docstrings)
def test_every_change_of_behaviour_is_refused_by_each_guard(spec, mutation, doc):
    old = render(spec)
    changed = MUTATIONS[mutation](spec)
    for guard, new in (
        (DOCSTRING, render(changed, doc)),
        (HINTS, render(changed, annotate=True)),
        (RENAME, render(changed, names={"x": "value"})),
    ):
        message = refused(guard, old, new, spec.indent)
        assert message.startswith("you changed the code: ")
        assert "line" in message and "`" in message
        assert f"only {guard.allowed} may change" in message


# ---- hand-built pairs: the messages a model reads ----------------------------------

QUOTE = """def quote(item, qty=1):
    price = item.price * qty
    return with_vat(price)"""


def test_a_dropped_call_is_named_with_its_line():
    new = '''def quote(item, qty=1):
    """The price of qty items."""
    price = item.price * qty
    return price'''
    message = refused(DOCSTRING, QUOTE, new, "")
    assert message.startswith(
        "you changed the code: line 4 `return price` differs from the original "
        "`return with_vat(price)`; only docstrings and comments may change."
    )


def test_added_and_removed_lines_are_named():
    added = QUOTE.replace("    return", "    log(price)\n    return")
    assert "line 3 `log(price)` was added" in refused(DOCSTRING, QUOTE, added, "")
    removed = QUOTE.replace("    price = item.price * qty\n", "")
    message = refused(DOCSTRING, QUOTE, removed, "")
    assert "the original line 2 `price = item.price * qty` is missing" in message


def test_constants_are_compared_by_type():
    message = refused(
        DOCSTRING, "def f():\n    return 1", "def f():\n    return True", ""
    )
    assert "line 2 `return True` differs from the original `return 1`" in message


def test_a_docstring_may_replace_pass_and_an_f_string_is_not_a_docstring():
    assert check_guard(DOCSTRING, "def f():\n    pass", 'def f():\n    """Doc."""', "")
    message = refused(
        DOCSTRING, "def f(x):\n    return x", 'def f(x):\n    f"{x}"\n    return x', ""
    )
    assert 'line 2 `f"{x}"` was added' in message


def test_type_hints_may_bring_the_imports_they_need_only():
    old = "def load(path):\n    return open(path)"
    new = (
        "def load(path: str) -> IO[str]:\n"
        "    from typing import IO\n"
        "    return open(path)"
    )
    assert check_guard(HINTS, old, new, "").ok
    used = "def load(path):\n    from os import fspath\n    return open(fspath(path))"
    assert "line 2 `from os import fspath`" in refused(HINTS, old, used, "")


def test_an_inconsistent_rename_is_refused():
    old = "def f(a, b):\n    return a + b"
    message = refused(RENAME, old, "def f(x, b):\n    return a + b", "")
    assert "the name `a` became `a` and `x` in different places" in message
    merged = refused(
        RENAME, "def f(a):\n    return a + b", "def f(c):\n    return c + c", ""
    )
    assert "`a` and `b` both became the name `c`" in merged


# ---- intents read from requests ------------------------------------------------------


@pytest.mark.parametrize(
    ("request_text", "kinds"),
    [
        ("Add a docstring that says what this function does.", {"docstring"}),
        ("Docstring please", {"docstring"}),
        ("Document this function", {"docstring"}),
        ("Please add type hints", {"type_hints"}),
        ("Annotate the parameters and add a docstring", {"type_hints", "docstring"}),
        ("Rename `qty` to `quantity`", {"rename"}),
        ("Improve yourself please", None),
        ("Add a docstring and make it faster", None),
        ("Fix the rounding bug mentioned in the comment", None),
        ("What does this do?", None),
    ],
)
def test_the_guard_a_request_implies(request_text, kinds):
    guard = guard_for([request_text])
    assert (guard.kinds if guard else None) == (frozenset(kinds) if kinds else None)


def test_a_rename_request_names_its_pair_and_silence_keeps_a_guard():
    assert read_intent("rename the parameter qty to quantity").renames == (
        ("qty", "quantity"),
    )
    assert guard_for(["Shorter, please"], inherited=DOCSTRING) is DOCSTRING
    assert guard_for(["Also fix the bug"], inherited=DOCSTRING) is None


def test_renaming_the_node_itself_names_no_old_name_and_keeps_its_full_stop_out():
    # "this function" is the node, not a name in it: any consistent rename.
    asked = read_intent("Rename this function to add_numbers.")
    assert asked.kinds == {"rename"} and asked.renames == ()
    check = check_guard(
        guard_for(["Rename this function to add_numbers."]),
        "def calc(a, b):\n    return a + b",
        "def add_numbers(a, b):\n    return a + b",
        "",
    )
    assert check.ok
    assert read_intent("rename load to load_config.").renames == (
        ("load", "load_config"),
    )
