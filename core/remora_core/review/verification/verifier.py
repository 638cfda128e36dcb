"""Verification of proposals by the project's tests (``review.run_tests``).

When a proposal is made, :meth:`Verifier.first_check` decides at once what
its ``tests`` check says: the tests that reach the node (``selection.py``) are
"running…", or why none run — ``review.run_tests: off`` (no check at all), an
untrusted project (its tests are its code, which runs only in a trusted
project), no tests in the project, none reaching this node. The proposal is
shown with that check straight away; a person may decide before the tests
end. :meth:`Verifier.submit` queues the run: at most ``agents.max_concurrency``
runs at once, each in a fresh copy of the project (``copying.py``) with the
proposal applied to its file as the editor holds it, under the project's
interpreter with ``review.test_timeout_s`` (``pytest_run.py``), given only
the variables of ``environment.py`` (no keys, no proxies, a home of its own).

A change set (or a new file) is tested once, with every member applied in
the copy: the tests reaching any definition it rewrites, and every test file
it creates or rewrites — a new test file must pass against the code as it is
(with the set's other members). When tests fail, the same tests run once more
without the proposal: only failures the proposal causes count (a new test
file's failures always do: there is nothing to compare them with). A test
that fails either way (a missing module, a broken fixture) makes the outcome
"could not run", never a failure of the proposal.

The outcome replaces the check (``ProposalStore.set_check``) and a
``proposal_checked`` event tells the editor. A failure goes back to the agent
once, as a rejection whose feedback is the failing output (``rewrite_rejected``
with ``by: tests``); the proposal of that second attempt keeps whatever its
tests say, for the person to judge. A proposal decided or superseded before
its run starts is skipped; one decided during its run keeps its decision.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from remora_core.events.models import ProposalChecked
from remora_core.model import ProposalStatus
from remora_core.project_paths import PathRefused, is_secret, real_project_file
from remora_core.review.change_sets import Stale, plan_members
from remora_core.review.checks import Check
from remora_core.review.proposals import text_hash
from remora_core.review.verification.copying import TooLarge, copy_project
from remora_core.review.verification.environment import run_environment
from remora_core.review.verification.pytest_run import (
    RunResult,
    interpreter,
    run_pytest,
)
from remora_core.review.verification.selection import (
    is_test_file,
    select_tests,
    test_paths,
)
from remora_core.tasks import TaskSet

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from remora_core.events.models import Event
    from remora_core.review.ports import ReviewServices
    from remora_core.review.proposals import Proposal

log = logging.getLogger(__name__)

NAME = "tests"
"""The check's name."""
MAX_FEEDBACK = 4_000
"""Characters of failing output sent back to the agent."""


class Rejecting(Protocol):
    """What the verifier needs of ``review.Review``: sending a failing proposal
    back to its agent (named here, not imported: review imports the agents'
    context, which holds the verifier).
    """

    async def reject(
        self,
        proposal: Proposal,
        feedback: str,
        reserve: Callable[[str], str] | None = None,
        by: Literal["person", "tests"] = "person",
    ) -> str | None:
        """Record a rejection and start the agent's retry; its run id."""
        ...


class Verifier:
    """Runs the tests of one project's proposals."""

    def __init__(
        self,
        services: ReviewServices,
        review: Rejecting,
        emit: Callable[[Event], Awaitable[object]],
        reserve: Callable[[str], str],
        *,
        trusted: bool,
    ) -> None:
        self.services = services
        self.review = review
        self.emit = emit
        self.reserve = reserve
        """The runner's: promises the run id of the retry a failure starts."""
        self.trusted = trusted
        self.slots = asyncio.Semaphore(services.config.agents.max_concurrency)
        self.tasks = TaskSet("test runs")
        self._selected: dict[str, list[str]] = {}
        self._retries: set[str] = set()
        """Runs started by a test failure: their proposals are not sent back."""

    def first_check(self, proposal: Proposal) -> Check | None:
        """The ``tests`` check a new proposal is shown with (None: no check)."""
        services = self.services
        if services.config.review.run_tests == "off" or services.root is None:
            return None
        if proposal.members:
            return self._first_check_of_set(proposal)
        node = services.graph.get(proposal.node_id)
        if proposal.kind != "rewrite" or node is None:
            return Check(NAME, None, "no tests reach a new definition", "no_tests")
        if not self.trusted:
            return Check(
                NAME,
                None,
                "not run: the project is not trusted and its tests are its code "
                "(remora.trust.set runs them)",
                "could_not_run",
            )
        selection = select_tests(
            services.graph, node, test_paths(services.root), self._readable
        )
        if not selection.test_files:
            return Check(NAME, None, "no tests in this project", "no_tests")
        if not selection.ids:
            return Check(NAME, None, "no tests reach this node", "no_tests")
        self._selected[proposal.id] = selection.ids
        count = len(selection.ids)
        return Check(NAME, None, f"running {count} selected…", "running")

    def _first_check_of_set(self, proposal: Proposal) -> Check:
        """A change set's (or new file's) check: the tests reaching any of
        its rewritten definitions, and every new test file it adds — run
        once, with all of its members applied.
        """
        if not self.trusted:
            return Check(
                NAME,
                None,
                "not run: the project is not trusted and its tests are its code "
                "(remora.trust.set runs them)",
                "could_not_run",
            )
        ids = self._set_tests(proposal)
        if not ids:
            return Check(NAME, None, "no tests reach these changes", "no_tests")
        self._selected[proposal.id] = ids
        return Check(NAME, None, f"running {len(ids)} selected…", "running")

    def _set_tests(self, proposal: Proposal) -> list[str]:
        """The pytest ids of a set: new test files whole, the tests reaching
        each rewritten definition (a whole file covers its own tests).
        """
        services = self.services
        assert services.root is not None
        paths = test_paths(services.root)
        found: dict[str, None] = {}
        for member in proposal.members:
            if is_test_file(member.path, paths) and member.kind != "new_node":
                found[member.path] = None  # a new or rewritten test file
                continue
            node = services.graph.get(member.node_id) if member.node_id else None
            if member.kind == "rewrite" and node is not None:
                selection = select_tests(services.graph, node, paths, self._readable)
                found.update(dict.fromkeys(selection.ids))
        whole = {i for i in found if "::" not in i}
        return [i for i in found if "::" not in i or i.split("::")[0] not in whole]

    def _readable(self, path: str) -> bytes | None:
        """A test file's text; never one of ``secrets.exclude``."""
        if is_secret(path, self.services.config.secrets.exclude):
            return None
        return self.services.read_text(path)

    def resume(self) -> None:
        """Run again the tests of proposals whose run a restart interrupted."""
        for proposal in self.services.proposals.pending():
            check = proposal.check(NAME)
            if check is None or check.status != "running":
                continue
            again = self.first_check(proposal)
            if again is not None and again.status == "running":
                self.submit(proposal)
            elif again is not None:  # e.g. no longer trusted: say why
                self.tasks.spawn(
                    self.services.proposals.set_check(proposal.id, again),
                    name=f"tests {proposal.id}",
                )

    def submit(self, proposal: Proposal) -> None:
        """Run the tests ``first_check`` selected for ``proposal`` (background)."""
        ids = self._selected.pop(proposal.id, None)
        if ids:
            self.tasks.spawn(self._verify(proposal, ids), name=f"tests {proposal.id}")

    async def close(self) -> None:
        """Stop every run (their process groups are killed)."""
        await self.tasks.close()

    # ---- one run ----------------------------------------------------------------

    async def _verify(self, proposal: Proposal, ids: list[str]) -> None:
        async with self.slots:
            current = self.services.proposals.get(proposal.id)
            if current is None or current.status != ProposalStatus.PENDING:
                return
            check, details = await self._run(proposal, ids)
        current = self.services.proposals.get(proposal.id)
        if current is not None and current.members != proposal.members:
            return  # members were rejected meanwhile: the rest's run decides
        updated = await self.services.proposals.set_check(proposal.id, check)
        if updated is None:
            return  # decided meanwhile: its decision stands
        await self.emit(
            ProposalChecked(
                agent_id=proposal.node_id,
                proposal_id=proposal.id,
                node_id=proposal.node_id,
                check=check.to_json(),
            )
        )
        if check.status == "failed" and proposal.run_id not in self._retries:
            await self._send_back(updated, check, details)

    def _texts(self, proposal: Proposal) -> list[tuple[str, bytes | None, bytes]]:
        """Each file the proposal changes: (path, its text now — None for a
        new file —, its text with the proposal); [] when its code changed.
        """
        services = self.services
        if proposal.members:
            try:
                files = plan_members(
                    proposal, None, services.read_text, services.document_version
                )
            except Stale:
                return []
            return [(f.path, None if f.create else f.before, f.after()) for f in files]
        text = services.read_text(proposal.file_path)
        old = text[proposal.start_byte : proposal.end_byte] if text else None
        if text is None or old is None or text_hash(old) != proposal.base_hash:
            return []
        new = (
            text[: proposal.start_byte]
            + proposal.new_source.encode()
            + text[proposal.end_byte :]
        )
        return [(proposal.file_path, text, new)]

    async def _run(self, proposal: Proposal, ids: list[str]) -> tuple[Check, str]:
        """The check of one run, and the failing tests' output (if any)."""
        services = self.services
        root = services.root
        assert root is not None
        changed = self._texts(proposal)
        if not changed:
            why = "not run: the code changed meanwhile"
            return Check(NAME, None, why, "could_not_run"), ""
        folder = Path(tempfile.mkdtemp(prefix="remora-tests-"))
        try:
            copy = folder / root.name
            copy.mkdir()
            skipped = frozenset(
                g
                for g in services.config.discovery.exclude
                if "/" not in g and "*" not in g
            )
            try:
                await asyncio.to_thread(copy_project, root, copy, skipped)
            except (TooLarge, OSError) as error:
                return Check(NAME, None, f"could not run: {error}", "could_not_run"), ""
            try:
                targets = _place(root, copy, changed)
            except PathRefused as refused:
                return Check(
                    NAME, None, f"could not run: {refused}", "could_not_run"
                ), ""
            python = interpreter(root)
            timeout = services.config.review.test_timeout_s
            home = folder / "home"  # the run's own: not the person's dot files
            home.mkdir()
            key = services.config.model.api_key_env
            env = run_environment(copy, home, key_names=[key] if key else [])
            result = await run_pytest(python, copy, ids, timeout, env)
            before = None
            created = {path for path, old, _new in changed if old is None}
            # The same tests without the proposal (a new test file's tests
            # have nothing to compare with: they must pass as they are).
            again = [i for i in ids if i.split("::")[0] not in created]
            if (
                result.ran
                and not result.timed_out
                and (result.failures or result.errors)
                and again
            ):
                for target, old in targets:
                    if old is None:
                        target.unlink(missing_ok=True)
                    else:
                        target.write_bytes(old)
                before = await run_pytest(python, copy, again, timeout, env)
            return outcome(result, before, timeout), failure_details(result, before)
        finally:
            await asyncio.to_thread(shutil.rmtree, folder, True)

    async def _send_back(self, proposal: Proposal, check: Check, details: str) -> None:
        """The agent gets one more attempt, with the failing output."""
        feedback = (
            f"The project's tests fail with your proposal: {check.detail}\n{details}"
        )[:MAX_FEEDBACK]

        def reserve(event_id: str) -> str:
            run_id = self.reserve(event_id)
            self._retries.add(run_id)
            return run_id

        try:
            await self.review.reject(proposal, feedback, reserve=reserve, by="tests")
        except Exception:  # decided by the person meanwhile: nothing to send
            log.info("%s was decided before its failure went back", proposal.id)


def _place(
    root: Path, copy: Path, changed: list[tuple[str, bytes | None, bytes]]
) -> list[tuple[Path, bytes | None]]:
    """Write each changed file's new text into the copy; (its place there,
    its text now). The real file (links followed, inside the project only:
    PathRefused otherwise), placed in the copy never through a link copied as
    a link (an absolute one leads back to the person's own tree).
    """
    targets: list[tuple[Path, bytes | None]] = []
    for path, old, new in changed:
        real = real_project_file(root, path)
        target = copy / real.relative_to(root.resolve())
        target.unlink(missing_ok=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(new)
        targets.append((target, old))
    return targets


def _known(before: RunResult | None) -> set[str]:
    """Tests that fail without the proposal too."""
    if before is None or not before.ran or before.timed_out:
        return set()
    return {f.test for f in before.failures + before.errors}


def failure_details(result: RunResult, before: RunResult | None) -> str:
    """The short tracebacks of the failures the proposal causes."""
    known = _known(before)
    return "\n\n".join(
        f"{f.test}\n{f.details}"
        for f in result.failures + result.errors
        if f.test not in known
    )


def outcome(result: RunResult, before: RunResult | None, timeout: float) -> Check:
    """The ``tests`` check of a run (``before``: the same tests without the
    proposal, run when some failed).
    """
    if not result.ran:
        return Check(NAME, None, f"could not run: {result.problem}", "could_not_run")
    if result.timed_out:
        return Check(
            NAME,
            None,
            f"timed out after {timeout:g} s (review.test_timeout_s)",
            "timed_out",
        )
    known = _known(before)
    errors = [e for e in result.errors if e.test not in known]
    failures = [f for f in result.failures if f.test not in known]
    if errors or failures:
        shown = "; ".join(f"{f.test} — {f.message}" for f in (failures + errors)[:3])
        more = len(failures) + len(errors) - 3
        return Check(
            NAME,
            False,
            f"{len(failures) + len(errors)} failed: {shown}"
            + (f" (+{more} more)" if more > 0 else ""),
            "failed",
        )
    if result.failures or result.errors:
        broken = (result.errors + result.failures)[0]
        return Check(
            NAME,
            None,
            f"could not run: {broken.test} — {broken.message} "
            "(also without the proposal)",
            "could_not_run",
        )
    if not result.passed:
        return Check(NAME, None, "no tests ran (pytest collected none)", "no_tests")
    return Check(NAME, True, f"{result.passed} passed", "passed")
