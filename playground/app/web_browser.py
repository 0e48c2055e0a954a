"""``ServiceBrowser``: an embedded browser that shows one served guest app, and nothing else.

This module imports QtWebEngine, which costs start-up time and needs
libraries a machine may lack: only ``service_pane`` imports it, the first
time the Service tab is shown. The browser uses its own off-the-record
profile (no disk cache, no persistent cookies, nothing shared with any
other page) whose ``TokenInterceptor`` adds the bearer token to requests
for the service's proxy and blocks every other network request (see
``request_policy``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QByteArray, QObject, QUrl, Signal
from PySide6.QtWebEngineCore import (
    QWebEngineDownloadRequest,
    QWebEnginePage,
    QWebEngineProfile,
    QWebEngineSettings,
    QWebEngineUrlRequestInfo,
    QWebEngineUrlRequestInterceptor,
)
from PySide6.QtWebEngineWidgets import QWebEngineView
from PySide6.QtWidgets import QVBoxLayout, QWidget

from playground.app.request_policy import Decision, ProxyTarget, decide

log = logging.getLogger(__name__)

#: Blocked URLs remembered for the status line (the newest ones).
MAX_BLOCKED_SHOWN = 20


class RequestInfo(Protocol):
    """The part of ``QWebEngineUrlRequestInfo`` the interceptor uses (a test can fake it)."""

    def requestUrl(self) -> QUrl: ...
    def setHttpHeader(self, name: QByteArray | bytes, value: QByteArray | bytes) -> None: ...
    def block(self, shouldBlock: bool) -> None: ...


def resource_kind(info: QWebEngineUrlRequestInfo | RequestInfo) -> str:
    """``image``, ``script``, ``xhr``... from Qt's resource type (``request`` when a fake has none)."""
    kind = getattr(info, "resourceType", None)
    if kind is None:
        return "request"
    name = getattr(kind(), "name", "")
    return name.removeprefix("ResourceType").lower() or "request"


class TokenInterceptor(QWebEngineUrlRequestInterceptor):
    """Adds ``Authorization: Bearer <token>`` for the proxy's exact host:port; blocks other network requests.

    Qt calls ``interceptRequest`` on the GUI thread. The target is replaced
    as a whole (one immutable value), so a request sees either the old or
    the new target, never a mix. With no target everything but local
    content is blocked and no token is sent anywhere.
    """

    #: A request was blocked: its URL (no user info, no query) and what kind of resource it was.
    requestBlocked = Signal(str, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._target: ProxyTarget | None = None
        self.blocked: list[str] = []
        self.blocked_count = 0
        self.authorized_count = 0

    @property
    def target(self) -> ProxyTarget | None:
        return self._target

    def set_target(self, target: ProxyTarget | None) -> None:
        self._target = target

    def interceptRequest(self, info: QWebEngineUrlRequestInfo | RequestInfo) -> None:
        url = info.requestUrl()
        decision = decide(self._target, url.scheme(), url.host(), url.port())
        if decision is Decision.AUTHORIZE:
            assert self._target is not None
            info.setHttpHeader(QByteArray(b"Authorization"), QByteArray(self._target.header()))
            self.authorized_count += 1
        elif decision is Decision.BLOCK:
            info.block(True)
            self.blocked_count += 1
            port = f":{url.port()}" if url.port() >= 0 else ""
            self.blocked.append(f"{url.scheme()}://{url.host()}{port}{url.path()}")  # no user info, no query
            del self.blocked[:-MAX_BLOCKED_SHOWN]
            log.info("service browser blocked a request to %s", self.blocked[-1])
            self.requestBlocked.emit(self.blocked[-1], resource_kind(info))


class ServiceBrowser(QWidget):
    """A web view on a private off-the-record profile. GUI thread only.

    ``open`` shows a service (its token goes to that proxy only);
    ``show_html`` shows a local message and forgets the token. A response
    the browser would save as a file (no usable Content-Type) is never
    written anywhere: the download is cancelled and ``downloadIntercepted``
    carries its URL, so the pane can show the body instead.
    """

    loadFinished = Signal(bool)
    downloadIntercepted = Signal(str)
    pathChanged = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Children are destroyed in creation order: the view (and the page it
        # owns) before the profile, the profile before its interceptor.
        self.view = QWebEngineView(self)
        self.profile = QWebEngineProfile(self)  # no storage name: off the record
        self.profile.setHttpCacheType(QWebEngineProfile.HttpCacheType.MemoryHttpCache)
        self.profile.setPersistentCookiesPolicy(QWebEngineProfile.PersistentCookiesPolicy.NoPersistentCookies)
        self.interceptor = TokenInterceptor(self)  # Qt does not own it: this reference keeps it alive
        self.profile.setUrlRequestInterceptor(self.interceptor)
        self.page = QWebEnginePage(self.profile, self.view)
        settings = self.page.settings()
        for attribute, on in (
            (QWebEngineSettings.WebAttribute.LocalContentCanAccessRemoteUrls, False),
            (QWebEngineSettings.WebAttribute.LocalContentCanAccessFileUrls, False),
            (QWebEngineSettings.WebAttribute.PluginsEnabled, False),
            (QWebEngineSettings.WebAttribute.JavascriptCanOpenWindows, False),
            (QWebEngineSettings.WebAttribute.DnsPrefetchEnabled, False),
            (QWebEngineSettings.WebAttribute.AllowRunningInsecureContent, False),
        ):
            settings.setAttribute(attribute, on)
        self.view.setPage(self.page)
        self.page.loadFinished.connect(self.loadFinished)
        self.page.urlChanged.connect(self._url_changed)
        self.page.loadFinished.connect(self._keep_zoom)
        self._zoom = 1.0
        self.profile.downloadRequested.connect(self._download_requested)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)

    def open(self, url: str, target: ProxyTarget) -> None:
        """Load ``url`` with ``target``'s token on every request to ``target`` (and only there)."""
        self.interceptor.set_target(target)
        self.view.setUrl(QUrl(url))

    def show_html(self, html: str) -> None:
        """Stop loading, forget the token, show ``html`` (no network access)."""
        self.interceptor.set_target(None)
        self.page.triggerAction(QWebEnginePage.WebAction.Stop)
        self.page.setHtml(html, QUrl("about:blank"))

    def show_page(self, html: str, url: str, target: ProxyTarget) -> None:
        """Show a page the pane fetched itself (a POST's HTML answer) as if loaded from ``url``.

        Its relative links, styles and scripts resolve against ``url`` and
        get the token, exactly as for a page the browser loaded.
        """
        self.interceptor.set_target(target)
        self.page.setHtml(html, QUrl(url))

    def set_zoom(self, factor: float) -> None:
        """The window's zoom, kept across navigations (Chromium may reset it when the page changes)."""
        self._zoom = factor
        self.view.setZoomFactor(factor)

    def _keep_zoom(self, _ok: bool) -> None:
        if abs(self.view.zoomFactor() - self._zoom) > 0.001:
            self.view.setZoomFactor(self._zoom)

    def _download_requested(self, download: QWebEngineDownloadRequest) -> None:
        url = download.url().toString()
        download.cancel()  # nothing the guest sends is written to the host's disk
        log.info("service browser: showing %s instead of downloading it (%s)", url, download.mimeType())
        self.downloadIntercepted.emit(url)

    def _url_changed(self, url: QUrl) -> None:
        if url.scheme() in ("http", "https"):
            query = f"?{url.query()}" if url.hasQuery() else ""
            self.pathChanged.emit((url.path() or "/") + query)

    def url(self) -> str:
        return self.page.url().toString()

    def page_text(self, callback: Callable[[str], None]) -> None:
        """The page's text, delivered to ``callback`` later on the GUI thread."""
        self.page.toPlainText(callback)
