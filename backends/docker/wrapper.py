"""What runs inside a run's container: the wrapper scripts and the input archive they unpack.

Why it works this way (measured on Docker 20.10 and documented for Podman):

* ``put_archive`` is refused for a container created with a read-only root
  filesystem ("container rootfs is marked read-only"), even before start,
  and the archive API never sees tmpfs mounts (they exist only inside the
  container's mount namespace). So inputs cannot be copied in, and
  ``/out`` cannot be copied out after the container stopped: its tmpfs is
  gone by then.
* So the container's main process (under ``docker-init``) is a POSIX ``sh``
  wrapper that needs only ``sh``, ``tar``, ``setpriv`` (util-linux) or
  ``su``, ``df`` and ``cat`` in the image. Its stdin carries one tar stream
  (``input_archive``): ``/in`` files, the caller's ``/work`` files, the program under ``/work`` and,
  hidden under ``/work/.playground``, the guest's stdin.

Two users, and why (issue #12): the wrapper runs as root *in the container*
with only ``CAP_SETUID``, ``CAP_SETGID``, ``CAP_SETPCAP`` and ``CAP_KILL``
(``profile.oneshot_profile``; ``no-new-privileges`` and the read-only root
stay), and everything that touches guest code runs as the guest user
65534 with no capabilities at all, dropped by ``setpriv`` (bounding set
emptied too; ``su`` where the image lacks util-linux's ``setpriv``, see
``_DROP``). The guest cannot ptrace the wrapper, read its memory, its
environment or its file descriptors under ``/proc``, or signal it: those
need the same uid or a capability the guest does not have. That is what
makes the trailer trustworthy:

1. the wrapper takes the run's random marker from its environment
   (``MARK_ENV``, set by the host at create time) and unsets it; it is never
   in an argv (``/proc/*/cmdline`` is world-readable) nor in a file;
2. it unpacks the archive *as the guest* (so the files are the guest's, as
   before), then runs ``guest_script`` as the guest with the spec's
   environment (passed as ``NAME=value`` arguments, see ``wrapper_argv``, so
   that the wrapper itself never runs with an environment the guest chose:
   no ``LD_PRELOAD`` or ``PATH`` of the guest's reaches a root process): it
   makes ``/in`` read-only by permission, opens the stdin file, deletes the
   staging directory, runs the compile step (stdin ``/dev/null``) and the
   program (stdin = that file);
3. when that ends, the wrapper kills every other process (``kill -s KILL
   -1`` with ``CAP_KILL``: init is exempt) and waits until the kernel has
   reaped them all (``_SETTLE``), so no guest process holds the container's
   stdout any more, then writes the trailer: the marker, ``df`` byte and inode
   usage of the four mounts, the cgroup's peak memory and counters, the
   in-guest report (``_REPORT_CHANNEL``: what the guest wrote there, after a
   ``MARK:report`` line), the marker again, and
   ``tar -c`` of ``/out`` (run as the guest, which may read its own files;
   nothing of the guest is alive to tamper with it, and the host parses the
   tar as hostile input anyway, see ``outtar``);
4. it exits with the guest's status, so the container's exit code (from the
   engine), ``OOMKilled`` and ``docker wait`` mean what they usually mean.

A guest that prints a marker of its own cannot know the real one: the host
splits at the first real marker, so guest bytes stay guest output.

Serving (``serve_script``) and sessions (``drivers``) run as the guest
throughout: they have no trailer to protect (see their modules).
"""

from __future__ import annotations

import dataclasses
import io
import secrets
import shlex
import tarfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Final

from playground.core import VFS, DockerSpec, InvalidSpec, Spec
from playground.core.package_tree import GUEST_SITE
from playground.core.vfs import Dir, File

#: Hidden staging directory inside /work; removed before the guest's program starts.
STAGE: Final = "/work/.playground"
#: Exit status of the wrapper when the image cannot unpack the inputs.
SETUP_FAILED: Final = 125
#: The mounts whose usage the trailer reports, in order.
REPORTED_MOUNTS: Final = ("/in", "/work", "/out", "/tmp")
#: The environment variable that hands the marker to the wrapper (unset before anything else runs).
MARK_ENV: Final = "PLAYGROUND_MARK"
#: The guest's uid and gid.
GUEST_ID: Final = 65534
#: The descriptor of the in-guest report channel (``report``): open for appending in the guest's processes.
REPORT_FD: Final = 4
#: Bytes of the in-guest report the trailer carries; more is cut (and recorded as such, see ``report``).
REPORT_CAP: Final = 1 << 20
#: The wrapper's own PATH: system directories only (the image's PATH goes to the guest).
ROOT_PATH: Final = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

#: ``drop CMD...``: run CMD as the guest with no capability left. util-linux ``setpriv`` also empties
#: the bounding set; where the image has no such ``setpriv`` (Alpine: busybox's lacks ``--reuid``), ``su``
#: is the fallback: the guest then keeps a bounding set but no permitted or effective capability, and
#: ``no-new-privileges`` keeps it that way. The choice is made before any guest code exists.
_DROP: Final = (
    f"_sp='--reuid={GUEST_ID} --regid={GUEST_ID} --clear-groups --inh-caps=-all --bounding-set=-all'",
    "if setpriv $_sp -- true 2>/dev/null; then",
    '  drop() { setpriv $_sp -- "$@"; }',
    'elif [ -n "$guest_name" ] && su -p -s /bin/sh -c true -- "$guest_name" 2>/dev/null; then',
    '  drop() { su -p -s /bin/sh -c \'exec "$0" "$@"\' -- "$guest_name" "$@"; }',
    "else",
    f"  echo 'sandbox: the image has neither setpriv (util-linux) nor su to start the guest as user {GUEST_ID}' >&2",
    f"  exit {SETUP_FAILED}",
    "fi",
)

#: Kill every process but init and the wrapper, and wait until the kernel has reaped them (init
#: reaps orphans), so nothing of the guest can still write to stdout. Builtins only: after a fork bomb
#: the process limit is still full of dying processes, and a shell that cannot fork exits (dash: status
#: 2), which lost the trailer and with it every verdict (issue #17). It spins instead of sleeping: the
#: processes are already killed, only their reaping is waited for. ``--``: dash's ``kill`` takes a bare
#: ``-1`` for an option and killed nothing, so a guest's leftover process kept a run going until its wall time.
_SETTLE: Final = (
    "while :; do",
    "  kill -s KILL -- -1 2>/dev/null",
    "  left=",
    "  for p in /proc/[0-9]*; do",
    '    case ${p#/proc/} in 1|"$$") ;; *) left=1; break ;; esac',
    "  done",
    '  [ -n "$left" ] || break',
    "done",
)

#: The in-guest report channel (issue #15), opened by the root wrapper before the guest exists: a file
#: root creates (0600, ``noclobber``) in ``/tmp`` and deletes at once, kept open as ``REPORT_FD`` for
#: appending (what the guest inherits) and as fd 5 for reading (closed for the guest, read back into the
#: trailer once no guest process is left). The guest can write to it and nothing more: the file has no name
#: and is root's, so it cannot be reopened through ``/proc/self/fd``. Where it cannot be made, the guest
#: gets ``/dev/null`` (an in-guest hook takes only a regular file) and the report is empty.
_REPORT_CHANNEL: Final = (
    "report=/tmp/.playground-report-$$",
    'if (umask 077 && set -C && : >"$report") 2>/dev/null; then',
    f'  exec {REPORT_FD}>>"$report" 5<"$report"',
    '  rm -f "$report"',
    "else",
    f"  exec {REPORT_FD}>/dev/null 5</dev/null",
    "fi",
)

#: The kernel's own counters of the run's cgroup, as ``name value`` lines after the peak memory:
#: ``oom_kill`` (processes the OOM killer killed: cgroup v1 ``memory.oom_control``, v2
#: ``memory.events``) and ``forks_refused`` (forks the pids limit refused: ``pids.events`` ``max``).
#: Builtins only (``read``, ``[``, ``printf``); a file the image or cgroup lacks prints nothing.
_COUNTERS: Final = (
    "for f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; do",
    '  if [ -r "$f" ]; then',
    '    while read -r k v; do [ "$k" = oom_kill ] && printf \'oom_kill %s\\n\' "$v"; done <"$f"',
    "    break",
    "  fi",
    "done",
    "for f in /sys/fs/cgroup/pids/pids.events /sys/fs/cgroup/pids.events; do",
    '  if [ -r "$f" ]; then',
    '    while read -r k v; do [ "$k" = max ] && printf \'forks_refused %s\\n\' "$v"; done <"$f"',
    "    break",
    "  fi",
    "done",
)


def main_path(spec: DockerSpec) -> str:
    """The guest path of the program file (``workdir/main_file``)."""
    return f"{spec.workdir.rstrip('/')}/{spec.main_file}"


def for_request(docker: DockerSpec, spec: Spec) -> DockerSpec:
    """``docker`` with the program file named as the caller asked (``Spec.main_file``), as on the Wasm tier."""
    return docker if spec.main_file is None else dataclasses.replace(docker, main_file=spec.main_file)


def expand(template: Sequence[str], main: str, args: Sequence[str]) -> list[str]:
    """Replace ``{main}`` (the program's path) and ``{stem}`` (its file name without the extension: a Java
    class) inside words, and a whole ``{args}`` word by the arguments."""
    stem = main.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    out: list[str] = []
    for word in template:
        if word == "{args}":
            out.extend(args)
        else:
            out.append(word.replace("{main}", main).replace("{stem}", stem))
    return out


def _unpack_lines() -> tuple[str, ...]:
    """Unpack the input archive from stdin at ``/`` (run by the guest user)."""
    return (
        "umask 022",
        "if ! tar -x -o -f - -C /; then",
        "  echo 'sandbox: the image could not unpack the inputs (it needs /bin/sh and tar)' >&2",
        f"  exit {SETUP_FAILED}",
        "fi",
    )


def _prepare_lines(*, live_stdin: bool = False) -> tuple[str, ...]:
    """Protect /in, open the guest's stdin as fd 3, drop the staging dir (run by the guest user).

    ``live_stdin``: the program's stdin is the container's own, after the
    input archive (the host forwards ``Spec.stdin`` and then the keyboard
    there, see ``oneshot``); otherwise the stdin file from the archive.
    """
    opened = (
        "exec 3<&0"
        if live_stdin
        else (f"if [ -f {STAGE}/stdin ]; then exec 3< {STAGE}/stdin; else exec 3< /dev/null; fi")
    )
    return ("chmod -R a-w /in 2>/dev/null", opened, f"rm -rf {STAGE}")


def guest_script(spec: DockerSpec, args: Sequence[str], *, live_stdin: bool = False) -> str:
    """The part of a run that the guest user runs: prepare, compile, run; its status is the run's."""
    main = main_path(spec)
    run = shlex.join(expand(spec.cmd, main, args))
    compile_words = expand(spec.compile, main, args) if spec.compile else []
    # exec: the program's own status reaches the wrapper, and the shell takes no process slot while it runs.
    step = f"exec {run} <&3 3<&-"
    if compile_words:
        step = f"{shlex.join(compile_words)} </dev/null 3<&- && {step}"
    return "\n".join((*_prepare_lines(live_stdin=live_stdin), step))


def _delimiter(text: str) -> str:
    """A here-document delimiter that is no line of ``text`` (so the guest part cannot end it early)."""
    lines = set(text.splitlines())
    while True:
        word = f"PLAYGROUND_GUEST_{secrets.token_hex(8)}"
        if word not in lines:
            return word


def wrapper_prelude() -> tuple[str, ...]:
    """The run-independent start of ``wrapper_script`` (root, before any guest code): take and unset the
    marker, the root PATH, the guest user's home and name, ``drop``, the mounts to the guest. A prepared
    container (``parked``) runs it while it waits, then ``wrapper_body`` once the run's payload arrives."""
    return (
        f"mark=${{{MARK_ENV}-}}",
        f"unset {MARK_ENV}",
        "guest_path=$PATH",
        f"PATH={ROOT_PATH}",
        "guest_home=/",
        "guest_name=",
        "while IFS=: read -r _n _p _u _g _c _h _s; do",
        f'  if [ "$_u" = {GUEST_ID} ]; then guest_home=$_h; guest_name=$_n; break; fi',
        "done 2>/dev/null </etc/passwd",
        *_DROP,
        # Podman: the mounts are root's and the wrapper holds CAP_CHOWN (see profile.oneshot_profile).
        # Docker: they are the guest's already, and without CAP_CHOWN this fails, silently (as it does
        # for the packages' mount when a run has none).
        f"chown {GUEST_ID}:{GUEST_ID} /in /work /out {GUEST_SITE} 2>/dev/null",
    )


def wrapper_script(
    spec: DockerSpec, args: Sequence[str], *, archive_size: int | None = None, live_stdin: bool = False
) -> str:
    """The ``sh -c`` script a run's container runs as its (root, few-capability) main process.

    See the module docstring; its positional parameters are the guest's
    environment (``wrapper_argv``). With ``archive_size``, ``head -c`` reads
    exactly the archive from stdin (``tar`` drains a pipe to its end), so
    what follows is left for the guest: ``live_stdin`` makes that the
    program's stdin (the keyboard, see ``oneshot``).
    """
    return "\n".join((*wrapper_prelude(), wrapper_body(spec, args, archive_size=archive_size, live_stdin=live_stdin)))


def wrapper_body(
    spec: DockerSpec, args: Sequence[str], *, archive_size: int | None = None, live_stdin: bool = False
) -> str:
    """What ``wrapper_script`` runs after ``wrapper_prelude``: unpack, run the guest, write the trailer."""
    guest = guest_script(spec, args, live_stdin=live_stdin)
    source = "" if archive_size is None else f"head -c {int(archive_size)} | "
    delimiter = _delimiter(guest)
    mounts = " ".join(REPORTED_MOUNTS)
    return "\n".join(
        (
            "umask 022",
            f"if ! {source}drop tar -x -o -f - -C /; then",
            "  echo 'sandbox: the image could not unpack the inputs (it needs /bin/sh, tar and setpriv)' >&2",
            f"  exit {SETUP_FAILED}",
            "fi",
            f"guest=$(cat <<'{delimiter}'",
            guest,
            delimiter,
            ")",
            *_REPORT_CHANNEL,
            '5<&- drop env -- PATH="$guest_path" HOME="$guest_home" "$@" /bin/sh -c "$guest"'
            + ("" if live_stdin else " </dev/null"),
            "rc=$?",
            *_SETTLE,
            "printf '\\036%s\\n' \"$mark\"",  # trailer.marker_line
            f"df -P -k {mounts} 2>/dev/null",
            "printf '%s\\n' \"$mark\"",
            f"df -P -i {mounts} 2>/dev/null",
            "printf '%s\\n' \"$mark\"",
            "cat /sys/fs/cgroup/memory/memory.max_usage_in_bytes 2>/dev/null"
            " || cat /sys/fs/cgroup/memory.peak 2>/dev/null",
            *_COUNTERS,
            "printf '%s:report\\n' \"$mark\"",  # trailer.report_line
            f"head -c {REPORT_CAP} <&5 2>/dev/null",
            "printf '%s\\n' \"$mark\"",
            "drop tar -c -f - -C /out . 2>/dev/null",
            "exit $rc",
        )
    )


def wrapper_argv(
    spec: DockerSpec,
    args: Sequence[str],
    env: Mapping[str, str],
    *,
    archive_size: int | None = None,
    live_stdin: bool = False,
) -> list[str]:
    """The container's command: the wrapper, with the guest's environment as ``NAME=value`` arguments.

    The container's own environment then holds only the image's variables
    and ``MARK_ENV``: the root wrapper never runs with variables the guest chose.
    """
    script = wrapper_script(spec, args, archive_size=archive_size, live_stdin=live_stdin)
    return ["/bin/sh", "-c", script, "sh", *(f"{name}={value}" for name, value in env.items())]


def serve_script(spec: DockerSpec, args: Sequence[str]) -> str:
    """The ``sh -c`` script of a guest server: unpack and prepare as a run does, then ``exec`` the program.

    It runs as the guest throughout. No trailer: the server's output streams
    straight to the logs, and its exit status (or OOM kill) is the container's.
    """
    main = main_path(spec)
    run = shlex.join(expand(spec.cmd, main, args))
    if spec.compile:
        compile_words = shlex.join(expand(spec.compile, main, args))
        last = f"{compile_words} </dev/null 3<&- || exit $?\nexec {run} <&3 3<&-"
    else:
        last = f"exec {run} <&3 3<&-"
    return "\n".join((*_unpack_lines(), *_prepare_lines(), last))


def _walk_tree(vfs: VFS, base: str) -> Iterator[tuple[str, Dir | File]]:
    """Directories and regular files under ``/base`` of the VFS, parents first (nothing if it is missing)."""
    top = vfs.root.children.get(base)
    if not isinstance(top, Dir):
        return
    stack: list[tuple[str, Dir]] = [(base, top)]
    while stack:
        prefix, directory = stack.pop()
        for name in sorted(directory.children):
            node = directory.children[name]
            path = f"{prefix}/{name}"
            if isinstance(node, Dir):
                yield path, node
                stack.append((path, node))
            elif isinstance(node, File):
                yield path, node


#: One member of a guest tar: its relative name, its bytes (None: a directory) and its mode.
TarEntry = tuple[str, bytes | None, int]


def guest_tar(entries: Iterable[TarEntry]) -> bytes:
    """A tar stream of regular files and directories owned by the guest uid (65534), dated now."""
    now = int(time.time())
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, data, mode in entries:
            info = tarfile.TarInfo(name)
            info.mtime, info.mode = now, mode
            info.uid = info.gid = 65534
            if data is None:
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
            else:
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def input_archive(vfs: VFS, spec: DockerSpec, code: bytes, stdin: bytes) -> bytes:
    """The tar stream the wrapper unpacks at ``/`` (as the guest): ``/in``, ``/work`` (the caller's work files and
    the program) and the program's stdin.

    No marker: the guest can read everything in here.

    Holds only regular files and directories with relative names the VFS
    already validated; nothing the host reads from disk.

    Raises:
        InvalidSpec: a work file is where the program goes.
    """
    stage = STAGE.lstrip("/")
    entries: list[TarEntry] = [
        (path, None, 0o755) if isinstance(node, Dir) else (path, bytes(node.data), 0o644)
        for top in ("in", "work")
        for path, node in _walk_tree(vfs, top)
    ]
    program = main_path(spec).lstrip("/")
    if any(path == program for path, _, _ in entries):
        raise InvalidSpec(f"the program's file /{program} is also one of the caller's files; name one differently")
    entries += [
        (program, code, 0o644),
        (stage, None, 0o700),
    ]
    if stdin:
        entries.append((f"{stage}/stdin", stdin, 0o600))
    return guest_tar(entries)
