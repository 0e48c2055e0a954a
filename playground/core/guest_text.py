"""Text a guest chose (file names, output): one representation in the core, one escaped form for showing it.

A guest can write any bytes: a file name or an output stream need not be
UTF-8. Losing such a name (or the whole result because of it) is not
acceptable, so there are exactly two forms:

* **In the core**, guest text is a ``str`` in which every byte that is not
  valid UTF-8 is kept as a surrogate escape (U+DC80..U+DCFF), Python's
  ``surrogateescape`` convention, the same as ``os.fsdecode`` on Linux.
  :func:`from_guest` makes it, ``text.encode("utf-8", "surrogateescape")``
  gives back the guest's exact bytes, and ``os.open`` with such a ``str``
  writes exactly those bytes as a name on Linux. The Wasm backend decodes
  WASI paths this way and ``tarfile`` decodes the Docker ``/out`` names
  this way.
* **Wherever it is shown** (JSON for MCP, Qt widgets, terminal messages),
  :func:`escape` turns it into text that is valid Unicode: such a ``str``
  cannot be encoded as UTF-8 (a JSON encoder raises, Qt silently drops
  the surrogates, so two names can collapse into one).

The escaped form is lossless: text that is already valid comes back
unchanged; otherwise each undecodable byte is written ``\\xNN`` and every
backslash is doubled, so the original can be rebuilt. Callers that need to
say which form they show use :func:`is_clean` (MCP reports a
``*_escaped`` flag next to the value).
"""

from __future__ import annotations

__all__ = ["escape", "from_guest", "is_clean"]


def from_guest(data: bytes) -> str:
    """Guest bytes as core text: valid UTF-8 decoded, every other byte kept as a surrogate escape."""
    return data.decode("utf-8", "surrogateescape")


def is_clean(text: str) -> bool:
    """True when ``text`` has no lone surrogates, i.e. it is valid Unicode and :func:`escape` returns it as is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def escape(text: str) -> str:
    """A lossless, valid-Unicode form of guest text (see the module docstring).

    ``"ok.txt"`` stays ``"ok.txt"``; the name made of the bytes ``ff fe``
    and ``.txt`` becomes ``"\\xff\\xfe.txt"`` (backslash, x, f, f, ...).
    A lone surrogate that is not a surrogate escape (not produced by
    :func:`from_guest`, but possible in a ``str`` from elsewhere) is
    written ``\\udXXX``.
    """
    if is_clean(text):
        return text
    doubled = text.replace("\\", "\\\\")
    try:
        # C speed for the common case: only surrogate escapes are in the way.
        return doubled.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        pass
    parts: list[str] = []
    for char in doubled:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:
            parts.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            parts.append(f"\\u{code:04x}")
        else:
            parts.append(char)
    return "".join(parts)
