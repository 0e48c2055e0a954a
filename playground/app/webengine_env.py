"""The process environment QtWebEngine reads once: set it before the ``QApplication`` exists.

No Qt import here: ``prepare_webengine_env`` runs at the app's entry point
(and in the GUI tests' conftest) before any Qt object is made.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

#: Chromium switches that keep the embedded browser from talking to anything on
#: its own (update checks, metrics, DNS prefetch, hyperlink pings).
CHROMIUM_FLAGS: tuple[str, ...] = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-domain-reliability",
    "--dns-prefetch-disable",
    "--no-pings",
)


def prepare_webengine_env(env: MutableMapping[str, str] | None = None, *, euid: int | None = None) -> None:
    """Make QtWebEngine start here without phoning home. Idempotent.

    As root Chromium refuses to start with its sandbox on, so
    ``QTWEBENGINE_DISABLE_SANDBOX=1`` is set only when the effective user is
    root (never otherwise: the renderer sandbox is a real protection).
    ``CHROMIUM_FLAGS`` are appended to whatever ``QTWEBENGINE_CHROMIUM_FLAGS``
    the user set, without repeating one.
    """
    env = os.environ if env is None else env
    if euid is None:
        euid = os.geteuid() if hasattr(os, "geteuid") else -1
    if euid == 0:
        env.setdefault("QTWEBENGINE_DISABLE_SANDBOX", "1")
    flags = env.get("QTWEBENGINE_CHROMIUM_FLAGS", "").split()
    flags += [flag for flag in CHROMIUM_FLAGS if flag not in flags]
    env["QTWEBENGINE_CHROMIUM_FLAGS"] = " ".join(flags)
