"""The Service pane: serve the editor's program, see its page, its output and its remaining TTL.

An address bar reaches every route (GET shows the page, POST shows the
answer), the access row copies what another client needs (a curl command
with the token), and the page's blocked requests are listed. An answer
the browser would only save as a file is fetched and shown as text.

The embedded browser (``web_browser``, QtWebEngine) is created the first
time the pane is shown or a page is opened, never at start-up: the window
opens fast, and on a machine without the WebEngine libraries everything
else still works (the pane then says why and shows the URL instead).
"""

from __future__ import annotations

import html
import logging
import time
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from playground.app.output_buffer import OutputBuffer
from playground.app.output_view import OutputView
from playground.app.request_policy import ProxyTarget
from playground.app.service_client import Reply, ServiceClient, is_html, reply_html
from playground.app.service_controller import DEFAULT_PORT, DEFAULT_TTL, Phase
from playground.app.service_tools import AccessRow, AddressBar, BlockedList
from playground.app.themes import LIGHT, Theme

if TYPE_CHECKING:
    from playground.app.web_browser import ServiceBrowser

log = logging.getLogger(__name__)

TICK_MS = 250
#: HTML answers up to this size are shown as pages (``setHtml`` refuses more than 2 MB); larger ones as text.
MAX_PAGE_HTML = 1_500_000


def countdown(seconds: float) -> str:
    """``14:59`` or ``1:02:03`` (whole seconds, rounded up so 0:00 means over)."""
    whole = max(0, int(seconds + 0.999))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class ServicePane(QWidget):
    """Port and TTL fields, Serve/Stop, status, the page, the guest's output. GUI thread only."""

    startRequested = Signal()
    stopRequested = Signal()
    pageLoaded = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.port = QLineEdit(str(DEFAULT_PORT))
        self.port.setObjectName("servePort")
        self.port.setMaximumWidth(70)
        self.port.setToolTip("The port the program listens on inside the sandbox")
        self.ttl = QLineEdit(DEFAULT_TTL)
        self.ttl.setObjectName("serveTtl")
        self.ttl.setMaximumWidth(70)
        self.ttl.setToolTip("The service stops by itself after this long (e.g. 90s, 15m, 1h; at most 24h)")
        self.start_button = QPushButton("▶  Serve")
        self.start_button.setObjectName("runButton")
        self.start_button.setToolTip("Run the editor's program as a server and open it here")
        self.start_button.clicked.connect(self.startRequested)
        self.stop_button = QPushButton("■  Stop")
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stopRequested)
        self.ttl_label = QLabel("")
        self.ttl_label.setObjectName("serveTtlLeft")
        row = QHBoxLayout()
        row.addWidget(QLabel("Port"))
        row.addWidget(self.port)
        row.addWidget(QLabel("TTL"))
        row.addWidget(self.ttl)
        row.addWidget(self.start_button)
        row.addWidget(self.stop_button)
        row.addStretch(1)
        row.addWidget(self.ttl_label)
        self.status = QLabel("Serve runs the editor's program as a web server in the sandbox and shows it here.")
        self.status.setObjectName("runSummary")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.page_area = QWidget()
        self._page_layout = QVBoxLayout(self.page_area)
        self._page_layout.setContentsMargins(0, 0, 0, 0)
        self.placeholder = QLabel("The served page appears here.")
        self.placeholder.setObjectName("hint")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self._page_layout.addWidget(self.placeholder)
        self.logs = OutputView()
        self.logs.set_summary("Guest output")
        self.blocked = BlockedList()
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.logs)
        bottom.addWidget(self.blocked)
        bottom.setStretchFactor(0, 1)
        bottom.setStretchFactor(1, 1)
        self.splitter = split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.page_area)
        split.addWidget(bottom)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setSizes([450, 150])  # the page gets the room; the log is a strip below it

        self.address = AddressBar()
        self.address.sendRequested.connect(self.send_request)
        self.answer = QLabel("")
        self.answer.setObjectName("serviceAnswer")
        self.answer.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.access = AccessRow()
        self.client = ServiceClient(self)
        self.client.finished.connect(self._show_reply)

        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(self.address)
        layout.addWidget(self.answer)
        layout.addWidget(split, 1)
        layout.addWidget(self.access)

        self.browser: ServiceBrowser | None = None
        self.browser_error: str | None = None
        self._target: ProxyTarget | None = None
        self._url = ""
        self._zoom = 1.0
        self._download_note = ""
        self._theme = LIGHT
        self._deadline: float | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)

    # -- the embedded browser (lazy) --------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.browser is None:
            QTimer.singleShot(0, self.ensure_browser)  # paint the pane first, then start the browser

    def ensure_browser(self) -> ServiceBrowser | None:
        """Create the browser on first use; None (and the reason shown) when QtWebEngine cannot load."""
        if self.browser is not None or self.browser_error is not None:
            return self.browser
        try:
            from playground.app.web_browser import ServiceBrowser
        except (ImportError, OSError) as exc:  # a missing module or a missing shared library
            log.warning("QtWebEngine is unavailable", exc_info=True)
            self.browser_error = str(exc)
            self.placeholder.setText(
                f"The embedded browser is unavailable here ({exc}). Services still run: use the URL above "
                "with an Authorization: Bearer header."
            )
            return None
        self.browser = ServiceBrowser(self.page_area)
        self.browser.loadFinished.connect(self.pageLoaded)
        self.browser.interceptor.requestBlocked.connect(self.blocked.add)
        self.browser.downloadIntercepted.connect(self._fetch_download)
        self.browser.pathChanged.connect(self.address.show_path)
        self.browser.set_zoom(self._zoom)
        self.placeholder.hide()
        self._page_layout.addWidget(self.browser)
        self.browser.show_html(self._message_html("The served page appears here."))
        return self.browser

    def release_browser(self) -> None:
        """Destroy the browser now (the window is closing): its page goes before its profile, as QtWebEngine needs.

        Left to interpreter exit, the order is arbitrary and QtWebEngine warns.
        The pane shows no page afterwards. Idempotent.
        """
        browser, self.browser = self.browser, None
        if browser is not None:
            self.browser_error = "the window was closed"
            browser.interceptor.set_target(None)
            shiboken6.delete(browser)

    # -- what the controller calls ----------------------------------------

    def serve_texts(self) -> tuple[str, str]:
        return self.port.text(), self.ttl.text()

    def set_phase(self, phase: Phase) -> None:
        idle = phase is Phase.IDLE
        self.start_button.setEnabled(idle)
        self.port.setEnabled(idle)
        self.ttl.setEnabled(idle)
        self.stop_button.setEnabled(phase in (Phase.STARTING, Phase.SERVING))

    def set_status(self, text: str, kind: str) -> None:
        colours = {"ok": self._theme.ok, "error": self._theme.error, "note": self._theme.note}
        colour = colours.get(kind, "")
        body = html.escape(text)
        self.status.setText(f'<span style="color:{colour}">{body}</span>' if colour else body)
        self.status.setToolTip(text)

    def status_text(self) -> str:
        return self.status.toolTip()

    def set_deadline(self, deadline: float | None) -> None:
        """Count down to ``deadline`` (``time.monotonic()`` seconds); None hides the countdown."""
        self._deadline = deadline
        if deadline is None:
            self._timer.stop()
            self.ttl_label.setText("")
        else:
            self._tick()
            self._timer.start()

    def begin_logs(self, buffer: OutputBuffer) -> None:
        self.logs.begin(buffer, "Guest output")

    def open_page(self, url: str, target: ProxyTarget) -> bool:
        """A service is up at ``url``: show it, and offer the address bar and the access row."""
        self._url, self._target = url.rstrip("/"), target
        self.address.setEnabled(True)
        self.access.set_service(url, target.token)
        self.blocked.clear()
        self.answer.setText("")
        browser = self.ensure_browser()
        if browser is None:
            return False
        browser.open(url, target)
        return True

    def close_page(self, reason: str) -> None:
        """The service ended: forget its URL and token; the page says ``reason``."""
        self._url, self._target = "", None
        self.client.abort()
        self.address.setEnabled(False)
        self.access.set_service("", "")
        if self.browser is not None:
            self.browser.show_html(self._message_html(reason))

    # -- the address bar ---------------------------------------------------------

    def send_request(self, method: str, path: str, body: str) -> None:
        """GET: the page goes there. POST: the pane sends it and shows the answer."""
        if self._target is None:
            self.answer.setText("No service is running: press Serve first.")
            return
        url = self._url + path
        self.access.set_request(method, path, body)
        if method == "GET" and self.browser is not None:
            self.answer.setText(f"GET {path} → shown below")
            self.browser.open(url, self._target)
            return
        self.answer.setText(f"{method} {path} → waiting for the answer…")
        self._download_note = ""
        self.client.send(method, url, self._target, body.encode("utf-8"))

    def _fetch_download(self, url: str) -> None:
        """The browser would have saved ``url``'s answer as a file: fetch it and show it as text."""
        if self._target is None:
            return
        self._download_note = ("The browser would only have saved this answer as a file (it has no displayable "
                               "Content-Type), so it was requested again and is shown as text.")
        self.client.send("GET", url, self._target)

    def _show_reply(self, reply: Reply) -> None:
        self.answer.setText(reply.headline())
        note, self._download_note = self._download_note, ""
        if self.browser is None or self._target is None:
            return
        if is_html(reply) and reply.status and not note and len(reply.body) <= MAX_PAGE_HTML:
            self.browser.show_page(reply.body.decode("utf-8", "replace"), reply.url, self._target)
        else:
            self.browser.show_html(reply_html(reply, self._theme, note))

    # -- look ----------------------------------------------------------------

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.logs.set_theme(theme)

    def set_font_size(self, size: int) -> None:
        self.logs.set_font_size(size)

    def set_zoom(self, percent: int) -> None:
        """The window's zoom applies to the served page too."""
        self._zoom = percent / 100
        if self.browser is not None:
            self.browser.set_zoom(self._zoom)

    def _tick(self) -> None:
        if self._deadline is not None:
            self.ttl_label.setText(f"TTL {countdown(self._deadline - time.monotonic())} left")

    def _message_html(self, text: str) -> str:
        t = self._theme
        return (f'<html><body style="background:{t.base};color:{t.gutter_text};font-family:sans-serif;'
                f'display:flex;align-items:center;justify-content:center;height:90vh;margin:0">'
                f"<p>{html.escape(text)}</p></body></html>")
