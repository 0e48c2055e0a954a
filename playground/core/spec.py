"""What to run: ``Spec`` and its network policy ``NetPolicy``.

Both are frozen values validated on construction, so a malformed request
fails where it is written, not somewhere inside a backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from playground.core.errors import InvalidSpec
from playground.core.limits import Limits
from playground.core.requirements import check_packages
from playground.core.vfs import clean_key


@dataclass(frozen=True, slots=True, kw_only=True)
class NetPolicy:
    """Outbound network access granted to a guest. ``Spec.net=None`` grants none.

    ``allow_hosts`` entries are exact names or ``*.suffix`` wildcards (which
    match subdomains only, never the bare suffix). Empty ``allow_ports``
    means 80 and 443. Zero ``max_requests``/``max_bytes`` mean the backend
    default. ``allow_private`` lets the guest reach private, loopback and
    link-local addresses: leave it off unless you accept the SSRF risk.
    """

    allow_hosts: tuple[str, ...] = ()
    allow_ports: tuple[int, ...] = ()
    max_requests: int = 0
    max_bytes: int = 0
    allow_private: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "allow_hosts", tuple(h.lower().rstrip(".") for h in self.allow_hosts))
        object.__setattr__(self, "allow_ports", tuple(self.allow_ports))
        for host in self.allow_hosts:
            bare = host[2:] if host.startswith("*.") else host
            if not bare or "*" in bare or "/" in bare or ":" in bare or " " in bare:
                raise InvalidSpec(f"net: bad allow_hosts entry {host!r}")
        for port in self.allow_ports:
            if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
                raise InvalidSpec(f"net: bad port {port!r}")
        for name in ("max_requests", "max_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidSpec(f"net: {name} must be a non-negative int, got {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Spec:
    """One execution.

    ``code`` is source text (or, for the ``wasm`` pack, a module's bytes).
    ``env`` is the complete guest environment: nothing comes from the host.
    ``limits`` override the sandbox defaults field by field. ``net=None``
    means no network at all.

    Files (every key must pass ``vfs.clean_key``; every one counts against
    ``fs_quota`` and ``max_files``):

    * ``files`` go read-only under ``/in``.
    * ``work_files`` go under ``/work``, the working directory, writable by
      the program: a project's other modules next to the program, a data
      file it updates.
    * ``main_file`` names the program's file under ``/work`` (default: the
      pack's, ``main.py`` ...), e.g. the name the user gave it, so
      tracebacks name it. It may not also be a ``work_files`` key.
    * ``root_files`` replaces the standard layout (a read-only ``/`` with
      ``in/ work/ out/ tmp/``) by a writable ``/`` that holds exactly these
      files (keys relative to ``/``), plus ``/in`` if ``files`` is not
      empty and ``/work`` if the program or ``work_files`` need it: the
      WASI test suite's model, for raw WASI modules above all. None (the
      default) keeps the standard layout; only backends that can present
      a tree as the guest's root run such a spec (the Wasm tier).
    """

    lang: str
    code: str | bytes
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    stdin: bytes | str | None = None
    files: Mapping[str, bytes] = field(default_factory=dict)
    limits: Limits | None = None
    net: NetPolicy | None = None
    work_files: Mapping[str, bytes] = field(default_factory=dict)
    main_file: str | None = None
    root_files: Mapping[str, bytes] | None = None
    #: Packages from PyPI to add to the run (``"tabulate"``, ``"sympy==1.13"``): pure-Python wheels
    #: fetched and checked on the host, shown read-only to the guest (``core.packages``).
    packages: Sequence[str] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.lang, str) or not self.lang.strip():
            raise InvalidSpec("lang must be a non-empty string")
        if not isinstance(self.code, (str, bytes)):
            raise InvalidSpec(f"code must be str or bytes, got {type(self.code).__name__}")
        if isinstance(self.args, (str, bytes)):
            raise InvalidSpec("args must be a sequence of strings, not a single string")
        args = tuple(self.args)
        for arg in args:
            if not isinstance(arg, str) or "\x00" in arg:
                raise InvalidSpec(f"bad argument {arg!r} (strings without NUL only)")
        object.__setattr__(self, "args", args)
        env = dict(self.env)
        for key, value in env.items():
            if not isinstance(key, str) or not key or "=" in key or "\x00" in key:
                raise InvalidSpec(f"bad environment variable name {key!r}")
            if not isinstance(value, str) or "\x00" in value:
                raise InvalidSpec(f"bad value for environment variable {key!r}")
        object.__setattr__(self, "env", MappingProxyType(env))
        if self.stdin is not None and not isinstance(self.stdin, (bytes, str)):
            raise InvalidSpec(f"stdin must be bytes, str or None, got {type(self.stdin).__name__}")
        object.__setattr__(self, "files", _file_map(self.files, "files"))
        work = _file_map(self.work_files, "work_files")
        object.__setattr__(self, "work_files", work)
        if self.main_file is not None:
            if not isinstance(self.main_file, str):
                raise InvalidSpec(f"main_file must be a str or None, got {type(self.main_file).__name__}")
            clean_key(self.main_file)
            if self.main_file in work:
                raise InvalidSpec(f"main_file {self.main_file!r} is also a work_files key")
        if self.root_files is not None:
            root = _file_map(self.root_files, "root_files")
            for key in root:
                parts = clean_key(key)
                if parts[0] == "in":
                    raise InvalidSpec(f"root_files key {key!r}: /in holds the read-only inputs (use files)")
                if parts[0] == "work" and "/".join(parts[1:]) in work:
                    raise InvalidSpec(f"root_files key {key!r} is also a work_files key")
            object.__setattr__(self, "root_files", root)
        object.__setattr__(self, "packages", check_packages(self.packages))
        if self.limits is not None and not isinstance(self.limits, Limits):
            raise InvalidSpec("limits must be a Limits or None")
        if self.net is not None and not isinstance(self.net, NetPolicy):
            raise InvalidSpec("net must be a NetPolicy or None")

    @property
    def uses_caller_root(self) -> bool:
        """True when ``root_files`` replaces the standard layout."""
        return self.root_files is not None

    @property
    def stdin_bytes(self) -> bytes:
        if self.stdin is None:
            return b""
        return self.stdin.encode() if isinstance(self.stdin, str) else self.stdin

    @property
    def code_bytes(self) -> bytes:
        return self.code.encode() if isinstance(self.code, str) else self.code


def _file_map(files: Mapping[str, bytes], what: str) -> Mapping[str, bytes]:
    """A read-only copy of ``files`` with checked keys and bytes values."""
    if not isinstance(files, Mapping):
        raise InvalidSpec(f"{what} must be a mapping of relative paths to bytes, got {type(files).__name__}")
    checked: dict[str, bytes] = {}
    for key, data in dict(files).items():
        clean_key(key)
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise InvalidSpec(f"{what} {key!r}: content must be bytes, got {type(data).__name__}")
        checked[key] = bytes(data)
    return MappingProxyType(checked)
