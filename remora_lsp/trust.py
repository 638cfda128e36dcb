"""Trust and keys in the editor: who decides, and the questions asked.

Whether a workspace folder's repository is trusted (``remora_core/trust.py``
says what that allows) is decided, first match wins:

1. by the client: ``initializationOptions.workspaceTrust: true|false`` (a
   top-level key next to the settings; VS Code passes its workspace trust).
   Then the server never asks, and ``remora.trust.set`` is refused;
2. by the person's remembered answer (``trust.json`` in the state directory);
3. by asking once, with ``window/showMessageRequest`` naming what the
   repository wants to run and where it wants requests sent ("Trust" /
   "Don't trust") — only when it contains something that needs trust. The
   answer is remembered; a dismissed question counts as "Don't trust" for the
   session and is asked again next time.

An untrusted project is told once why (``showMessage`` and the log). Sending
the key to a server the person did not configure is a second question
("Send my key" / "Don't send"), asked the first time a request would go there,
remembered per project and host. Answers change a running project by
restarting it (a warm start: ids are kept).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from lsprotocol import types
from remora_core.front.errors import InvalidArguments
from remora_core.trust import (
    KeyApprovals,
    RepositoryWants,
    Trust,
    TrustStore,
    host_of,
    model_origins,
    repository_wants,
)

if TYPE_CHECKING:
    from pathlib import Path

    from remora_core.config import ProjectSettings


log = logging.getLogger(__name__)

CLIENT_OPTION = "workspaceTrust"
"""The ``initializationOptions`` key through which a client passes its trust."""

TRUST, DONT_TRUST = "Trust", "Don't trust"
SEND_KEY, DONT_SEND = "Send my key", "Don't send"

TRUST_QUESTION = (
    "Remora: trust the repository {name}? It wants to {wants}. Trust it only if "
    "you trust its authors; otherwise its code does not run and agents use your "
    "own model settings and the shipped bundles."
)
UNTRUSTED = (
    "Remora: {name} is not trusted, so it may not {wants}. Agents use your own "
    "model settings and the shipped bundles. {how}"
)
HOW_CLIENT = "Trust the workspace in your editor to allow it."
HOW_COMMAND = (
    "To trust it: `remora trust --yes` in the project (in Neovim "
    ":RemoraTrust yes; any client: the command remora.trust.set with "
    '{"trusted": true}); `remora trust --forget` forgets your answers.'
)
KEY_QUESTION = (
    "Remora: the repository {name} sends agents' requests to {host}, a server "
    "you did not configure. Send your API key (from ${variable}) there?"
)


def client_trust(options: Any) -> bool | None:
    """The trust a client passes in ``initializationOptions``, if any."""
    if not isinstance(options, dict) or CLIENT_OPTION not in options:
        return None
    value = options[CLIENT_OPTION]
    if isinstance(value, bool):
        return value
    log.warning(
        "ignoring initializationOptions.%s=%r: not a boolean", CLIENT_OPTION, value
    )
    return None


class Server(Protocol):
    """What trust needs of the language server (not the server class itself:
    the server holds an :class:`EditorTrust`, so naming it here would be an
    import cycle).
    """

    def run_task(self, coroutine: Any, name: str | None = None) -> Any:
        """Run a background task."""
        ...

    def tell_user(self, message: str, kind: types.MessageType = ...) -> None:
        """Show a message once per session."""
        ...

    async def window_show_message_request_async(
        self, params: types.ShowMessageRequestParams
    ) -> types.MessageActionItem | None:
        """``window/showMessageRequest``."""
        ...


class EditorTrust:
    """The trust decisions of one server session (held as ``ls.trust``)."""

    def __init__(
        self, server: Server, restart: Callable[[Path], Awaitable[object]]
    ) -> None:
        self.server = server
        self.restart = restart
        """Restarts a project (its trust changed)."""
        self.store = TrustStore()
        """The person's remembered answers (user-level state)."""
        self.client: bool | None = None
        """The client's workspace trust, if it passes one (then it decides)."""
        self.session: dict[Path, bool] = {}
        """Answers not remembered: a dismissed question."""
        self.wants: dict[Path, RepositoryWants] = {}
        """What each project's repository wants that needs trust."""
        self.asked: set[Path] = set()

    # ---- deciding ----------------------------------------------------------------

    def decided(self, root: Path) -> tuple[bool | None, str]:
        """Whether ``root`` is trusted (None: undecided), and who decided."""
        if self.client is not None:
            return self.client, "client"
        remembered = self.store.get(root).trusted
        if remembered is not None:
            return remembered, "person"
        if root in self.session:
            return self.session[root], "session"
        return None, "undecided"

    def for_project(self, root: Path, settings: ProjectSettings) -> Trust:
        """The trust of the project at ``root`` with ``settings`` (as decided now)."""
        self.wants[root] = repository_wants(root, settings.repository)
        trusted, _who = self.decided(root)
        return Trust(
            trusted=trusted is True,
            person_origins=model_origins(settings.person_model),
            approvals=KeyApprovals(
                root,
                self.store,
                lambda host_origin, variable: self._ask_key(
                    root, host_origin, variable
                ),
            ),
        )

    # ---- telling and asking --------------------------------------------------------

    def review(self, root: Path) -> None:
        """Once the session is up: ask about ``root`` or say why it is untrusted."""
        wants = self.wants.get(root)
        if not wants:
            return
        trusted, _who = self.decided(root)
        if trusted is None and root not in self.asked:
            self.asked.add(root)
            self.server.run_task(self._ask_trust(root, wants), name=f"trust {root}")
        elif trusted is False:
            self.tell_untrusted(root)

    def tell_untrusted(self, root: Path) -> None:
        """Say once why the repository's own code and settings are not used."""
        wants = self.wants.get(root)
        if not wants:
            return
        how = HOW_CLIENT if self.client is not None else HOW_COMMAND
        self.server.tell_user(
            UNTRUSTED.format(name=root.name, wants=wants.describe(), how=how),
            types.MessageType.Info,
        )

    async def _ask_trust(self, root: Path, wants: RepositoryWants) -> None:
        answer = await self._ask(
            TRUST_QUESTION.format(name=root.name, wants=wants.describe()),
            [TRUST, DONT_TRUST],
        )
        if self.client is not None or self.store.get(root).trusted is not None:
            return  # decided meanwhile (a command): that answer stands
        if answer is None:
            self.session[root] = False
        else:
            self.store.set_trusted(root, answer == TRUST)
        log.info("trust of %s: %s", root, answer or "question dismissed")
        if answer == TRUST:
            await self._restart(root)
        else:
            self.tell_untrusted(root)

    async def _ask_key(
        self, root: Path, host_origin: str, variable: str
    ) -> bool | None:
        answer = await self._ask(
            KEY_QUESTION.format(
                name=root.name, host=host_of(host_origin), variable=variable
            ),
            [SEND_KEY, DONT_SEND],
        )
        return None if answer is None else answer == SEND_KEY

    async def _ask(self, message: str, options: list[str]) -> str | None:
        """The option the person picked, None if dismissed or not asked."""
        try:
            picked = await self.server.window_show_message_request_async(
                types.ShowMessageRequestParams(
                    type=types.MessageType.Warning,
                    message=message,
                    actions=[types.MessageActionItem(title=o) for o in options],
                )
            )
        except Exception as error:  # the client cannot show it
            log.info("could not ask the person: %s", error)
            return None
        title = getattr(picked, "title", None)
        return title if title in options else None

    # ---- commands -------------------------------------------------------------------

    async def set(self, root: Path, trusted: bool) -> None:
        """The person trusts ``root`` (or not): remember, apply. Refused when
        the client passes its own workspace trust (change it there).
        """
        if self.client is not None:
            raise InvalidArguments(
                "your editor manages workspace trust for Remora "
                "(initializationOptions.workspaceTrust): change it there"
            )
        before, _who = self.decided(root)
        self.store.set_trusted(root, trusted)
        self.session.pop(root, None)
        if (before is True) != trusted:
            await self._restart(root)
        if not trusted:
            self.tell_untrusted(root)

    async def revoke(self, root: Path) -> None:
        """Forget every answer about ``root`` (trust and hosts); untrusted now."""
        self.store.revoke(root)
        self.session.pop(root, None)
        await self._restart(root)  # also forgets this session's key answers

    def describe(self, root: Path) -> dict[str, Any]:
        """The trust of ``root`` as ``remora.trust.get`` shows it."""
        trusted, who = self.decided(root)
        wants = self.wants.get(root)
        return {
            "trusted": trusted is True,
            "decided_by": who,
            "wants": wants.describe() if wants else "",
            "hosts": {
                host_of(o): allowed for o, allowed in self.store.get(root).hosts.items()
            },
        }

    async def _restart(self, root: Path) -> None:
        await self.restart(root)
