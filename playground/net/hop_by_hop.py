"""The headers a proxy never forwards, shared by the egress proxy and the serve reverse proxy.

A proxy drops the hop-by-hop headers (RFC 9110 section 7.6.1) and any
header a ``Connection`` header names: :data:`HOP_BY_HOP` is the fixed list,
:func:`not_forwarded` adds the names one message's ``Connection`` headers
list. Each proxy adds its own extras on top (the egress proxy rewrites
``Host``; the reverse proxy drops ``Expect``).
"""

from __future__ import annotations

from collections.abc import Iterable

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


def not_forwarded(connection_values: Iterable[str]) -> frozenset[str]:
    """Lower-case names of the headers not to forward: :data:`HOP_BY_HOP` plus every name listed in ``Connection``.

    ``connection_values`` are the message's ``Connection`` header values
    (each a comma-separated list of header names; repeated headers count
    alike). Blank list items are ignored.
    """
    named = {token.strip().lower() for value in connection_values for token in value.split(",")}
    named.discard("")
    return HOP_BY_HOP | named


__all__ = ["HOP_BY_HOP", "not_forwarded"]
