"""Asking pip, in a subprocess, which pure-Python wheels a run's packages need, and fetching exactly those.

Why pip, and why these flags (nothing here imports pip; it runs as
``<python> -m pip``, with the user's pip configuration: their index,
proxy and certificates are their machine's way to reach PyPI):

* ``--only-binary :all:``: pip never builds a source distribution, so no
  package code runs on the host (an sdist's build backend runs arbitrary
  code even to report its metadata).
* ``--python-version X --implementation cp --abi none --platform any``:
  only wheels without native code match (ABI ``none``, platform ``any``),
  for the guest's Python rather than the host's.
* ``install --dry-run --ignore-installed --report``: resolves the whole
  closure (dependencies, versions, markers evaluated for that Python)
  without installing anything, and reports each wheel's URL and the
  index's SHA-256. ``download --no-deps --require-hashes`` then fetches
  exactly those files and pip checks each hash; the caller checks again.
* A runtime's own distributions (the scientific runtime's numpy ...) are
  offered to pip as empty stand-in wheels pinned to the runtime's versions
  (``--find-links`` + ``--constraint``), so a package may depend on them
  and a version conflict is pip's to report; they are never fetched.

When pip cannot resolve, ``failure`` reads its error text and names the
packages it found no usable wheel for; ``has_platform_wheel`` then asks
pip (for the host, no downloads) whether such a package exists as a
native wheel, so the refusal can say "needs native code" rather than
"does not exist".
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

#: How long one pip call may take (a first resolution of a large closure downloads metadata).
PIP_TIMEOUT: Final = 600.0
_NAME: Final = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_NO_MATCH = re.compile(rf"No matching distribution found for ({_NAME})\S*(?: \(from ({_NAME})[^)]*\))?")
_CONFLICT_NO_DIST = re.compile(r"have no matching distributions available for your environment:\n((?:[ \t]+\S+\n?)+)")
_DEPENDS = re.compile(rf"^\s*({_NAME}) \S+ depends on ({_NAME})", re.MULTILINE)
_NETWORK = (
    "NewConnectionError", "Max retries exceeded", "Temporary failure in name resolution", "Could not fetch URL",
    "Network is unreachable", "Name or service not known", "ConnectTimeoutError", "ReadTimeoutError",
)  # fmt: skip


class PipError(Exception):
    """pip could not be run, or failed for a reason that is not about the packages (the message says which)."""


@dataclass(frozen=True, slots=True)
class Pin:
    """One wheel of a resolved closure: what pip reported."""

    name: str
    version: str
    filename: str
    sha256: str
    url: str
    requested: bool


@dataclass(frozen=True, slots=True)
class Unresolvable:
    """pip found no usable wheel for ``missing`` (name -> the package that needed it, "" when asked for)."""

    missing: Mapping[str, str]
    detail: str


def normal(name: str) -> str:
    """PEP 503 normalised name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _tags(python_version: str) -> list[str]:
    return [
        "--only-binary", ":all:", "--python-version", python_version, "--implementation", "cp",
        "--abi", "none", "--platform", "any",
    ]  # fmt: skip


def _pip(python: str, args: Sequence[str], *, timeout: float = PIP_TIMEOUT) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PYTHONIOENCODING="utf-8")
    try:
        return subprocess.run(
            [python, "-m", "pip", *args], capture_output=True, text=True, timeout=timeout, env=env,
            stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
    except FileNotFoundError:
        raise PipError(f"cannot run {python} -m pip") from None
    except subprocess.TimeoutExpired:
        raise PipError(f"pip took longer than {timeout:.0f} s") from None


def _write_stubs(provided: Mapping[str, str], folder: Path) -> tuple[Path, Path]:
    """Empty stand-in wheels for ``provided`` (name -> version) and a constraints file pinning them."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for name, version in sorted(provided.items()):
        dist = re.sub(r"[-_.]+", "_", name)
        info = f"{dist}-{version}.dist-info"
        with zipfile.ZipFile(folder / f"{dist}-{version}-py3-none-any.whl", "w") as stub:
            stub.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
            stub.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: playground\nRoot-Is-Purelib: true\n"
                          "Tag: py3-none-any\n")
            stub.writestr(f"{info}/RECORD", "")
        lines.append(f"{name}=={version}\n")
    constraints = folder / "constraints.txt"
    constraints.write_text("".join(lines), encoding="utf-8")
    return folder, constraints


def resolve(
    requirements: Sequence[str], *, python_version: str, provided: Mapping[str, str], work: Path, python: str
) -> list[Pin] | Unresolvable:
    """The closure of pure-Python wheels ``requirements`` need, minus ``provided`` (pip resolves; nothing runs).

    ``work`` is an empty scratch directory. Returns ``Unresolvable`` when
    pip found no usable wheel for some package.

    Raises:
        PipError: pip is missing, the index cannot be reached, or pip failed otherwise.
    """
    report = work / "report.json"
    args = [
        "install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(report),
        "--target", str(work / "target"), *_tags(python_version),
    ]  # fmt: skip
    if provided:
        links, constraints = _write_stubs(provided, work / "provided")
        args += ["--find-links", str(links), "--constraint", str(constraints)]
    done = _pip(python, [*args, "--", *requirements])
    if done.returncode != 0:
        return _failure(done.stderr)
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
        pins = [_pin(item) for item in data["install"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise PipError(f"pip's report could not be read: {exc}") from None
    skip = {normal(n) for n in provided}
    return [p for p in pins if normal(p.name) not in skip]


def _pin(item: Mapping[str, object]) -> Pin:
    info = item["download_info"]
    meta = item["metadata"]
    assert isinstance(info, dict) and isinstance(meta, dict)
    url = str(info["url"])
    sha = str(info["archive_info"]["hashes"]["sha256"]).lower()
    filename = url.rsplit("/", 1)[-1].split("#", 1)[0]
    if not re.fullmatch(r"[0-9a-f]{64}", sha) or not filename.endswith(".whl") or "/" in filename:
        raise ValueError(f"unexpected entry for {meta.get('name')!r}: {url}")
    return Pin(str(meta["name"]), str(meta["version"]), filename, sha, url, bool(item.get("requested")))


def _failure(stderr: str) -> Unresolvable:
    """What pip's error text says it could not find; raises PipError when it is not about the packages."""
    missing: dict[str, str] = {}
    for name, parent in _NO_MATCH.findall(stderr):
        missing.setdefault(normal(name), normal(parent) if parent else "")
    conflict = _CONFLICT_NO_DIST.search(stderr)
    if conflict:
        parents = {normal(dep): normal(pkg) for pkg, dep in _DEPENDS.findall(stderr)}
        for line in conflict.group(1).split():
            missing.setdefault(normal(line), parents.get(normal(line), ""))
    errors = "\n".join(line for line in stderr.splitlines() if line.startswith("ERROR")) or stderr.strip()
    if missing:
        return Unresolvable(missing, errors[-2000:])
    if any(sign in stderr for sign in _NETWORK):
        raise PipError(f"the package index could not be reached: {errors[-600:]}")
    if "No module named pip" in stderr:
        raise PipError("pip is not installed for this Python (python -m ensurepip)")
    raise PipError(errors[-1200:] or "pip failed without a message")


def download(pins: Sequence[Pin], *, python_version: str, dest: Path, python: str) -> None:
    """Fetch exactly ``pins`` into ``dest``; pip checks every hash (``--require-hashes``).

    Raises:
        PipError: a download failed or a hash did not match.
    """
    wanted = dest / "requirements.txt"
    wanted.write_text("".join(f"{p.name}=={p.version} --hash=sha256:{p.sha256}\n" for p in pins), encoding="utf-8")
    args = ["download", "--no-deps", "--quiet", "--require-hashes", "--dest", str(dest), *_tags(python_version)]
    done = _pip(python, [*args, "-r", str(wanted)])
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if not line.startswith("WARNING")]
        raise PipError("downloading the wheels failed: " + "\n".join(lines)[-1200:])


def has_platform_wheel(name: str, *, work: Path, python: str) -> bool:
    """Whether the index has a wheel of ``name`` for this host (so: one with native code).

    Installs nothing and builds nothing (``--only-binary``); pip may fetch the wheel's metadata.
    """
    args = [
        "install", "--dry-run", "--ignore-installed", "--no-deps", "--quiet", "--only-binary", ":all:",
        "--report", str(work / f"host-{name}.json"), "--target", str(work / "host-target"), "--", name,
    ]  # fmt: skip
    try:
        return _pip(python, args, timeout=120.0).returncode == 0
    except PipError:
        return False
