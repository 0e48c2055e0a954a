"""The one list of hop-by-hop header names, shared by the egress proxy and the serve reverse proxy.

A proxy never forwards these (RFC 9110 section 7.6.1), nor any header a
``Connection`` header names. Each proxy adds its own extras on top (the
egress proxy rewrites ``Host``; the reverse proxy drops ``Expect``).
"""

from __future__ import annotations

#: Lower-case names of the headers that belong to one connection, never to the message.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)

__all__ = ["HOP_BY_HOP"]
