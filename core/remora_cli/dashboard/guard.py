"""Who may use the dashboard: the person who got its URL, from this machine.

The server binds 127.0.0.1 only, but any web page the person visits can make
their browser send requests to it, so every request is checked here (a pure
ASGI middleware: it wraps the event stream too):

- **Host**: only ``127.0.0.1:PORT`` or ``localhost:PORT`` — a DNS-rebinding
  page reaches the port under its own host name and is refused (421).
- **Token**: a random token, printed in the URL (as Jupyter does). The page's
  first load carries it as ``?token=``; the answer sets it as an HttpOnly,
  SameSite=Strict cookie named for the port (cookies are not port-scoped),
  so the page's assets and its event stream are let in. Without it: 403.
- **Changing something** (any method but GET/HEAD) needs the token in the
  ``X-Remora-Token`` header: a cookie alone is what a cross-site form would
  carry; a header is what only the page's own script can set.
- **The browser's own icon request** (``/favicon.ico``, which a browser
  sends by itself after any page, the refusal included, and without the
  token) gets an empty 204: it reveals nothing, and a 403 there would be a
  console error on every refused load.
- **Every answer** carries a strict Content-Security-Policy (scripts, styles
  and connections from this origin only; no inline script, no frames), no
  caching and no referrer (the URL holds the token).
"""

from __future__ import annotations

import logging
import secrets
from http.cookies import SimpleCookie
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)

TOKEN_HEADER = "x-remora-token"
SAFE_METHODS = frozenset({"GET", "HEAD"})
CSP = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


def new_token() -> str:
    """A token nobody can guess (256 bits)."""
    return secrets.token_urlsafe(32)


def cookie_name(port: int) -> str:
    """The token cookie of the dashboard on ``port``."""
    return f"remora_dashboard_{port}"


class Guard:
    """Refuse requests without the token or to a foreign host; add headers."""

    def __init__(self, app: ASGIApp, token: str, port: int) -> None:
        self.app = app
        self.token = token
        self.port = port
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.cookie = cookie_name(port)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the request; pass it on, or answer the refusal."""
        if scope["type"] != "http":  # lifespan: nothing to check
            await self.app(scope, receive, send)
            return
        headers = {
            k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]
        }
        host = headers.get("host", "")
        if host not in self.hosts:
            log.info("refused a request for host %r", host)
            await _refuse(send, 421, "This dashboard answers only on its own address.")
            return
        if scope["path"] == "/favicon.ico" and scope["method"] in SAFE_METHODS:
            await _answer(send, 204, b"")
            return
        given = self._token(scope, headers)
        if given is None:
            await _refuse(send, 403, "Open the URL remora dashboard printed.")
            return
        if scope["method"] not in SAFE_METHODS and not self._matches(
            headers.get(TOKEN_HEADER)
        ):
            await _refuse(send, 403, "Changes need the token in X-Remora-Token.")
            return
        set_cookie = given == "query"

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = list(HEADERS)
                if set_cookie:
                    extra.append((b"set-cookie", self._cookie_header()))
                message = {**message, "headers": [*message["headers"], *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _token(self, scope: Scope, headers: dict[str, str]) -> str | None:
        """Where a valid token came from (query, header, cookie), or None."""
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if any(self._matches(value) for value in query.get("token", [])):
            return "query"
        if self._matches(headers.get(TOKEN_HEADER)):
            return "header"
        cookies = SimpleCookie()
        try:
            cookies.load(headers.get("cookie", ""))
        except Exception:  # a malformed cookie header is no token
            return None
        morsel = cookies.get(self.cookie)
        return "cookie" if morsel and self._matches(morsel.value) else None

    def _matches(self, value: str | None) -> bool:
        return value is not None and secrets.compare_digest(
            value.encode(), self.token.encode()
        )

    def _cookie_header(self) -> bytes:
        return (
            f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict"
        ).encode()


async def _refuse(send: Send, status: int, text: str) -> None:
    await _answer(send, status, text.encode())


async def _answer(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), *HEADERS],
        }
    )
    await send({"type": "http.response.body", "body": body})
