"""Who may use the dashboard: its token, its own Host, a header for changes.

Plain HTTP against ``remora dashboard`` running on a project (no server owns
it: the dashboard opens the project itself), as another web page or another
local user would try it.
"""

from __future__ import annotations

import asyncio
import http.client
import json
from urllib.parse import parse_qs, urlsplit

from tests.dashboard.support import dashboard


def request(
    url: str,
    method: str = "GET",
    path: str = "/",
    headers: dict[str, str] | None = None,
    body: dict | None = None,
) -> tuple[int, dict[str, str], str]:
    """One request to the dashboard at ``url``; (status, headers, text)."""
    where = urlsplit(url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
    try:
        wanted = {"Host": where.netloc, **(headers or {})}
        connection.putrequest(method, path, skip_host=True)
        for key, value in wanted.items():
            connection.putheader(key, value)
        data = json.dumps(body).encode() if body is not None else b""
        if body is not None:
            connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(len(data)))
        connection.endheaders(data)
        answer = connection.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read().decode()
    finally:
        connection.close()


def token_of(url: str) -> str:
    return parse_qs(urlsplit(url).query)["token"][0]


async def test_the_page_needs_its_token_and_its_own_host(workspace):
    async with dashboard(workspace) as url:
        where = urlsplit(url)
        assert where.hostname == "127.0.0.1"
        token = token_of(url)
        page = f"/?token={token}"

        status, headers, text = await asyncio.to_thread(request, url, path=page)
        assert status == 200
        assert '<meta name="remora-token"' in text
        csp = headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp
        assert "unsafe-inline" not in csp and "http" not in csp
        assert headers["referrer-policy"] == "no-referrer"
        cookie = headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie

        # No token, a wrong one: refused, the page never sent.
        for path in ("/", "/?token=nope", "/static/js/main.js", "/api/events"):
            status, _, text = await asyncio.to_thread(request, url, path=path)
            assert status == 403, path
            assert "remora-token" not in text
        # DNS rebinding: the attacker's name for 127.0.0.1, with the right token.
        for host in (f"evil.example:{where.port}", "127.0.0.1:1", "localhost"):
            status, _, _ = await asyncio.to_thread(
                request, url, path=page, headers={"Host": host}
            )
            assert status == 421, host

        # The cookie lets the page's assets and stream in…
        name = cookie.split("=", 1)[0]
        with_cookie = {"Cookie": f"{name}={token}"}
        status, _, script = await asyncio.to_thread(
            request, url, path="/static/js/main.js", headers=with_cookie
        )
        assert status == 200 and "import" in script
        # …but a command needs the token in a header (a cross-site form
        # carries the cookie, never a header).
        call = {"command": "remora.runs.list", "arguments": {}}
        status, _, text = await asyncio.to_thread(
            request, url, "POST", "/api/call", with_cookie, call
        )
        assert status == 403 and "X-Remora-Token" in text
        header = {"X-Remora-Token": token}
        status, _, text = await asyncio.to_thread(
            request, url, "POST", "/api/call", header, call
        )
        assert status == 200 and json.loads(text) == {"result": []}

        # Only what the page needs: nothing that restores, forgets or trusts.
        for command in ("remora.checkpoint.restore", "remora.trust.set"):
            status, _, text = await asyncio.to_thread(
                request,
                url,
                "POST",
                "/api/call",
                header,
                {"command": command, "arguments": {}},
            )
            assert status == 403 and command in text
        # A bad argument is the engine's own message.
        status, _, text = await asyncio.to_thread(
            request,
            url,
            "POST",
            "/api/call",
            header,
            {"command": "remora.node.get", "arguments": {"node_id": "rm_nothere1"}},
        )
        assert status == 404 and "no node" in json.loads(text)["error"]["message"]
