"""What a prepared (pooled) container runs while it waits, and the payload that ends the wait.

Why: a one-shot container's command is the ``wrapper`` script, which holds
the run's program and arguments, so it cannot be created before the run is
known. A prepared container is created, started and attached ahead of time
with ``PARKED_ARGV`` instead: a root ``sh`` (the same user, capabilities and
hardening as a fresh run's wrapper, see ``profile.oneshot_profile``) blocked
reading its stdin, which uses no CPU. The run then sends ``payload``: a
fixed-width length, the wrapper's body (``wrapper_body``, with the guest's environment as
``set --`` words, where a fresh run has them as argv words) and then exactly
what a fresh container reads on stdin (the input archive, and the keyboard
for a live run). The parked shell has already run ``wrapper_prelude`` (it
took and unset the marker, ``MARK_ENV``, set at create time and random per
container; found the guest user; chose how to drop to it; gave it the
mounts), all before any guest code exists, exactly as a fresh wrapper
starts; it then runs the body in the same shell (``eval``), so from there
on the process tree and the trailer are those of a fresh run.

Nothing of the guest exists before the payload arrives, and each container
takes exactly one payload: it is removed after its run (``pool``).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Final

from backends.docker.wrapper import SETUP_FAILED, wrapper_body, wrapper_prelude
from playground.core import DockerSpec

#: Digits of the script's length at the start of the payload.
LENGTH_DIGITS: Final = 10

#: The parked shell: ``wrapper_prelude`` (as a fresh run's wrapper starts), then wait for the length and
#: the body (the ``x`` keeps trailing newlines) and run it in this same shell, so the prelude's variables
#: and ``drop`` are the body's, as in ``wrapper_script``.
PARKED_SCRIPT: Final = "\n".join(
    (
        *wrapper_prelude(),
        f"n=$(head -c {LENGTH_DIGITS}) || exit {SETUP_FAILED}",
        f"case $n in ''|*[!0-9]*) exit {SETUP_FAILED} ;; esac",
        'n=${n#"${n%%[!0]*}"}',  # no leading zeros (an octal number to some tools)
        'body=$(head -c "$n"; echo x)',
        "body=${body%x}",
        'eval "$body"',
    )
)
#: A prepared container's command.
PARKED_ARGV: Final = ("/bin/sh", "-c", PARKED_SCRIPT, "sh")


def payload(
    spec: DockerSpec, args: Sequence[str], env: Mapping[str, str], archive: bytes, *, live_stdin: bool
) -> bytes:
    """What the run writes to a parked container's stdin before anything else (see the module docstring)."""
    words = " ".join(shlex.quote(f"{name}={value}") for name, value in env.items())
    script = f"set -- {words}\n" + wrapper_body(spec, args, archive_size=len(archive), live_stdin=live_stdin)
    encoded = script.encode()
    return f"{len(encoded):0{LENGTH_DIGITS}d}".encode() + encoded + archive
