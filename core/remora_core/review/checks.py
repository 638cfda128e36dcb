"""What was checked about a proposal: intent guards and the project's tests.

A :class:`Check` rides on its proposal (``Proposal.checks``) and is shown
wherever the proposal is: the diagnostic, the code lens, the result of
``remora.proposal.diff`` and the node card. ``ok`` is ``True`` (passed),
``False`` (failed) or ``None`` (nothing to judge yet or at all: tests running,
no tests reach the node, could not run); ``status`` says which, for clients.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

STATUSES = (
    "passed",
    "failed",
    "running",
    "no_tests",
    "timed_out",
    "could_not_run",
    "not_checked",
)


@dataclass(frozen=True, slots=True)
class Check:
    """One check of a proposal and its outcome."""

    name: str
    """``docstring-only``, ``type-hints-only``, ``rename-only``, ``tests``…"""
    ok: bool | None
    detail: str
    """What a person reads: "code unchanged except docstrings", "3 passed"."""
    status: str = ""
    """One of :data:`STATUSES`; derived from ``ok`` when not given."""

    def __post_init__(self) -> None:
        if not self.status:
            status = {True: "passed", False: "failed", None: "not_checked"}[self.ok]
            object.__setattr__(self, "status", status)

    def to_json(self) -> dict[str, Any]:
        """``{name, ok, detail, status}``."""
        return {
            "name": self.name,
            "ok": self.ok,
            "detail": self.detail,
            "status": self.status,
        }

    @classmethod
    def from_json(cls, data: Any) -> Check | None:
        """A check from its JSON; None if it is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            return None
        ok = data.get("ok")
        return cls(
            name=data["name"],
            ok=ok if isinstance(ok, bool) else None,
            detail=str(data.get("detail", "")),
            status=str(data.get("status", "")),
        )

    @property
    def mark(self) -> str:
        """✓, ✗ or … (pending or nothing to judge)."""
        if self.ok is True:
            return "✓"
        if self.ok is False:
            return "✗"
        return "…" if self.status == "running" else "–"

    def summary(self) -> str:
        """One short line: ``✓ docstring-only``, ``✗ tests: 1 failed (test_x)``."""
        return f"{self.mark} {self.name}: {self.detail}"
