"""Grafting: the original definition with only the guarded parts of a reply.

Hand-built pairs of an original and a model's reply that changed more than
asked; each graft must pass the same guard (checked here too) and keep every
other character of the original.
"""

from __future__ import annotations

import pytest
from remora_core.grafting import graft
from remora_core.guards import Guard, check_guard

DOCSTRING = Guard(frozenset({"docstring"}))
HINTS = Guard(frozenset({"type_hints"}))
BOTH = Guard(frozenset({"docstring", "type_hints"}))


def grafted(guard: Guard, old: str, new: str, indent: str = "") -> str:
    result = graft(guard, old, new, indent)
    assert result is not None
    check = check_guard(guard, old, result.text, indent)
    assert check.ok is True
    return result.text


def test_a_docstring_is_taken_and_the_changed_body_left_out():
    old = "def average(values):\n    return sum(values) / len(values)"
    new = (
        'def average(values):\n    """\n    The mean of values.\n\n'
        '    Returns:\n    float: the mean.\n    """\n    if not values:\n'
        '        raise ValueError("empty")\n    return sum(values) / len(values)'
    )
    assert grafted(DOCSTRING, old, new) == (
        'def average(values):\n    """\n    The mean of values.\n\n'
        '    Returns:\n    float: the mean.\n    """\n'
        "    return sum(values) / len(values)"
    )
    assert graft(DOCSTRING, old, new).taken == ("its docstring",)


def test_a_method_as_the_file_holds_it_gets_the_docstring_at_its_column():
    # The file's text: first line at its place, later lines indented by 4.
    old = "def total(self):\n        return sum(self.prices)  # all of them"
    new = (
        'def total(self):\n    """Sum of the prices.\n\n    Empty: 0."""\n    return 0'
    )
    assert grafted(DOCSTRING, old, new, "    ") == (
        'def total(self):\n        """Sum of the prices.\n\n        Empty: 0."""\n'
        "        return sum(self.prices)  # all of them"
    )


def test_an_existing_docstring_is_replaced_in_place():
    old = 'def clamp(x, low, high):\n    """Return x."""  # wrong\n    return x'
    new = (
        'def clamp(x, low, high):\n    """Clamp x between low and high."""\n'
        "    return max(low, min(x, high))"
    )
    assert grafted(DOCSTRING, old, new) == (
        'def clamp(x, low, high):\n    """Clamp x between low and high."""  # wrong\n'
        "    return x"
    )


def test_a_string_of_the_code_moved_into_the_docstring_is_not_taken():
    old = (
        'def banner(name):\n    text = """Welcome,\n{name}!\n"""\n'
        "    return text.format(name=name)"
    )
    new = (
        'def banner(name):\n    """\n    Welcome,\n    {name}!\n    """\n'
        "    return text.format(name=name)"
    )
    assert graft(DOCSTRING, old, new) is None


def test_hints_are_taken_and_a_multi_line_string_kept_as_it_was():
    old = (
        "def user_query(table, limit):\n"
        '    return f"""SELECT *\n  FROM {table}\n LIMIT {limit}"""'
    )
    new = (
        "def user_query(table: str, limit: int) -> str:\n"
        '    return f"""SELECT *\n  FROM {table}\n  LIMIT {limit}"""'
    )
    assert grafted(HINTS, old, new) == (
        "def user_query(table: str, limit: int) -> str:\n"
        '    return f"""SELECT *\n  FROM {table}\n LIMIT {limit}"""'
    )


def test_hints_go_by_parameter_name_on_a_decorated_multi_line_signature():
    old = (
        "@functools.cache\ndef scale(\n    x,  # the value\n    *args,\n"
        "    factor=2,\n    **options,\n):\n    return x * factor"
    )
    new = (
        "def scale(x: float, *args: int, factor: float = 3, **options: str)"
        " -> float:\n    return x * factor * 2"
    )
    assert grafted(HINTS, old, new) == (
        "@functools.cache\ndef scale(\n    x: float,  # the value\n"
        "    *args: int,\n    factor: float=2,\n    **options: str,\n) -> float:\n"
        "    return x * factor"
    )


def test_a_hint_naming_what_the_original_does_not_read_is_left_out():
    old = "def first(items):\n    return items[0]"
    new = (
        "def first(items: List[int]) -> Optional[int]:\n"
        "    return items[0] if items else None"
    )
    assert graft(HINTS, old, new) is None


def test_columns_are_characters_not_bytes():
    old = 'def greet(name="Zoë", count=1):\n    return name * count'
    new = 'def greet(name: str = "Zoë", count: int = 1) -> str:\n    return name'
    assert grafted(HINTS, old, new) == (
        'def greet(name: str="Zoë", count: int=1) -> str:\n    return name * count'
    )


def test_docstring_and_hints_together_and_a_class_docstring():
    old = "def area(w, h):\n    return w * h"
    new = (
        'def area(w: float, h: float) -> float:\n    """Width times height."""\n'
        "    return w * h + 0"
    )
    assert grafted(BOTH, old, new) == (
        'def area(w: float, h: float) -> float:\n    """Width times height."""\n'
        "    return w * h"
    )
    old_class = "class Point:\n    x = 0\n\n    def move(self):\n        pass"
    new_class = 'class Point:\n    """A point."""\n\n    x = 1'
    assert grafted(DOCSTRING, old_class, new_class) == (
        'class Point:\n    """A point."""\n    x = 0\n\n'
        "    def move(self):\n        pass"
    )


@pytest.mark.parametrize(
    ("guard", "old", "new"),
    [
        # A rename is all code: never grafted.
        (
            Guard(frozenset({"rename"})),
            "def f(a):\n    return a",
            "def g(b):\n    return b + 1",
        ),
        # The body shares the header's line: no place for a docstring.
        (DOCSTRING, "def f(a): return a", 'def f(a):\n    """Doc."""\n    return 1'),
        # Nothing asked for is in the reply.
        (DOCSTRING, "def f(a):\n    return a", "def f(a):\n    return a + 1"),
        # Not one definition, or not the same kind.
        (DOCSTRING, "def f(a):\n    return a", 'class f:\n    """Doc."""'),
        (DOCSTRING, "def f(a):\n    return a", "x = 1"),
        (HINTS, "def f(a):\n    return a", "def f(a:"),
    ],
)
def test_nothing_to_graft(guard, old, new):
    assert graft(guard, old, new) is None
