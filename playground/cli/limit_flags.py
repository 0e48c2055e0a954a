"""The limit flags (``--timeout``, ``--mem``, ...) of ``run``, ``repl`` and ``serve``: made from ``LIMIT_INFO``.

One table in the core (``playground.core.limit_fields``) names each
flag, its unit grammar and its default; this module turns it into argparse
arguments and back into a ``Limits`` layer, so a help text cannot drift
from the default it states.

Two stages: what is not a duration/size/count at all is refused while
parsing (a usage error, exit 2, naming the flag); a number out of range
(zero, negative, above the maximum) is refused by the core's
``Limits.validate`` (a sandbox error, exit 120), see ``checked_limits``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import TypeVar

from playground.core import DEFAULT_LIMITS, LIMIT_INFO, InvalidLimits, Limits, parse_duration

T = TypeVar("T")


def argument_type(parse: Callable[[str], T]) -> Callable[[str], T]:
    """``parse`` as an argparse ``type``: its ``ValueError`` becomes a usage error naming the flag."""

    def typed(text: str) -> T:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return typed


#: A duration flag that is not a limit (``serve --ttl``): ``5s``, ``500ms``, ``unlimited``.
duration_arg = argument_type(parse_duration)


def add_limit_flags(parser: argparse.ArgumentParser, scopes: Mapping[str, str]) -> None:
    """Add the flags of the ``Limits`` fields named in ``scopes``, in ``LIMIT_INFO`` order.

    ``scopes`` maps a field to the words that place it in this command
    (``" per input"``, ``" of the session"``, or ``""``).
    """
    for name, field in LIMIT_INFO.items():
        if name not in scopes:
            continue
        note = f"; {field.note}" if field.note else ""
        parser.add_argument(
            field.flag, dest=field.dest, type=argument_type(field.parse), metavar=field.kind.value.upper(),
            help=f"{field.meaning}{scopes[name]}, e.g. {field.examples} "
                 f"(default {field.default()}{note})",
        )  # fmt: skip


def limits_from_args(args: argparse.Namespace) -> Limits:
    """The ``Limits`` layer the limit flags on ``args`` set (a flag not given, or not offered, inherits)."""
    return Limits(**{name: getattr(args, field.dest, None) for name, field in LIMIT_INFO.items()})


def checked_limits(limits: Limits) -> Limits:
    """``limits`` after the check the sandbox makes (merged with the defaults), naming the flag when refused.

    Raises:
        InvalidLimits: a value is zero, negative, not finite or above the
            largest allowed limit; the message names the flag and the field.
    """
    try:
        DEFAULT_LIMITS.merged(limits).validate()
    except InvalidLimits as exc:
        name, _, problem = str(exc).partition(": ")
        field = LIMIT_INFO.get(name)
        raise InvalidLimits(f"{field.flag} ({name}): {problem}" if field else str(exc)) from None
    return limits
