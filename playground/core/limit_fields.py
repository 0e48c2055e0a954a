"""What each limit is for the person who sets it: its kind, title, flag, unit grammar and default.

The CLI's limit flags and their help, the GUI's limits panel and the MCP
server's argument descriptions are all made from ``LIMIT_INFO``, and every
default they show is read from ``DEFAULT_LIMITS``, so a default, a unit or
a flag name is written once. The values themselves are checked by
``Limits.validate`` (the one range check), not here.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from playground.core.limits import DEFAULT_LIMITS, Limits, ResolvedLimits, Unlimited
from playground.core.units import format_duration, format_size, parse_count, parse_duration, parse_size


class LimitKind(enum.Enum):
    """How a limit's value is written: each kind has its own parser and form."""

    SIZE = "size"
    DURATION = "duration"
    COUNT = "count"


#: Examples of each kind, as a person would type them.
_EXAMPLES: Final = {
    LimitKind.SIZE: "64M, 512K, 1G, unlimited",
    LimitKind.DURATION: "5s, 500ms, 2m, unlimited",
    LimitKind.COUNT: "256, unlimited",
}

#: The same, for an agent that may also send a bare number (MCP arguments).
_AGENT_GRAMMAR: Final = {
    LimitKind.SIZE: "a size string such as '64M', '512K', '1G' (binary units), or a number of bytes",
    LimitKind.DURATION: "a duration string such as '5s', '500ms', '2m', or a number of seconds",
    LimitKind.COUNT: "a whole number",
}


@dataclass(frozen=True, slots=True)
class LimitField:
    """One ``Limits`` field as people meet it: in a flag, a form row, a tool argument."""

    name: str
    kind: LimitKind
    #: The panel's row title and the name in messages: ``Memory``.
    title: str
    #: The command-line flag that sets it: ``--mem``.
    flag: str
    #: What it bounds, as a help text starts: ``memory limit``.
    meaning: str
    #: A caveat worth a flag's help, or "".
    note: str = ""

    @property
    def dest(self) -> str:
        """The flag's attribute on an ``argparse.Namespace``: ``max_output`` for ``--max-output``."""
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def examples(self) -> str:
        """Values of its kind as a person types them: ``64M, 512K, 1G, unlimited``."""
        return _EXAMPLES[self.kind]

    @property
    def hint(self) -> str:
        """The unit grammar in a few words: ``size: 64M, 512K, 1G, unlimited``."""
        return f"{self.kind.value}: {self.examples}"

    @property
    def agent_grammar(self) -> str:
        return _AGENT_GRAMMAR[self.kind]

    def parse(self, text: str) -> int | float | Unlimited:
        """A typed value of this field's kind; the range is ``Limits.validate``'s to check.

        Raises:
            ValueError: the text is not a value of this kind (the message says what was expected).
        """
        if self.kind is LimitKind.SIZE:
            return parse_size(text)
        if self.kind is LimitKind.DURATION:
            return parse_duration(text)
        return parse_count(text)

    def format(self, value: int | float | Unlimited) -> str:
        """The value as a person would type it: ``10s``, ``128M``, ``256``, ``unlimited``."""
        if isinstance(value, Unlimited):
            return "unlimited"
        if self.kind is LimitKind.SIZE:
            return format_size(int(value))
        if self.kind is LimitKind.DURATION:
            return format_duration(value)
        return str(value)

    def shown(self, limits: Limits | ResolvedLimits | None) -> str:
        """This field of ``limits`` formatted, or ``?`` when there is none."""
        value = None if limits is None else getattr(limits, self.name)
        return "?" if value is None else self.format(value)

    def default(self) -> str:
        """The built-in default, formatted (a language may ask for more: ``Pack.limits``)."""
        return self.shown(DEFAULT_LIMITS)


#: Every limit, in ``LIMIT_FIELDS`` order (a unit test holds the two together).
LIMIT_INFO: Final[dict[str, LimitField]] = {
    f.name: f
    for f in (
        LimitField("memory", LimitKind.SIZE, "Memory", "--mem", "memory limit"),
        LimitField("wall_time", LimitKind.DURATION, "Wall time", "--timeout", "wall-time limit"),
        LimitField("cpu_time", LimitKind.DURATION, "CPU time", "--cpu", "CPU-time limit", note="best effort on Wasm"),
        LimitField("max_output", LimitKind.SIZE, "Output", "--max-output", "stdout+stderr cap"),
        LimitField("fs_quota", LimitKind.SIZE, "FS quota", "--fs-quota", "virtual filesystem quota"),
        LimitField("max_files", LimitKind.COUNT, "Files", "--max-files",
                   "files+dirs in the virtual filesystem", note="/in, /work and /out together"),
        LimitField("max_procs", LimitKind.COUNT, "Processes", "--max-procs", "process limit",
                   note="Docker only; a Wasm guest has one"),
    )
}  # fmt: skip
