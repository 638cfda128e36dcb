"""Trust commands: see, set and revoke whether a repository is trusted.

- ``remora.trust.get {uri?}`` → ``[{root, trusted, decided_by, wants, hosts}]``
  for every workspace folder (or the one holding ``uri``): ``decided_by`` is
  ``client`` (``initializationOptions.workspaceTrust``), ``person`` (a
  remembered answer), ``session`` (a dismissed question) or ``undecided``;
  ``hosts`` maps ``host:port`` to whether the key may go there.
- ``remora.trust.set {trusted, uri?}`` → the same list: remembers the answer
  and restarts the projects whose trust changed. Refused when the client
  passes its own workspace trust (change it in the editor).
- ``remora.trust.revoke {uri?}`` → the same list: forgets every answer about
  the project (trust and hosts); it is untrusted until asked again at the next
  start (or set).

The decisions themselves are ``remora_lsp/trust.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from remora_lsp.arguments import TrustArguments, TrustSetArguments, parse
from remora_lsp.features.lifecycle import restart_project
from remora_lsp.projects import path_to_uri, uri_to_path

if TYPE_CHECKING:
    from pathlib import Path

    from remora_lsp.server import RemoraLanguageServer


def _roots(ls: RemoraLanguageServer, uri: str | None) -> list[Path]:
    """The workspace folders a command is about: the one holding ``uri`` (a
    ``file:`` URI, checked by the argument model), or all.
    """
    roots = sorted(ls.projects.by_root)
    if uri is None:
        return roots
    path = uri_to_path(uri)
    assert path is not None
    found = [root for root in roots if path == root or root in path.parents]
    if not found:
        raise JsonRpcInvalidParams(f"{uri} is in no workspace folder")
    return [max(found, key=lambda root: len(root.parts))]


def _listing(ls: RemoraLanguageServer, roots: list[Path]) -> list[dict[str, Any]]:
    return [{"root": path_to_uri(root), **ls.trust.describe(root)} for root in roots]


def register(server: RemoraLanguageServer) -> None:
    """Register the trust commands and let answers restart projects.

    Command handlers leave ``ls`` unannotated (see ``commands.py``).
    """

    async def restart(root: Path) -> None:
        await restart_project(server, root)

    server.trust.restart = restart

    @server.command("remora.trust.get")
    async def trust_get(ls, *args: Any) -> list[dict[str, Any]]:
        arguments = parse(TrustArguments, args, "remora.trust.get")
        return _listing(ls, _roots(ls, arguments.uri))

    @server.command("remora.trust.set")
    async def trust_set(ls, *args: Any) -> list[dict[str, Any]]:
        arguments = parse(TrustSetArguments, args, "remora.trust.set")
        if ls.trust.client is not None:
            raise JsonRpcInvalidParams(
                "your editor manages workspace trust for Remora "
                "(initializationOptions.workspaceTrust): change it there"
            )
        roots = _roots(ls, arguments.uri)
        for root in roots:
            await ls.trust.set(root, arguments.trusted)
        return _listing(ls, roots)

    @server.command("remora.trust.revoke")
    async def trust_revoke(ls, *args: Any) -> list[dict[str, Any]]:
        arguments = parse(TrustArguments, args, "remora.trust.revoke")
        roots = _roots(ls, arguments.uri)
        for root in roots:
            await ls.trust.revoke(root)
        return _listing(ls, roots)
