"""Intent guards: a proposal that must not change behaviour, checked on the AST.

A request whose intent is documentation, type annotations or a rename must
not change what the code does (DESIGN §9). :class:`Guard` names what may
differ — ``docstring`` (docstrings; comments are not in the AST at all),
``type_hints`` (annotations, and imports only annotations use) and ``rename``
(identifiers, renamed consistently; docstrings may follow) — and
:func:`check_guard` compares the old and the new definition as Python ASTs
with those parts removed. Everything else is compared exactly: decorators,
defaults, f-strings (a ``JoinedStr`` is never a docstring), nested
definitions, ``async``, constants by type and value (``1`` is not ``True``).

A difference raises :class:`GuardViolation` whose message tells the model
what it changed and where, with line numbers counted from the first line of
the definition it sent ("line 3 `return price` differs from the original
`return with_vat(price)`"). A match returns a passed :class:`Check`
("code unchanged except docstrings").
"""

from __future__ import annotations

import ast
import logging
from dataclasses import dataclass, field
from typing import Any

from remora_core.review.checks import Check
from remora_core.review.source_checks import ProposalError

log = logging.getLogger(__name__)

GUARD_KINDS = ("docstring", "type_hints", "rename")
"""Every guard a bundle may declare or a request may imply."""

_ALLOWED = {
    "docstring": "docstrings and comments",
    "type_hints": "type annotations (and the imports they need)",
    "rename": "the renamed names",
}
_CHECK_NAMES = {
    "docstring": "docstring-only",
    "type_hints": "type-hints-only",
    "rename": "rename-only",
}


@dataclass(frozen=True)
class Guard:
    """What a proposal may change, and why (for messages)."""

    kinds: frozenset[str]
    """A non-empty subset of :data:`GUARD_KINDS`."""
    renames: tuple[tuple[str, str], ...] = ()
    """Renames the request named (old, new); empty: any consistent renaming."""
    asked: str = ""
    """What was asked, as a person reads it (the request, or the bundle)."""

    @property
    def name(self) -> str:
        """The check's name: ``docstring-only``, ``docstring+type-hints-only``…."""
        names = [_CHECK_NAMES[k].removesuffix("-only") for k in self._ordered()]
        return "+".join(names) + "-only"

    @property
    def allowed(self) -> str:
        """What may differ, in words."""
        parts = [_ALLOWED[k] for k in self._ordered()]
        if self.renames and "rename" in self.kinds:
            index = self._ordered().index("rename")
            parts[index] = "the names " + ", ".join(
                f"{old} → {new}" for old, new in self.renames
            )
        return " and ".join(parts)

    def _ordered(self) -> list[str]:
        return [k for k in GUARD_KINDS if k in self.kinds]


class GuardViolation(ProposalError):
    """A proposal changed more than its guard allows; the message is for the model."""

    def __init__(self, guard: Guard, change: str) -> None:
        self.guard = guard
        self.change = change
        """What changed, e.g. "line 3 `return price` differs from …"."""
        super().__init__(
            f"you changed the code: {change}; only {guard.allowed} may change. "
            "Send your complete definition again with everything else exactly "
            "as it was."
        )


# ---- parsing ------------------------------------------------------------------------


def _parse(text: str, indent: str) -> tuple[ast.Module, int]:
    """The AST of a definition as the file has it (later lines carry ``indent``),
    and how many lines were added in front to parse it.
    """
    try:
        return ast.parse(text), 0
    except SyntaxError:
        if not indent:
            raise
    # Its later lines are indented: parse it inside a block at that indentation.
    wrapped = ast.parse("if 1:\n" + indent + text)
    block = wrapped.body[0]
    assert isinstance(block, ast.If)
    return ast.Module(body=block.body, type_ignores=[]), 1


# ---- normalising: the allowed parts removed ------------------------------------------

_SCOPES = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _empty_body(body: list[ast.stmt]) -> list[ast.stmt]:
    """``pass`` or ``...`` alone does what an empty body would."""
    if len(body) == 1:
        only = body[0]
        if isinstance(only, ast.Pass) or (
            isinstance(only, ast.Expr)
            and isinstance(only.value, ast.Constant)
            and only.value.value is Ellipsis
        ):
            return []
    return body


def _strip_docstrings(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        if isinstance(node, _SCOPES):
            body = node.body
            if body and _is_docstring(body[0]):
                body = body[1:]
            node.body = _empty_body(body)


class _Annotations(ast.NodeTransformer):
    """Removes annotations: parameters, returns, annotated assignments."""

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        node.type_comment = None
        return node

    def _function(self, node: Any) -> Any:
        self.generic_visit(node)
        node.returns = None
        node.type_comment = None
        if hasattr(node, "type_params"):
            node.type_params = []
        return node

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.stmt | None:
        if node.value is None:
            return None  # a bare declaration does nothing at run time
        assign = ast.Assign(targets=[node.target], value=node.value)
        return ast.copy_location(assign, node)


def _strip_annotations(tree: ast.Module) -> None:
    _Annotations().visit(tree)
    for node in ast.walk(tree):
        if isinstance(node, _SCOPES):
            node.body = _empty_body(node.body)


def _bound_names(statement: ast.stmt) -> set[str]:
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
    if isinstance(statement, ast.If):  # if TYPE_CHECKING: imports
        names: set[str] = set()
        for inner in statement.body:
            names |= _bound_names(inner)
        return names
    return set()


def _type_only_block(statement: ast.stmt) -> bool:
    """``import``/``from`` lines, or ``if TYPE_CHECKING:`` holding only those."""
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return True
    if isinstance(statement, ast.If) and not statement.orelse:
        test = ast.unparse(statement.test)
        return test in ("TYPE_CHECKING", "typing.TYPE_CHECKING") and all(
            isinstance(s, ast.Import | ast.ImportFrom) for s in statement.body
        )
    return False


def _drop_new_type_imports(old: ast.Module, new: ast.Module) -> None:
    """Remove from ``new`` the imports ``old`` lacks whose names only
    annotations use (``new`` already has its annotations removed).
    """
    known = {ast.dump(s) for s in ast.walk(old) if isinstance(s, ast.stmt)}
    used = {n.id for n in ast.walk(new) if isinstance(n, ast.Name)}
    for node in ast.walk(new):
        if not isinstance(node, _SCOPES):
            continue
        kept = [
            s
            for s in node.body
            if ast.dump(s) in known or not _type_only_block(s) or _bound_names(s) & used
        ]
        node.body = kept


def _normalised(tree: ast.Module, kinds: frozenset[str]) -> ast.Module:
    if kinds & {"docstring", "rename"}:
        _strip_docstrings(tree)
    if "type_hints" in kinds:
        _strip_annotations(tree)
    return tree


# ---- comparing ----------------------------------------------------------------------

_NAME_FIELDS = {
    ("FunctionDef", "name"),
    ("AsyncFunctionDef", "name"),
    ("ClassDef", "name"),
    ("arg", "arg"),
    ("Name", "id"),
    ("Global", "names"),
    ("Nonlocal", "names"),
    ("ExceptHandler", "name"),
    ("alias", "asname"),
    ("MatchAs", "name"),
    ("MatchStar", "name"),
    ("MatchMapping", "rest"),
}
"""Identifier fields in the namespace of plain names."""
_OTHER_SPACES = {("Attribute", "attr"): "attribute", ("keyword", "arg"): "keyword"}


@dataclass
class _Difference:
    old: ast.AST | None
    new: ast.AST | None
    """The innermost nodes with a line number on each side (None: missing)."""


@dataclass
class _Names:
    """Identifier pairs (old, new) seen while comparing, per namespace."""

    renaming: bool
    pairs: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    where: dict[tuple[str, str, str], ast.AST | None] = field(default_factory=dict)

    def see(self, space: str, old: str, new: str, at: ast.AST | None) -> bool:
        """Note a pair; whether the comparison may go on (a rename is allowed)."""
        if old == new and not self.renaming:
            return True
        if not self.renaming:
            return False
        self.pairs.setdefault(space, set()).add((old, new))
        self.where.setdefault((space, old, new), at)
        return True


def _same_constant(a: object, b: object) -> bool:
    return type(a) is type(b) and repr(a) == repr(b)


def _compare(
    a: Any, b: Any, at: tuple[ast.AST | None, ast.AST | None], names: _Names
) -> _Difference | None:
    """The first difference between two AST values, or None."""
    if isinstance(a, list) or isinstance(b, list):
        return _compare_lists(a or [], b or [], at, names)
    if not isinstance(a, ast.AST) or not isinstance(b, ast.AST):
        return None if _same_constant(a, b) else _Difference(*at)
    if type(a) is not type(b):
        return _Difference(_located(a, at[0]), _located(b, at[1]))
    here = (_located(a, at[0]), _located(b, at[1]))
    kind = type(a).__name__
    for name in a._fields:
        left, right = getattr(a, name, None), getattr(b, name, None)
        key = (kind, name)
        if (key in _NAME_FIELDS or key in _OTHER_SPACES) and (
            isinstance(left, str) or isinstance(right, str)
        ):
            space = _OTHER_SPACES.get(key, "name")
            if left is None or right is None:
                if left != right:
                    return _Difference(*here)
                continue
            if not names.see(space, left, right, here[1]):
                return _Difference(*here)
            continue
        if key in _NAME_FIELDS and isinstance(left, list):  # global a, b
            right = right or []
            if len(left) != len(right):
                return _Difference(*here)
            for old, new in zip(left, right, strict=True):
                if not names.see("name", old, new, here[1]):
                    return _Difference(*here)
            continue
        found = _compare(left, right, here, names)
        if found is not None:
            return found
    return None


def _compare_lists(
    a: list[Any], b: list[Any], at: tuple[ast.AST | None, ast.AST | None], names: _Names
) -> _Difference | None:
    if len(a) != len(b):
        # Line up the common start and end first: one added or removed
        # statement is named as such, not as a change of every later one.
        def same(x: Any, y: Any) -> bool:
            return _compare(x, y, at, _Names(names.renaming)) is None

        start = 0
        while start < min(len(a), len(b)) and same(a[start], b[start]):
            start += 1
        end = 0
        while end < min(len(a), len(b)) - start and same(a[-1 - end], b[-1 - end]):
            end += 1
        if start + end == len(a):
            return _Difference(None, _located(b[start], at[1]))
        if start + end == len(b):
            return _Difference(_located(a[start], at[0]), None)
    for left, right in zip(a, b, strict=False):
        found = _compare(left, right, at, names)
        if found is not None:
            return found
    if len(a) == len(b):
        return None
    if len(a) > len(b):  # the new side lacks something
        return _Difference(_located(a[len(b)], at[0]), None)
    return _Difference(None, _located(b[len(a)], at[1]))


def _located(node: Any, fallback: ast.AST | None) -> ast.AST | None:
    return node if hasattr(node, "lineno") else fallback


# ---- messages -----------------------------------------------------------------------


def _line(lines: list[str], node: ast.AST | None, offset: int) -> tuple[int, str]:
    number = getattr(node, "lineno", 1) - offset
    text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
    return number, text if len(text) <= 80 else text[:77] + "…"


def _describe(
    found: _Difference, old: tuple[list[str], int], new: tuple[list[str], int]
) -> str:
    if found.new is None:
        number, text = _line(old[0], found.old, old[1])
        return f"the original line {number} `{text}` is missing"
    number, text = _line(new[0], found.new, new[1])
    if found.old is None:
        return f"line {number} `{text}` was added"
    _, before = _line(old[0], found.old, old[1])
    if before == text:
        return f"line {number} `{text}` differs from the original"
    return f"line {number} `{text}` differs from the original `{before}`"


def _renaming_problem(guard: Guard, names: _Names) -> str | None:
    wanted = dict(guard.renames)
    for space, pairs in sorted(names.pairs.items()):
        forward: dict[str, set[str]] = {}
        backward: dict[str, set[str]] = {}
        for old, new in pairs:
            forward.setdefault(old, set()).add(new)
            backward.setdefault(new, set()).add(old)
        for old, news in sorted(forward.items()):
            if len(news) > 1:
                shown = " and ".join(f"`{n}`" for n in sorted(news))
                return f"the {space} `{old}` became {shown} in different places"
        for new, olds in sorted(backward.items()):
            if len(olds) > 1:
                shown = " and ".join(f"`{o}`" for o in sorted(olds))
                return f"{shown} both became the {space} `{new}`"
        for old, new in sorted(pairs):
            if old != new and wanted and wanted.get(old) != new:
                return f"the {space} `{old}` became `{new}`, which was not asked"
    return None


# ---- the check -----------------------------------------------------------------


def check_guard(guard: Guard, old: str, new: str, indent: str = "") -> Check:
    """A passed check if ``new`` differs from ``old`` only as ``guard`` allows.

    ``old`` and ``new`` are definitions as the file holds them: the first
    line at its place, later lines indented by ``indent`` (the node's line
    prefix). :class:`GuardViolation` when something else changed.
    """
    try:
        old_tree, old_offset = _parse(old, indent)
        new_tree, new_offset = _parse(new, indent)
    except (SyntaxError, ValueError, RecursionError) as error:
        # The syntax checks run first; the running Python may still not know
        # newer syntax: then the guard cannot judge and says so.
        log.info("guard %s could not parse: %s", guard.name, error)
        return Check(guard.name, None, "not checked: Python could not parse it")
    old_tree = _normalised(old_tree, guard.kinds)
    new_tree = _normalised(new_tree, guard.kinds)
    if "type_hints" in guard.kinds:
        _drop_new_type_imports(old_tree, new_tree)
    names = _Names(renaming="rename" in guard.kinds)
    found = _compare(old_tree, new_tree, (None, None), names)
    if found is not None:
        change = _describe(
            found, (old.splitlines(), old_offset), (new.splitlines(), new_offset)
        )
        raise GuardViolation(guard, change)
    problem = _renaming_problem(guard, names) if names.renaming else None
    if problem is not None:
        raise GuardViolation(guard, problem)
    return Check(guard.name, True, _passed_detail(guard, names))


def _passed_detail(guard: Guard, names: _Names) -> str:
    renamed = sorted(
        {(o, n) for pairs in names.pairs.values() for o, n in pairs if o != n}
    )
    parts = []
    for kind in GUARD_KINDS:
        if kind not in guard.kinds:
            continue
        if kind == "docstring":
            parts.append("docstrings")
        elif kind == "type_hints":
            parts.append("type annotations")
        elif renamed:
            parts.append("the names " + ", ".join(f"{o} → {n}" for o, n in renamed))
        else:
            parts.append("names (none renamed)")
    return "code unchanged except " + " and ".join(parts)
