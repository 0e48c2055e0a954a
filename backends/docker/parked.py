"""What a prepared (pooled) container runs while it waits, and the payload that ends the wait.

Why: a one-shot container's command is the ``wrapper`` script, which holds
the run's program and arguments, so it cannot be created before the run is
known. A prepared container is created, started and attached ahead of time
with ``PARKED_ARGV`` instead: a root ``sh`` (the same user, capabilities and
hardening as a fresh run's wrapper, see ``profile.oneshot_profile``) blocked
reading its stdin, which uses no CPU. The run then sends ``payload``: a
fixed-width length, the wrapper script (with the guest's environment as
``set --`` words, where a fresh run has them as argv words) and then exactly
what a fresh container reads on stdin (the input archive, and the keyboard
for a live run). The parked shell ``exec``s the wrapper, so from there on the
process tree, the marker (``MARK_ENV``, set at create time, random per
container) and the trailer are those of a fresh run.

Nothing of the guest exists before the payload arrives, and each container
takes exactly one payload: it is removed after its run (``pool``).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Final

from backends.docker.wrapper import ROOT_PATH, SETUP_FAILED, wrapper_script
from playground.core import DockerSpec

#: Digits of the script's length at the start of the payload.
LENGTH_DIGITS: Final = 10

#: The parked shell: read the length, then the script (the ``x`` keeps trailing newlines), then become it.
PARKED_SCRIPT: Final = "\n".join(
    (
        f"n=$(PATH={ROOT_PATH} head -c {LENGTH_DIGITS}) || exit {SETUP_FAILED}",
        f"case $n in ''|*[!0-9]*) exit {SETUP_FAILED} ;; esac",
        'n=${n#"${n%%[!0]*}"}',  # no leading zeros (an octal number to some tools)
        f'script=$(PATH={ROOT_PATH} head -c "$n"; echo x)',
        "script=${script%x}",
        'exec /bin/sh -c "$script" sh',
    )
)
#: A prepared container's command.
PARKED_ARGV: Final = ("/bin/sh", "-c", PARKED_SCRIPT, "sh")


def payload(
    spec: DockerSpec, args: Sequence[str], env: Mapping[str, str], archive: bytes, *, live_stdin: bool
) -> bytes:
    """What the run writes to a parked container's stdin before anything else (see the module docstring)."""
    words = " ".join(shlex.quote(f"{name}={value}") for name, value in env.items())
    script = f"set -- {words}\n" + wrapper_script(spec, args, archive_size=len(archive), live_stdin=live_stdin)
    encoded = script.encode()
    return f"{len(encoded):0{LENGTH_DIGITS}d}".encode() + encoded + archive
