"""What runs inside the container: the wrapper script and the input archive it unpacks.

Why it works this way (measured on Docker 20.10 and documented for Podman):

* ``put_archive`` is refused for a container created with a read-only root
  filesystem ("container rootfs is marked read-only"), even before start,
  and the archive API never sees tmpfs mounts (they exist only inside the
  container's mount namespace). So inputs cannot be copied in, and
  ``/out`` cannot be copied out after the container stopped: its tmpfs is
  gone by then.
* Instead the container's main process (under ``docker-init``) is this POSIX
  ``sh`` wrapper, which only needs ``sh`` and ``tar`` in the image. Its stdin
  carries one tar stream (``input_archive``): ``/in`` files, the program
  under ``/work`` and, hidden under ``/work/.playground``, the guest's stdin
  and a per-run random marker. The wrapper unpacks it into the tmpfs
  mounts, makes ``/in`` read-only by permission (``chmod -R a-w``; it is
  owned by the guest uid, which has no capabilities, so a guest that
  chmods its own copy back changes only its own copy), opens the stdin file
  and deletes the staging directory, then runs the compile step (stdin
  ``/dev/null``) and the program (stdin = that file).
* When the program ends, the wrapper kills every other guest process
  (``kill -s KILL -1``: same uid, init is exempt), so nothing can write to
  stdout any more, and writes a trailer to stdout: the marker, ``df`` byte
  and inode usage of the four mounts, the cgroup's peak memory, the marker
  again, and ``tar -c`` of ``/out``. The host splits guest stdout from the
  trailer at the first marker. A guest could read the marker from the
  wrapper and forge a trailer: that only corrupts its own result, which the
  host parses as hostile input anyway (``outtar``).
* The wrapper exits with the program's status, so the container's exit
  code, ``OOMKilled`` and ``docker wait`` mean what they usually mean.
"""

from __future__ import annotations

import io
import shlex
import tarfile
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Final

from playground.core import VFS, DockerSpec
from playground.core.vfs import Dir, File

#: Hidden staging directory inside /work; removed before the guest starts.
STAGE: Final = "/work/.playground"
#: Exit status of the wrapper when the image cannot unpack the inputs.
SETUP_FAILED: Final = 125
#: The mounts whose usage the trailer reports, in order.
REPORTED_MOUNTS: Final = ("/in", "/work", "/out", "/tmp")


def main_path(spec: DockerSpec) -> str:
    """The guest path of the program file (``workdir/main_file``)."""
    return f"{spec.workdir.rstrip('/')}/{spec.main_file}"


def expand(template: Sequence[str], main: str, args: Sequence[str]) -> list[str]:
    """Replace ``{main}`` inside words and a whole ``{args}`` word by the arguments."""
    out: list[str] = []
    for word in template:
        if word == "{args}":
            out.extend(args)
        else:
            out.append(word.replace("{main}", main))
    return out


def _setup_lines() -> tuple[str, ...]:
    """Unpack the input archive, protect /in, open the guest's stdin as fd 3, drop the staging dir."""
    return (
        "umask 022",
        "if ! tar -x -o -f - -C /; then",
        "  echo 'sandbox: the image could not unpack the inputs (it needs /bin/sh and tar)' >&2",
        f"  exit {SETUP_FAILED}",
        "fi",
        f"IFS= read -r mark < {STAGE}/mark || exit {SETUP_FAILED}",
        "chmod -R a-w /in 2>/dev/null",
        f"if [ -f {STAGE}/stdin ]; then exec 3< {STAGE}/stdin; else exec 3< /dev/null; fi",
        f"rm -rf {STAGE}",
    )


def wrapper_script(spec: DockerSpec, args: Sequence[str]) -> str:
    """The ``sh -c`` script the container runs; see the module docstring."""
    main = main_path(spec)
    run = shlex.join(expand(spec.cmd, main, args))
    compile_words = expand(spec.compile, main, args) if spec.compile else []
    step = f"{shlex.join(compile_words)} </dev/null 3<&- && {run} <&3 3<&-" if compile_words else f"{run} <&3 3<&-"
    mounts = " ".join(REPORTED_MOUNTS)
    return "\n".join(
        (
            *_setup_lines(),
            step,
            "rc=$?",
            "exec 3<&-",
            "kill -s KILL -1 2>/dev/null",
            "printf '\\n%s\\n' \"$mark\"",
            f"df -P -k {mounts} 2>/dev/null",
            "printf '%s\\n' \"$mark\"",
            f"df -P -i {mounts} 2>/dev/null",
            "printf '%s\\n' \"$mark\"",
            "cat /sys/fs/cgroup/memory/memory.max_usage_in_bytes 2>/dev/null"
            " || cat /sys/fs/cgroup/memory.peak 2>/dev/null",
            "printf '%s\\n' \"$mark\"",
            "cd /out && tar -c -f - . 2>/dev/null",
            "exit $rc",
        )
    )


def serve_script(spec: DockerSpec, args: Sequence[str]) -> str:
    """The ``sh -c`` script of a guest server: the same setup, then ``exec`` the program.

    No trailer: the server's output streams straight to the logs, and its
    exit status (or OOM kill) is the container's.
    """
    main = main_path(spec)
    run = shlex.join(expand(spec.cmd, main, args))
    if spec.compile:
        compile_words = shlex.join(expand(spec.compile, main, args))
        last = f"{compile_words} </dev/null 3<&- || exit $?\nexec {run} <&3 3<&-"
    else:
        last = f"exec {run} <&3 3<&-"
    return "\n".join((*_setup_lines(), last))


def _walk_in(vfs: VFS) -> Iterator[tuple[str, Dir | File]]:
    inbox = vfs.root.children["in"]
    assert isinstance(inbox, Dir)
    stack: list[tuple[str, Dir]] = [("in", inbox)]
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


def input_archive(vfs: VFS, spec: DockerSpec, code: bytes, stdin: bytes, mark: str) -> bytes:
    """The tar stream the wrapper unpacks at ``/``: ``/in``, the program, stdin and the marker.

    Holds only regular files and directories with relative names the VFS
    already validated; nothing the host reads from disk.
    """
    stage = STAGE.lstrip("/")
    entries: list[TarEntry] = [
        (path, None, 0o755) if isinstance(node, Dir) else (path, bytes(node.data), 0o644)
        for path, node in _walk_in(vfs)
    ]
    entries += [
        (main_path(spec).lstrip("/"), code, 0o644),
        (stage, None, 0o700),
        (f"{stage}/mark", mark.encode() + b"\n", 0o600),
    ]
    if stdin:
        entries.append((f"{stage}/stdin", stdin, 0o600))
    return guest_tar(entries)
