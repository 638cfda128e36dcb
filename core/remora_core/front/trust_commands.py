"""Commands that see and change whether a project's repository is trusted.

What trust allows is ``remora_core/trust.py``; who decides (the client's own
workspace trust, the person's remembered answer, a question) is the door's
:class:`~remora_core.trust.TrustDecisions`, reached through ``app.trust``.
Without ``uri`` or ``path`` these answer for every workspace folder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import StrictBool

from remora_core.front import answers
from remora_core.front.arguments import FileArgs
from remora_core.front.errors import InvalidArguments
from remora_core.front.table import Door, Route, command

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp


class TrustSetArgs(FileArgs):
    """Whether to trust the project (of ``uri`` / ``path``, else every one)."""

    trusted: StrictBool


def _in_a_folder(app: RemoraApp, a: FileArgs) -> None:
    """A file named outside every workspace folder has no trust to speak of."""
    if app.root is None and (a.uri is not None or a.path is not None):
        raise InvalidArguments(f"{a.uri or a.path} is in no workspace folder")


@command("remora.trust.get", FileArgs, list[answers.TrustRow], Route.FOLDER)
async def trust_get(app: RemoraApp, a: FileArgs, door: Door) -> Any:
    """Whether the project's repository is trusted, who decided, what it
    wants that needs trust, and where the key may go.
    """
    _in_a_folder(app, a)
    return app.trust.describe()


@command("remora.trust.set", TrustSetArgs, list[answers.TrustRow], Route.FOLDER)
async def trust_set(app: RemoraApp, a: TrustSetArgs, door: Door) -> Any:
    """Trust the repository (or not): the answer is remembered and the
    project restarts with it. Refused when the editor manages trust itself.
    """
    _in_a_folder(app, a)
    await app.trust.set(a.trusted)
    return app.trust.describe()


@command("remora.trust.revoke", FileArgs, list[answers.TrustRow], Route.FOLDER)
async def trust_revoke(app: RemoraApp, a: FileArgs, door: Door) -> Any:
    """Forget every answer about the project (trust and hosts): it is
    untrusted until asked again.
    """
    _in_a_folder(app, a)
    await app.trust.revoke()
    return app.trust.describe()


TRUST_COMMANDS = [trust_get, trust_set, trust_revoke]
