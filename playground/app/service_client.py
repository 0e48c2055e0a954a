"""``ServiceClient``: simple HTTP requests to the served program, for the Service tab's address bar.

The embedded browser shows pages; it cannot show a POST's answer on
demand, and it turns a response without a usable Content-Type into a
download (the proxy, aiohttp, labels a bodied response that has no
Content-Type ``application/octet-stream``), which left the previous page
on screen. This client makes such requests itself (Qt's network stack,
asynchronous on the GUI thread) and ``reply_html`` renders any answer as
a small page: status, type, size and the body as text.

The token goes only where the browser would send it: ``request_policy``
must say AUTHORIZE for the URL, redirects are not followed and no proxy
is used.
"""

from __future__ import annotations

import html
import json
import logging
from dataclasses import dataclass
from typing import Final

from PySide6.QtCore import QByteArray, QObject, QUrl, Signal
from PySide6.QtNetwork import QNetworkAccessManager, QNetworkProxy, QNetworkReply, QNetworkRequest

from playground.app.request_policy import Decision, ProxyTarget, decide
from playground.app.themes import Theme
from playground.core.guest_text import escape, from_guest

log = logging.getLogger(__name__)

METHODS: Final = ("GET", "POST")
TIMEOUT_MS: Final = 30_000
#: Bodies longer than this are cut for display (the proxy caps responses anyway).
MAX_SHOWN: Final = 256 * 1024


@dataclass(frozen=True, slots=True)
class Reply:
    """One answer: ``status`` 0 and ``error`` set when no HTTP response came back."""

    method: str
    url: str
    status: int
    reason: str
    content_type: str
    body: bytes
    error: str = ""

    @property
    def path(self) -> str:
        url = QUrl(self.url)
        query = f"?{url.query()}" if url.hasQuery() else ""
        return (url.path() or "/") + query

    def headline(self) -> str:
        """``POST /echo → 200 OK · application/json · 45 B`` (or why nothing came back)."""
        if not self.status:
            return f"{self.method} {self.path} → no answer: {self.error}"
        kind = self.content_type or "no Content-Type"
        return f"{self.method} {self.path} → {self.status} {self.reason} · {kind} · {len(self.body)} B"


def body_content_type(body: bytes) -> str:
    """JSON when the body parses as JSON, else plain text (the address bar sends typed text)."""
    try:
        json.loads(body)
    except ValueError:
        return "text/plain; charset=utf-8"
    return "application/json"


class ServiceClient(QObject):
    """Sends one request at a time to the service's proxy. GUI thread only; ``finished`` carries a ``Reply``."""

    finished = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._manager = QNetworkAccessManager(self)
        self._manager.setProxy(QNetworkProxy(QNetworkProxy.ProxyType.NoProxy))  # the token never meets a proxy
        self._pending: QNetworkReply | None = None

    def send(self, method: str, url: str, target: ProxyTarget, body: bytes = b"") -> bool:
        """Start ``method url`` with the token; False (nothing sent) when ``url`` is not the proxy's."""
        qurl = QUrl(url)
        if method not in METHODS or decide(target, qurl.scheme(), qurl.host(), qurl.port()) is not Decision.AUTHORIZE:
            return False
        self.abort()
        request = QNetworkRequest(qurl)
        request.setRawHeader(QByteArray(b"Authorization"), QByteArray(target.header()))
        request.setAttribute(QNetworkRequest.Attribute.RedirectPolicyAttribute,
                             QNetworkRequest.RedirectPolicy.ManualRedirectPolicy)
        request.setTransferTimeout(TIMEOUT_MS)
        if method == "POST":
            request.setHeader(QNetworkRequest.KnownHeaders.ContentTypeHeader, body_content_type(body))
            reply = self._manager.post(request, QByteArray(body))
        else:
            reply = self._manager.get(request)
        self._pending = reply
        reply.finished.connect(lambda: self._finished(reply, method, url))
        return True

    def abort(self) -> None:
        """Forget the request in flight (its answer is dropped)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.abort()

    def _finished(self, reply: QNetworkReply, method: str, url: str) -> None:
        reply.deleteLater()
        if reply is not self._pending:
            return  # aborted or replaced
        self._pending = None
        status = reply.attribute(QNetworkRequest.Attribute.HttpStatusCodeAttribute)
        reason = reply.attribute(QNetworkRequest.Attribute.HttpReasonPhraseAttribute)
        body = bytes(reply.read(MAX_SHOWN + 1).data())
        if not isinstance(status, int):
            self.finished.emit(Reply(method, url, 0, "", "", b"", reply.errorString()))
            return
        content_type = bytes(reply.rawHeader("Content-Type").data()).decode("latin-1")
        self.finished.emit(Reply(method, url, status, str(reason or ""), content_type, body))


def is_html(reply: Reply) -> bool:
    return reply.content_type.split(";")[0].strip().lower() == "text/html"


def reply_html(reply: Reply, theme: Theme, note: str = "") -> str:
    """A local page showing ``reply`` as text: headline, ``note``, the body (bytes that are not UTF-8 escaped)."""
    shown = reply.body[:MAX_SHOWN]
    text = escape(from_guest(shown))
    if len(reply.body) > MAX_SHOWN:
        text += f"\n[… cut at {MAX_SHOWN} bytes]"
    colour = theme.ok if 200 <= reply.status < 400 else theme.error
    extra = f'<p style="color:{theme.note}">{html.escape(note)}</p>' if note else ""
    body = html.escape(text) if reply.body else f'<i style="color:{theme.gutter_text}">(empty body)</i>'
    return (f'<html><body style="background:{theme.base};color:{theme.text};font-family:sans-serif;margin:1em">'
            f'<p style="color:{colour};font-weight:bold">{html.escape(reply.headline())}</p>{extra}'
            f'<pre style="white-space:pre-wrap;font-family:monospace">{body}</pre></body></html>')
