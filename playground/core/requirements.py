"""Package requirements as a run names them (``Spec.packages``): checked before anything is fetched.

Only the plain forms a user types are accepted: a PyPI name, optionally
with one exact or lower-bound version (``tabulate``, ``sympy==1.13.3``,
``rich>=13``). No URLs, paths, extras or markers: the host resolves the
rest itself from wheel metadata, and a requirement is never handed to a
tool as an option (a leading ``-`` is not a name).
"""

from __future__ import annotations

import re
from typing import Final

from playground.core.errors import InvalidSpec

__all__ = ["MAX_PACKAGES", "Requirement", "check_packages", "check_requirement", "normalize", "parse_requirement"]

#: The most packages one run may ask for.
MAX_PACKAGES: Final = 32
_NAME: Final = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?"
_VERSION: Final = r"[0-9][A-Za-z0-9.+!-]{0,62}"
_REQUIREMENT = re.compile(rf"^(?P<name>{_NAME})\s*(?:(?P<op>==|>=)\s*(?P<version>{_VERSION}))?$")


def normalize(name: str) -> str:
    """PEP 503: lower case, runs of ``-_.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


class Requirement(tuple[str, str, str]):
    """(normalised name, operator or "", version or "")."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return self[0]

    @property
    def op(self) -> str:
        return self[1]

    @property
    def version(self) -> str:
        return self[2]

    def __str__(self) -> str:
        return f"{self.name}{self.op}{self.version}"


def parse_requirement(text: str) -> Requirement:
    """Parse one requirement.

    Raises:
        InvalidSpec: not a plain ``name``, ``name==version`` or ``name>=version``.
    """
    if not isinstance(text, str):
        raise InvalidSpec(f"a package must be a string like 'tabulate' or 'sympy==1.13', got {text!r}")
    match = _REQUIREMENT.match(text.strip())
    if match is None:
        raise InvalidSpec(
            f"bad package {text!r}: give a PyPI name, optionally with ==VERSION or >=VERSION (no URLs, paths or extras)"
        )
    return Requirement((normalize(match["name"]), match["op"] or "", match["version"] or ""))


def check_requirement(text: str) -> str:
    """``text`` stripped, after ``parse_requirement`` accepted it."""
    parse_requirement(text)
    return text.strip()


def check_packages(packages: object) -> tuple[str, ...]:
    """A run's package list, checked: a sequence of at most ``MAX_PACKAGES`` requirements.

    Raises:
        InvalidSpec: a single string, too many, or a bad requirement.
    """
    if isinstance(packages, (str, bytes)) or not isinstance(packages, (list, tuple)):
        raise InvalidSpec("packages must be a list of requirement strings, not a single string")
    if len(packages) > MAX_PACKAGES:
        raise InvalidSpec(f"at most {MAX_PACKAGES} packages per run, got {len(packages)}")
    return tuple(check_requirement(r) for r in packages)
