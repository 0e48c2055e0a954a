"""The Service tab's tools: an address bar, the way in for other clients, and the requests the page was denied.

* ``AddressBar``: method (GET/POST), path and an optional body, so every
  route of a served program can be reached, not only its home page.
* ``AccessRow``: the service's URL and copy buttons. The proxy takes the
  token only in an ``Authorization: Bearer`` header (never in the URL,
  where it would leak into histories and logs), so a plain browser tab
  gets 401: the row copies a ready-to-paste ``curl`` command, the URL and
  the bare token, and says so.
* ``BlockedList``: what the page tried to load that the embedded browser
  blocked (anything that is not the service's proxy).

Widgets only, GUI thread only: the pane wires them to the browser.
"""

from __future__ import annotations

import shlex
import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from playground.app.service_client import METHODS

#: Blocked requests kept in the list (the newest).
MAX_BLOCKED = 200


def curl_command(method: str, url: str, token: str, body: str = "") -> str:
    """A shell command that makes the request with the token (quoted for POSIX shells)."""
    parts = ["curl", "-i", "-H", f"Authorization: Bearer {token}"]
    if method != "GET":
        parts += ["-X", method]
    if body:
        parts += ["--data-binary", body]
    return " ".join(shlex.quote(p) for p in [*parts, url])


class AddressBar(QWidget):
    """``[GET|POST] [/path] [body] [Send]``; ``sendRequested(method, path, body)``."""

    sendRequested = Signal(str, str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.method = QComboBox()
        self.method.setObjectName("serviceMethod")
        self.method.addItems(list(METHODS))
        self.path = QLineEdit("/")
        self.path.setObjectName("servicePath")
        self.path.setPlaceholderText("/path?query")
        self.path.setToolTip("The path to request from the served program, e.g. /counter")
        self.body = QLineEdit()
        self.body.setObjectName("serviceBody")
        self.body.setPlaceholderText("request body (POST), e.g. {\"name\": \"Ada\"}")
        self.body.setToolTip("Sent as application/json when it is JSON, else as text/plain")
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("serviceSend")
        self.send_button.setToolTip("GET shows the page below; POST shows the answer")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.method)
        row.addWidget(self.path, 3)
        row.addWidget(self.body, 2)
        row.addWidget(self.send_button)
        self.method.currentTextChanged.connect(self._method_changed)
        self.send_button.clicked.connect(self._send)
        self.path.returnPressed.connect(self._send)
        self.body.returnPressed.connect(self._send)
        self._method_changed(self.method.currentText())
        self.setEnabled(False)

    def request(self, method: str, path: str, body: str = "") -> None:
        """Fill the bar and send (what a user does by typing and pressing Enter)."""
        self.method.setCurrentText(method)
        self.path.setText(path)
        self.body.setText(body)
        self._send()

    def show_path(self, path: str) -> None:
        """The page went elsewhere (a link): show where, without sending anything."""
        if not self.path.hasFocus():
            self.path.setText(path)

    def _method_changed(self, method: str) -> None:
        self.body.setEnabled(method != "GET")

    def _send(self) -> None:
        path = self.path.text().strip() or "/"
        if not path.startswith("/"):
            path = "/" + path
            self.path.setText(path)
        method = self.method.currentText()
        self.sendRequested.emit(method, path, self.body.text() if method != "GET" else "")


class AccessRow(QWidget):
    """The service URL with Copy buttons for a curl command, the URL and the token."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.url = QLineEdit()
        self.url.setObjectName("serviceUrl")
        self.url.setReadOnly(True)
        self.url.setPlaceholderText("the service's URL appears here while it runs")
        self.url.setMinimumWidth(self.url.fontMetrics().horizontalAdvance("http://127.0.0.1:65535/") + 16)
        self.copy_curl_button = QPushButton("Copy curl command")
        self.copy_curl_button.setObjectName("copyCurl")
        self.copy_url_button = QPushButton("Copy URL")
        self.copy_url_button.setObjectName("copyUrl")
        self.copy_token_button = QPushButton("Copy token")
        self.copy_token_button.setObjectName("copyToken")
        self.note = QLabel("Outside this window, send the token in an <b>Authorization: Bearer</b> header: the proxy "
                           "never accepts it in the URL, so a plain browser tab gets 401. The curl command has it.")
        self.note.setObjectName("hint")
        self.note.setWordWrap(True)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("URL"))
        row.addWidget(self.url, 1)
        for button in (self.copy_curl_button, self.copy_url_button, self.copy_token_button):
            row.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.note)
        self._token = ""
        self._request: tuple[str, str, str] = ("GET", "/", "")
        self.copy_curl_button.clicked.connect(lambda: self._copy(self.curl(), "curl command"))
        self.copy_url_button.clicked.connect(lambda: self._copy(self.url.text(), "URL"))
        self.copy_token_button.clicked.connect(lambda: self._copy(self._token, "token"))
        self.set_service("", "")

    def set_service(self, url: str, token: str) -> None:
        """Show ``url`` (empty: no service, buttons off). The token is never displayed, only copied."""
        self._token = token
        self.url.setText(url)
        self.url.setCursorPosition(0)  # show the scheme and host, not the end
        for button in (self.copy_curl_button, self.copy_url_button, self.copy_token_button):
            button.setEnabled(bool(url))
        self.copy_token_button.setEnabled(bool(url and token))

    def set_request(self, method: str, path: str, body: str) -> None:
        """The address bar's request: the curl command repeats it."""
        self._request = (method, path, body)

    def curl(self) -> str:
        method, path, body = self._request
        return curl_command(method, self.url.text().rstrip("/") + path, self._token, body)

    def _copy(self, text: str, what: str) -> None:
        QApplication.clipboard().setText(text)
        self.copy_curl_button.setToolTip(f"Copied the {what} to the clipboard")


class BlockedList(QWidget):
    """The requests the page made that the browser blocked, newest last, with their count."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel()
        self.title.setToolTip("The page may only talk to its own service: every other request is blocked, "
                              "so the guest cannot use this window to reach your network or the internet.")
        self.list = QListWidget()
        self.list.setObjectName("blockedRequests")
        self.list.setAlternatingRowColors(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # the host and the file name stay readable
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.list, 1)
        self._count = 0
        self._update_title()

    def add(self, url: str, kind: str) -> None:
        self._count += 1
        self.list.addItem(f"{kind}: {url}")
        item = self.list.item(self.list.count() - 1)
        item.setToolTip(f"{time.strftime('%H:%M:%S')}  blocked {kind} request to {url}")
        while self.list.count() > MAX_BLOCKED:
            self.list.takeItem(0)
        self.list.scrollToBottom()
        self._update_title()

    def clear(self) -> None:
        self._count = 0
        self.list.clear()
        self._update_title()

    def entries(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def _update_title(self) -> None:
        self.title.setText(f"Blocked requests: {self._count}" if self._count else "Blocked requests: none")
