"""The two sets of 12 requests ``bench/agent_tasks.py`` asks the embedded model.

Set ``a`` is the original set: one small top-level function per task (a
docstring, type hints, renames, validation, bug fixes, a simpler loop, a default
argument). Set ``b`` asks the same kinds of things of the shapes that make a
small model stumble: methods inside classes, ``async`` functions, decorated
functions, functions that already have a docstring, multi-line strings (whose
indentation is part of their value) and a request made of a whole class.

Each task is one module (its own file in the benchmark's project), the node
asked (``target``: a dotted qualified name, ``Cart.total`` for a method), the
request a person would type, and an automatic check. A check receives the AST
of the proposed definition and the namespace of the module executed with the
proposal applied, and raises ``AssertionError`` saying what is wrong.
"""

from __future__ import annotations

import ast
import asyncio
import concurrent.futures
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
Check = Callable[[Definition, dict[str, Any]], None]


@dataclass(frozen=True)
class Task:
    """One request to one node, with its automatic check."""

    name: str
    source: str
    """The whole module."""
    target: str
    """Qualified name of the node asked (``Class.method`` for a method)."""
    request: str
    check: Check
    renamed_to: str = ""
    """The definition's name after the rewrite ('' = unchanged)."""

    @property
    def new_name(self) -> str:
        """The definition's name after the rewrite."""
        return self.renamed_to or self.target.rsplit(".", 1)[-1]


# ---- helpers of the checks -----------------------------------------------------------


def raises(exception: type[BaseException], call: Callable[[], Any]) -> None:
    """Assert that ``call`` raises ``exception``."""
    try:
        call()
    except exception:
        return
    raise AssertionError(f"expected {exception.__name__}")


def params(node: Definition, skip_self: bool = False) -> list[ast.arg]:
    """The parameters of a function definition (without ``self`` if asked)."""
    assert not isinstance(node, ast.ClassDef), "not a function"
    args = node.args
    found = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if skip_self and found and found[0].arg in ("self", "cls"):
        found = found[1:]
    return found


def body_without_docstring(node: Definition) -> str:
    """The body without its docstring, as an AST dump (annotations removed)."""
    body = node.body
    if ast.get_docstring(node) is not None:
        body = body[1:]
    return "\n".join(ast.dump(statement) for statement in body)


def unchanged_code(node: Definition, original: str, target: str) -> None:
    """Assert the body is the original's (docstrings aside)."""
    before = find(ast.parse(original), target)
    assert body_without_docstring(node) == body_without_docstring(before), (
        "the code was changed, not only documented or annotated"
    )


def find(tree: ast.Module, qualified: str) -> Definition:
    """The definition called ``qualified`` (dotted) in a module's AST."""
    scope: list[ast.stmt] = tree.body
    found: Definition | None = None
    for part in qualified.split("."):
        found = next(
            (
                s
                for s in scope
                if isinstance(s, Definition) and s.name == part  # type: ignore[arg-type]
            ),
            None,
        )
        assert found is not None, f"{qualified} not found"
        scope = found.body
    assert found is not None
    return found


def docstring(node: Definition) -> str:
    """The definition's docstring; AssertionError if it has none worth the name."""
    doc = ast.get_docstring(node)
    assert doc and len(doc.strip()) >= 10, "no docstring"
    return doc


def hinted(node: Definition, skip_self: bool = False) -> None:
    """Assert every parameter and the return value are annotated."""
    assert all(a.annotation is not None for a in params(node, skip_self)), (
        "a parameter has no hint"
    )
    assert not isinstance(node, ast.ClassDef) and node.returns is not None, (
        "no return hint"
    )


def run(coroutine: Any) -> Any:
    """The result of an ``async`` function's coroutine (on a loop of its own in
    a thread: the benchmark's checks are called from inside its event loop).
    """
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


# ---- set a: twelve small top-level functions ----------------------------------------

AVERAGE = "def average(values):\n    return sum(values) / len(values)\n"
REPEAT = "def repeat(text, times):\n    return text * times\n"


def _a(name: str, source: str, target: str, request: str, check: Check, **kw: Any):
    return Task(name, source, target, request, check, **kw)


def _fn(check: Callable[[Definition, Callable[..., Any]], None], name: str) -> Check:
    """A check of the function called ``name`` in the namespace."""
    return lambda node, namespace: check(node, namespace[name])


def check_docstring(node: Definition, fn: Callable[..., Any]) -> None:
    docstring(node)
    unchanged_code(node, AVERAGE, "average")
    assert fn([2, 4, 9]) == 5 and fn([1.5]) == 1.5, "behaviour changed"


def check_hints(node: Definition, fn: Callable[..., Any]) -> None:
    hinted(node)
    unchanged_code(node, REPEAT, "repeat")
    assert fn("ab", 3) == "ababab", "behaviour changed"


def check_rename_params(node: Definition, fn: Callable[..., Any]) -> None:
    names = [a.arg for a in params(node)]
    assert names == ["width", "height"], f"parameters are {names}"
    assert fn(3, 4) == 12 and fn(width=2, height=5) == 10, "behaviour changed"


def check_validation(node: Definition, fn: Callable[..., Any]) -> None:
    raises(ValueError, lambda: fn(-4))
    assert fn(16) == 4 and fn(17) == 4 and fn(0) == 0, "behaviour changed"


def check_bug_even(node: Definition, fn: Callable[..., Any]) -> None:
    assert fn(2) is True and fn(0) is True and fn(-4) is True, "even numbers"
    assert fn(3) is False and fn(-1) is False, "odd numbers"


def check_simplify(node: Definition, fn: Callable[..., Any]) -> None:
    loops = [n for n in ast.walk(node) if isinstance(n, (ast.For, ast.While))]
    assert not loops, "still has a loop"
    assert fn([1, 2, 3.5]) == 6.5 and fn([]) == 0, "behaviour changed"


def check_default(node: Definition, fn: Callable[..., Any]) -> None:
    assert fn("Ann") == "Hello, Ann!", f"greet('Ann') == {fn('Ann')!r}"
    assert fn("Bob", "Hi") == "Hi, Bob!", "an explicit greeting is ignored"


def check_off_by_one(node: Definition, fn: Callable[..., Any]) -> None:
    assert fn([1, 2, 3]) == 3 and fn(["x"]) == "x", "not the last item"


def check_empty(node: Definition, fn: Callable[..., Any]) -> None:
    assert fn([]) == 0, f"mean([]) == {fn([])!r}"
    assert fn([2, 4]) == 3 and fn([5]) == 5, "behaviour changed"


def check_uppercase(node: Definition, fn: Callable[..., Any]) -> None:
    assert fn("AEIOU") == 5 and fn("Banana") == 3, "uppercase vowels not counted"
    assert fn("xyz") == 0 and fn("hello") == 2, "behaviour changed"


def check_rename_function(node: Definition, fn: Callable[..., Any]) -> None:
    assert fn(2, 3) == 5 and fn(-1, 1) == 0, "behaviour changed"


def check_new_parameter(node: Definition, fn: Callable[..., Any]) -> None:
    assert "sep" in [a.arg for a in params(node)], "no parameter sep"
    assert fn(["a", "b"]) == "a b", "default separator is not a space"
    assert fn(["a", "b", "c"], sep="-") == "a-b-c", "sep is not used"


SET_A: list[Task] = [
    _a("docstring", AVERAGE, "average", "Add a docstring.",
       _fn(check_docstring, "average")),
    _a("type_hints", REPEAT, "repeat",
       "Add type hints to the parameters and the return value.",
       _fn(check_hints, "repeat")),
    _a("rename_params", "def area(w, h):\n    return w * h\n", "area",
       "Rename the parameters w and h to width and height.",
       _fn(check_rename_params, "area")),
    _a("validate_input", "def int_sqrt(n):\n    return int(n ** 0.5)\n", "int_sqrt",
       "Raise a ValueError when n is negative.", _fn(check_validation, "int_sqrt")),
    _a("fix_described_bug", "def is_even(n):\n    return n % 2 == 1\n", "is_even",
       "Fix the bug: it returns True for odd numbers instead of even ones.",
       _fn(check_bug_even, "is_even")),
    _a("simplify_loop",
       "def total(prices):\n    result = 0\n    for price in prices:\n"
       "        result = result + price\n    return result\n", "total",
       "Simplify this: use the built-in sum instead of the loop.",
       _fn(check_simplify, "total")),
    _a("default_argument",
       'def greet(name, greeting):\n    return f"{greeting}, {name}!"\n', "greet",
       'Give the greeting parameter the default value "Hello".',
       _fn(check_default, "greet")),
    _a("fix_index_error", "def last(items):\n    return items[len(items)]\n", "last",
       "This raises IndexError. Fix it so that it returns the last item.",
       _fn(check_off_by_one, "last")),
    _a("handle_empty", "def mean(values):\n    return sum(values) / len(values)\n",
       "mean", "Return 0 when values is empty instead of crashing.",
       _fn(check_empty, "mean")),
    _a("uppercase_vowels",
       'def count_vowels(text):\n    return sum(1 for c in text if c in "aeiou")\n',
       "count_vowels", "Make it count uppercase vowels too.",
       _fn(check_uppercase, "count_vowels")),
    _a("rename_function", "def calc(a, b):\n    return a + b\n", "calc",
       "Rename this function to add_numbers.",
       _fn(check_rename_function, "add_numbers"), renamed_to="add_numbers"),
    _a("add_parameter", 'def join_words(words):\n    return " ".join(words)\n',
       "join_words",
       'Add a parameter sep with the default value " " and use it as the separator.',
       _fn(check_new_parameter, "join_words")),
]  # fmt: skip


# ---- set b: methods, async, decorators, docstrings, multi-line strings, a class ------

CART = """class Cart:
    def __init__(self, prices):
        self.prices = prices

    def total(self):
        return sum(self.prices)
"""

STACK = """class Stack:
    def __init__(self):
        self.items = []

    def push(self, item, times):
        for _ in range(times):
            self.items.append(item)
        return len(self.items)
"""

COUNTER = """class Counter:
    def __init__(self):
        self.count = 0

    def increment(self):
        self.count -= 1
        return self.count
"""

FETCH = "async def fetch_total(values):\n    return sum(values)\n"

SCALED = "async def scaled(x, factor):\n    return x / factor\n"

SQUARE = (
    "import functools\n\n\n@functools.lru_cache(maxsize=None)\n"
    "def square(n):\n    return n * n\n"
)

FIB = (
    "import functools\n\n\n@functools.lru_cache(maxsize=None)\n"
    "def fib(n):\n    return fib(n - 1) + fib(n - 2)\n"
)

CLAMP = '''def clamp(x, low, high):
    """Return x."""
    return max(low, min(x, high))
'''

SMALLEST = '''def smallest(values):
    """The smallest of the values."""
    return min(values)
'''

BANNER = '''def banner(name):
    text = """Welcome,
{name}!
  Enjoy your stay.
"""
    return text.format(name=name)
'''

QUERY = '''def user_query(table, limit):
    return f"""SELECT *
  FROM {table}
 LIMIT {limit}"""
'''

POINT = """class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y
"""


def check_method_docstring(node: Definition, ns: dict[str, Any]) -> None:
    docstring(node)
    unchanged_code(node, CART, "Cart.total")
    assert ns["Cart"]([1, 2.5]).total() == 3.5, "behaviour changed"


def check_method_hints(node: Definition, ns: dict[str, Any]) -> None:
    hinted(node, skip_self=True)
    unchanged_code(node, STACK, "Stack.push")
    stack = ns["Stack"]()
    assert stack.push("x", 2) == 2 and stack.items == ["x", "x"], "behaviour changed"


def check_method_fix(node: Definition, ns: dict[str, Any]) -> None:
    counter = ns["Counter"]()
    assert counter.increment() == 1 and counter.increment() == 2, "does not add one"


def check_async_docstring(node: Definition, ns: dict[str, Any]) -> None:
    assert isinstance(node, ast.AsyncFunctionDef), "no longer async"
    docstring(node)
    unchanged_code(node, FETCH, "fetch_total")
    assert run(ns["fetch_total"]([1, 2, 3])) == 6, "behaviour changed"


def check_async_validation(node: Definition, ns: dict[str, Any]) -> None:
    assert isinstance(node, ast.AsyncFunctionDef), "no longer async"
    raises(ValueError, lambda: run(ns["scaled"](3, 0)))
    assert run(ns["scaled"](3, 2)) == 1.5, "behaviour changed"


def check_decorated_hints(node: Definition, ns: dict[str, Any]) -> None:
    assert node.decorator_list, "the decorator was dropped"
    hinted(node)
    unchanged_code(node, SQUARE, "square")
    assert ns["square"](7) == 49 and ns["square"].cache_info(), "behaviour changed"


def check_decorated_fix(node: Definition, ns: dict[str, Any]) -> None:
    assert node.decorator_list, "the decorator was dropped"
    fib = ns["fib"]
    assert fib(0) == 0 and fib(1) == 1, "base cases"
    assert fib(10) == 55, f"fib(10) == {fib(10)}"


def check_docstring_update(node: Definition, ns: dict[str, Any]) -> None:
    doc = docstring(node)
    assert doc.strip() != "Return x.", "the docstring was not updated"
    unchanged_code(node, CLAMP, "clamp")
    assert ns["clamp"](5, 0, 3) == 3 and ns["clamp"](-1, 0, 3) == 0, "behaviour"


def check_docstring_kept(node: Definition, ns: dict[str, Any]) -> None:
    assert ast.get_docstring(node), "the existing docstring was dropped"
    assert ns["smallest"]([]) == 0, "an empty list does not give 0"
    assert ns["smallest"]([3, 1, 2]) == 1, "behaviour changed"


def check_multiline_docstring(node: Definition, ns: dict[str, Any]) -> None:
    docstring(node)
    unchanged_code(node, BANNER, "banner")
    expected = "Welcome,\nAnn!\n  Enjoy your stay.\n"
    assert ns["banner"]("Ann") == expected, "the multi-line string changed"


def check_multiline_hints(node: Definition, ns: dict[str, Any]) -> None:
    hinted(node)
    unchanged_code(node, QUERY, "user_query")
    expected = "SELECT *\n  FROM users\n LIMIT 5"
    assert ns["user_query"]("users", 5) == expected, "the multi-line string changed"


def check_class_repr(node: Definition, ns: dict[str, Any]) -> None:
    assert isinstance(node, ast.ClassDef), "not a class"
    point = ns["Point"](1, 2)
    assert (point.x, point.y) == (1, 2), "behaviour changed"
    assert repr(point) == "Point(1, 2)", f"repr is {point!r}"


SET_B: list[Task] = [
    Task("method_docstring", CART, "Cart.total", "Add a docstring.",
         check_method_docstring),
    Task("method_hints", STACK, "Stack.push",
         "Add type hints to the parameters and the return value.",
         check_method_hints),
    Task("method_fix", COUNTER, "Counter.increment",
         "Fix the bug: increment must add one to count, not subtract.",
         check_method_fix),
    Task("async_docstring", FETCH, "fetch_total", "Add a docstring.",
         check_async_docstring),
    Task("async_validation", SCALED, "scaled",
         "Raise a ValueError when factor is zero.", check_async_validation),
    Task("decorated_hints", SQUARE, "square",
         "Add type hints to the parameter and the return value.",
         check_decorated_hints),
    Task("decorated_fix", FIB, "fib",
         "Fix it: it never stops. fib(0) must be 0 and fib(1) must be 1.",
         check_decorated_fix),
    Task("docstring_update", CLAMP, "clamp",
         "The docstring is wrong. Update it to say what the function does.",
         check_docstring_update),
    Task("docstring_kept", SMALLEST, "smallest",
         "Return 0 when values is empty.", check_docstring_kept),
    Task("multiline_docstring", BANNER, "banner", "Add a docstring.",
         check_multiline_docstring),
    Task("multiline_hints", QUERY, "user_query",
         "Add type hints to the parameters and the return value.",
         check_multiline_hints),
    Task("class_repr", POINT, "Point",
         "Add a __repr__ method that returns Point(x, y) with the values, "
         "like Point(1, 2).", check_class_repr),
]  # fmt: skip

SETS = {"a": SET_A, "b": SET_B}
