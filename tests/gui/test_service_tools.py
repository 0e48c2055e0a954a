"""The Service tab's tools, served for real on Wasm (QuickJS behind the core's proxy, no Docker needed).

The address bar reaches every route (GET shows the page, POST the answer),
the access row copies what a client outside the window needs (checked by
running the copied curl command), the page's blocked requests are listed,
and an answer the browser would only save as a file is shown as text.
Network rule: every request stays on 127.0.0.1 (the leaky page's other
hosts are blocked before any lookup; ``.invalid`` never resolves anyway).
"""

from __future__ import annotations

import asyncio
import re
import shlex
import shutil
import subprocess
import urllib.error
import urllib.request

import pytest
from PySide6.QtWidgets import QApplication

from playground.app.resources import resource_path
from playground.app.service_controller import Phase
from tests.gui.conftest import Playground, save_artifact
from tests.gui.test_service_browser import page_text, wait_text

LEAKY = r"""
export default {
  fetch(request) {
    console.log(`${request.method} ${request.path}`);
    if (request.path === "/") {
      return new Response(new TextEncoder().encode("raw bytes from the guest: no displayable type"));
    }
    return new Response(`<!doctype html><title>leaky</title><h1>A page that tries to leave</h1>
      <img src="http://127.0.0.1:9/leak.png" alt="">
      <script src="http://tracker.invalid/track.js"></script>
      <script>fetch("http://127.0.0.1:9/api").catch(() => {});</script>`,
      { headers: { "content-type": "text/html; charset=utf-8" } });
  },
};
"""


def serve_wasm(pg: Playground, code: str) -> None:
    """Serve ``code`` as JavaScript on Wasm from the Service tab; wait for the first page."""
    pane = pg.window.service
    pg.select("javascript")
    pg.window.show_tab("service")
    pg.window.set_code(code)
    pane.port.setText("8080")
    pane.start_button.click()
    service = pg.controller.service
    pg.qtbot.waitUntil(lambda: service.phase is not Phase.STARTING, timeout=60_000)
    if service.phase is Phase.IDLE and "can serve it" in pane.status_text():
        pytest.skip(f"this build's Wasm backend cannot serve javascript: {pane.status_text()}")
    assert service.phase is Phase.SERVING, pane.status_text()
    pg.qtbot.waitUntil(lambda: service.timings is not None and service.timings.page is not None, timeout=30_000)
    assert pane.browser is not None and service.service is not None


def stop(pg: Playground) -> None:
    ended = pg.controller.service.services_ended
    pg.window.service.stop_button.click()
    pg.qtbot.waitUntil(lambda: pg.controller.service.services_ended > ended, timeout=30_000)


def test_the_address_bar_reaches_get_and_post_routes(playground: Playground) -> None:
    pg = playground
    pane = pg.window.service
    assert not pane.address.isEnabled()  # nothing served yet
    serve_wasm(pg, resource_path("examples", "web_counter.js").read_text(encoding="utf-8"))
    browser = pane.browser
    assert browser is not None and pane.address.isEnabled()

    pane.address.request("GET", "/counter")
    first = re.search(r"Hits: (\d+)", wait_text(pg, browser, "Hits:"))
    assert first and pane.answer.text() == "GET /counter → shown below"
    pg.qtbot.waitUntil(lambda: "GET /counter" in pane.logs.plain_text(), timeout=10_000)
    pane.address.request("GET", "/counter")  # again: a new request to the live instance, not a cached page
    pg.qtbot.waitUntil(lambda: (m := re.search(r"Hits: (\d+)", page_text(pg, browser, 2.0) or "")) is not None
                       and int(m.group(1)) > int(first.group(1)), timeout=20_000)

    pane.address.request("POST", "/echo", '{"name": "Ada"}')
    pg.qtbot.waitUntil(lambda: pane.answer.text().startswith("POST /echo → 200"), timeout=20_000)
    assert "application/json" in pane.answer.text()
    text = wait_text(pg, browser, "contentType")
    assert '"contentType":"application/json"' in text and r'{\"name\": \"Ada\"}' in text, text
    pg.qtbot.waitUntil(lambda: "POST /echo" in pane.logs.plain_text(), timeout=10_000)

    pane.address.request("POST", "/echo", "plain words")
    assert '"contentType":"text/plain; charset=utf-8"' in wait_text(pg, browser, "plain words")
    pg.window.resize(1280, 820)
    pg.qtbot.wait(300)
    save_artifact(pg.window, "service_address_bar.png")
    stop(pg)
    assert not pane.address.isEnabled() and pane.access.url.text() == ""


def _fetch(url: str, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:  # 127.0.0.1 only
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_copy_gives_a_working_curl_command_the_url_and_the_token(playground: Playground) -> None:
    pg = playground
    pane = pg.window.service
    serve_wasm(pg, resource_path("examples", "web_counter.js").read_text(encoding="utf-8"))
    service = pg.controller.service.service
    assert service is not None and service.token
    clipboard = QApplication.clipboard()
    assert "Authorization: Bearer" in pane.access.note.text()  # the UI says why a plain tab gets 401

    pane.access.copy_url_button.click()
    assert clipboard.text() == service.url
    status, _ = pg.wait(asyncio.to_thread(_fetch, service.url, {}))
    assert status == 401  # what the note says: the URL alone is refused
    pane.access.copy_token_button.click()
    assert clipboard.text() == service.token
    assert service.token not in pane.access.url.text()  # copied, never shown

    pane.address.request("POST", "/echo", "sent by curl")
    pane.access.copy_curl_button.click()
    command = clipboard.text()
    assert command.startswith("curl -i -H 'Authorization: Bearer ") and command.endswith(service.url + "echo")
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed: the copied command cannot be run here")
    done = pg.wait(asyncio.to_thread(subprocess.run, shlex.split(command), capture_output=True, text=True,
                                     timeout=30))  # the copied text, as a user pastes it
    assert done.returncode == 0, done.stderr
    assert "HTTP/1.1 200" in done.stdout and '"body":"sent by curl"' in done.stdout, done.stdout
    stop(pg)


def test_blocked_requests_are_listed_and_a_typeless_body_is_shown(playground: Playground) -> None:
    pg = playground
    pane = pg.window.service
    pane.ensure_browser()
    serve_wasm(pg, LEAKY)
    browser = pane.browser
    assert browser is not None
    # The home page answers bytes without a displayable type: the browser would only save them as a file.
    text = wait_text(pg, browser, "raw bytes from the guest")
    assert "would only have saved this answer as a file" in text
    assert "GET / → 200 OK · application/octet-stream" in pane.answer.text()
    pg.window.resize(1280, 820)
    pg.qtbot.wait(300)
    save_artifact(pane, "service_typeless_body.png")

    pane.address.request("GET", "/page")
    wait_text(pg, browser, "A page that tries to leave")
    pg.qtbot.waitUntil(lambda: len(pane.blocked.entries()) >= 3, timeout=20_000)
    entries = "\n".join(pane.blocked.entries())
    for url in ("http://127.0.0.1:9/leak.png", "http://tracker.invalid/track.js", "http://127.0.0.1:9/api"):
        assert url in entries, entries
    assert "image: http://127.0.0.1:9/leak.png" in entries and "script: http://tracker.invalid/track.js" in entries
    assert pane.blocked.title.text() == f"Blocked requests: {len(pane.blocked.entries())}"
    pg.window.resize(1280, 820)
    pg.qtbot.wait(300)
    save_artifact(pg.window, "service_blocked.png")
    stop(pg)
    serve_wasm(pg, LEAKY)  # a new service starts with an empty list
    assert pane.blocked.entries() == [] and pane.blocked.title.text() == "Blocked requests: none"
    stop(pg)
