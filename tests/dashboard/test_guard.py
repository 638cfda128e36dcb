"""Who may use the dashboard: its token, its own Host, a header for changes.

Plain HTTP against ``remora dashboard`` running on a project (no server owns
it: the dashboard opens the project itself), as another web page or another
local user would try it.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
from urllib.parse import parse_qs, urlsplit

import yaml

from remora_lsp.testing.model_server import ModelServer
from tests.dashboard.support import dashboard
from tests.lsp.helpers import eventually
from tests.lsp.test_agent_runs import settings
from tests.lsp.test_command_line import HELPER


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
        # The icon a browser asks for by itself after any page, the refusal
        # included: nothing, and no error in the page's console.
        status, _, text = await asyncio.to_thread(request, url, path="/favicon.ico")
        assert (status, text) == (204, "")
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


def stream_ids(
    url: str, headers: dict[str, str], count: int, path: str = "/api/events"
) -> list[int]:
    """The ids of the first ``count`` server-sent events at ``path``."""
    where = urlsplit(url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
    try:
        connection.request("GET", path, headers=headers)
        answer = connection.getresponse()
        assert answer.status == 200
        assert answer.getheader("content-type", "").startswith("text/event-stream")
        ids: list[int] = []
        while len(ids) < count:
            line = answer.readline().decode()
            assert line, "the stream ended"
            if line.startswith("id:"):
                ids.append(int(line.split(":", 1)[1]))
        return ids
    finally:
        connection.close()


async def test_the_event_stream_resumes_after_the_last_event_id(
    workspace, person_files
):
    with ModelServer() as model:
        (person_files / "config" / "config.yaml").write_text(
            yaml.safe_dump(settings(model))
        )
        async with dashboard(workspace) as url:
            header = {"X-Remora-Token": token_of(url)}

            async def call(command: str, arguments: dict) -> object:
                status, _, text = await asyncio.to_thread(
                    request,
                    url,
                    "POST",
                    "/api/call",
                    header,
                    {"command": command, "arguments": arguments},
                )
                assert status == 200, text
                return json.loads(text)["result"]

            model.reply_text("Hello.")
            await call("remora.agent.chat", {"node_id": HELPER, "message": "Hi"})

            async def done() -> bool:
                runs = await call("remora.runs.list", {})
                return bool(runs) and runs[0]["status"] == "done"  # type: ignore[index]

            await eventually(done)
            seqs = [e["seq"] for e in await call("remora.events.list", {})]  # type: ignore[union-attr]
            assert len(seqs) >= 4
            middle = seqs[len(seqs) // 2]
            after = [s for s in seqs if s > middle]
            # As a reconnecting EventSource does: the id it saw last.
            ids = await asyncio.to_thread(
                stream_ids, url, {**header, "Last-Event-ID": str(middle)}, len(after)
            )
            assert ids == after
            # A first connection says where to start with ?since=.
            ids = await asyncio.to_thread(
                stream_ids, url, header, 2, f"/api/events?since={seqs[0]}"
            )
            assert ids == seqs[1:3]


def listen(url: str, token: str, opened: threading.Event) -> None:
    """Hold the event stream open until the server closes it."""
    where = urlsplit(url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=60)
    try:
        connection.request("GET", "/api/events", headers={"X-Remora-Token": token})
        answer = connection.getresponse()
        opened.set()
        while answer.readline():
            pass
    except OSError:
        pass
    finally:
        connection.close()


async def test_ctrl_c_ends_the_dashboard_cleanly_with_a_stream_open(workspace):
    opened = threading.Event()
    async with dashboard(workspace) as url:
        listener = threading.Thread(
            target=listen, args=(url, token_of(url), opened), daemon=True
        )
        listener.start()
        assert await asyncio.to_thread(opened.wait, 30)
    # dashboard() checked: exit 0, no traceback, no error logged.
    await asyncio.to_thread(listener.join, 30)
    assert not listener.is_alive()
