"""The egress proxy's own credential: the token a guest must show in ``Proxy-Authorization``.

Accepted as ``Basic`` (any user name, the token as password; what HTTP
clients send for ``http://user:token@proxy`` URLs) or ``Bearer``; compared
in constant time (``hmac.compare_digest``).
"""

from __future__ import annotations

import base64
import binascii
import hmac

from playground.net.http1 import Refused, Request

__all__ = ["check_proxy_auth"]


def check_proxy_auth(request: Request, token: str | None) -> None:
    """Return when ``token`` is None or one ``Proxy-Authorization`` header carries it.

    Raises:
        Refused: 407 otherwise.
    """
    if token is None:
        return
    for value in request.header("proxy-authorization"):
        scheme, _, cred = value.strip().partition(" ")
        secret = cred.strip()
        if scheme.lower() == "basic":
            try:
                secret = base64.b64decode(secret, validate=True).decode("utf-8", "replace").partition(":")[2]
            except (binascii.Error, ValueError):
                continue
        elif scheme.lower() != "bearer":
            continue
        if hmac.compare_digest(secret.encode(), token.encode()):
            return
    raise Refused(407, "proxy authentication required")
