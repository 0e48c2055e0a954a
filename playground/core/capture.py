"""What one run or one session eval collects while the guest runs, and the ``Result`` made from it.

``Sandbox.run`` and ``Session.eval`` both capture output, files, attempts
and the clock, and both turn that (plus the backend's ``Outcome``) into a
``Result``, also for a limit error's partial result. One builder, so a
field added to ``Result`` reaches runs and evals alike (a process limit
that held is reported by a session eval as by a run).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from playground.core.attempts import AttemptKind, AttemptLog
from playground.core.limits import ResolvedLimits, reached_limit
from playground.core.output import OutputCapture
from playground.core.result import Outcome, Result, Usage
from playground.core.vfs import VFS

#: The verdict recorded for a limit the guest ran into and was held to (``Result.limits_reached``).
HELD: str = "refused: the guest was held to it"


@dataclass(slots=True, kw_only=True)
class Capture:
    """Output, filesystem and attempts of one run or eval, from its start."""

    output: OutputCapture
    vfs: VFS
    limits: ResolvedLimits
    attempts: AttemptLog = field(default_factory=AttemptLog)
    started: float = field(default_factory=time.monotonic)
    _held: set[str] = field(default_factory=set, init=False)

    def result(
        self, outcome: Outcome | None, *, backend: str, restarted: bool = False, interrupted: bool = False
    ) -> Result:
        """The ``Result`` so far (``outcome`` None: the guest never ended on its own, e.g. input did not fit)."""
        for name in outcome.limits_reached if outcome else ():
            if name not in self._held:  # once, however often a result is made
                self._held.add(name)
                self.attempts.record(AttemptKind.LIMIT_REACHED, reached_limit(name, self.limits), HELD)
        tree = self.vfs.report()
        return Result(
            stdout=self.output.stdout(),
            stderr=self.output.stderr(),
            truncated=self.output.truncated,
            exit_code=outcome.exit_code if outcome else -1,
            files=tree.out,
            usage=Usage(
                wall=time.monotonic() - self.started,
                peak_memory=outcome.peak_memory if outcome else 0,
                fs_bytes=tree.bytes_used,
                fs_files=tree.nodes_used,
            ),
            backend=backend,
            restarted=restarted,
            interrupted=interrupted,
            net_log=outcome.net_log if outcome else (),
            limits_reached=outcome.limits_reached if outcome else (),
            attempts=self.attempts.snapshot(),
            attempts_dropped=self.attempts.dropped,
        )
