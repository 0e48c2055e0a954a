"""Which REPL driver a pack's session runs, and how the container is set up to start it.

A session container's main process is a POSIX ``sh`` setup script: it reads
exactly the input archive's size from stdin (``head -c``, so the commands
that follow are left for the driver; the host sends none before the driver
says it is ready), unpacks the driver and the session nonce into
``STAGE``, makes the driver's FIFOs and ``exec``\\s the driver, which then
owns the container's stdin and stdout (see ``repl_protocol``).

Which driver, what runs it and how it is interrupted is the pack's data
(``DockerSpec.session``, a ``DockerDriver``). Driver sources are our own
files in ``resources/drivers/``; nothing the host reads from disk goes in
except them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from backends.docker.wrapper import guest_tar
from playground.core import DockerDriver, Pack
from playground.resource_files import resource_path

#: Where the driver lives inside the container (on the /tmp tmpfs).
STAGE: Final = "/tmp/.pg"
#: Exit status of the setup script when the image cannot start the driver.
SETUP_FAILED: Final = 125


#: A pack's REPL driver (declared in its ``DockerSpec.session``).
Driver = DockerDriver


def drivers_dir() -> Path:
    """``resources/drivers`` of this checkout or installation."""
    return resource_path("drivers")


def driver_for(pack: Pack) -> Driver | None:
    """The REPL driver ``pack`` declares for this tier, or None."""
    return pack.docker.session if pack.docker is not None else None


def no_driver_reason(pack: Pack) -> str | None:
    """None when ``pack`` has a session driver whose source is installed; else why not."""
    driver = driver_for(pack)
    if driver is None:
        return f"no REPL driver for {pack.name}"
    if not (drivers_dir() / driver.resource).is_file():
        return f"the REPL driver {driver.resource} is not installed in {drivers_dir()}"
    return None


def interp_args(driver: Driver) -> tuple[str, ...]:
    """The interpreter's command line after its first word, as the host's spawn watch finds it.

    Both drivers start the process the guest's code runs in as ``<runtime>
    [its options] <driver> interp`` (bash: ``bash --norc --noprofile "$0"
    interp``; node: ``spawn(process.execPath, [__filename, 'interp'])``,
    whose first word is node's own path, unknown here). What that process
    and its descendants exec is what the guest's code spawned
    (``spawnwatch``); the driver's own helpers are not its descendants.
    """
    return (*driver.program[1:], f"{STAGE}/{driver.filename}", "interp")


def setup_script(driver: Driver, archive_size: int) -> str:
    """The ``sh -c`` script that unpacks ``archive_size`` bytes of stdin and execs the driver."""
    fifos = " ".join(f"{STAGE}/{name}" for name in driver.fifos)
    program = " ".join(driver.program)
    return "\n".join(
        (
            "umask 022",
            f"if ! head -c {int(archive_size)} | tar -x -o -f - -C /; then",
            "  echo 'sandbox: the image could not unpack the REPL driver (it needs sh, head and tar)' >&2",
            f"  exit {SETUP_FAILED}",
            "fi",
            f"mkfifo -m 600 {fifos} || exit {SETUP_FAILED}",
            f"cd /work || exit {SETUP_FAILED}",
            f"exec {program} {STAGE}/{driver.filename}",
        )
    )


def session_archive(driver: Driver, nonce: str) -> bytes:
    """The tar stream with the driver source and the nonce (read and deleted by the driver)."""
    source = (drivers_dir() / driver.resource).read_bytes()
    stage = STAGE.lstrip("/")
    return guest_tar([
        (stage, None, 0o700),
        (f"{stage}/{driver.filename}", source, 0o644),
        (f"{stage}/nonce", nonce.encode() + b"\n", 0o600),
    ])  # fmt: skip
