"""``parked``: the payload a prepared container reads, and the script it waits in.

Tries to break: the length prefix (a body cut short or run on into the
archive), the guest's environment (quotes, ``$``, backquotes, newlines must
arrive as the exact words a fresh run passes in argv, never be run by the
root shell), and the split of the wrapper (the prelude and the body must add
up to exactly the fresh run's script, so both paths run the same code).
"""

from __future__ import annotations

import subprocess

import pytest

from backends.docker.parked import LENGTH_DIGITS, PARKED_SCRIPT, payload
from backends.docker.wrapper import MARK_ENV, wrapper_body, wrapper_prelude, wrapper_script
from playground.core import DockerSpec
from playground.packs import bash

assert bash.PACK.docker is not None
SPEC: DockerSpec = bash.PACK.docker


def split(data: bytes) -> tuple[bytes, bytes]:
    length = int(data[:LENGTH_DIGITS])
    return data[LENGTH_DIGITS : LENGTH_DIGITS + length], data[LENGTH_DIGITS + length :]


def test_the_length_prefix_delimits_the_body_from_the_archive() -> None:
    archive = b"\x00tar bytes\n" * 100
    body, rest = split(payload(SPEC, ["a"], {"X": "1"}, archive, live_stdin=False))
    assert rest == archive
    assert body.decode().endswith("exit $rc")
    assert f"head -c {len(archive)} | drop tar" in body.decode()


def test_the_body_never_handles_the_marker_and_the_prelude_does_first() -> None:
    body, _ = split(payload(SPEC, [], {}, b"", live_stdin=False))
    assert MARK_ENV not in body.decode()
    assert PARKED_SCRIPT.startswith(f"mark=${{{MARK_ENV}-}}\nunset {MARK_ENV}\n")
    assert PARKED_SCRIPT.index(f"unset {MARK_ENV}") < PARKED_SCRIPT.index("head -c")


def test_prelude_and_body_are_the_fresh_wrapper(monkeypatch: pytest.MonkeyPatch) -> None:
    import secrets

    monkeypatch.setattr(secrets, "token_hex", lambda n: "ab" * n)  # the here-doc delimiter is random
    for kwargs in ({}, {"archive_size": 77}, {"archive_size": 5, "live_stdin": True}):
        fresh = wrapper_script(SPEC, ["x", "y z"], **kwargs)  # type: ignore[arg-type]
        parts = "\n".join((*wrapper_prelude(), wrapper_body(SPEC, ["x", "y z"], **kwargs)))  # type: ignore[arg-type]
        assert fresh == parts


def test_the_guests_environment_arrives_as_exact_words_and_is_never_run() -> None:
    env = {"A": "it's $HOME `touch /tmp/pwned` $(id)", "B": "line1\nline2", "C": "", "D": '"q" \\ *'}
    body, _ = split(payload(SPEC, [], env, b"", live_stdin=False))
    first_line = body.decode().split("\n", 1)[0]
    assert first_line.startswith("set -- ")
    words_line = body.decode()[: body.decode().index("\numask 022")]
    out = subprocess.run(
        ["/bin/sh", "-c", 'eval "$1"; for w in "$@"; do printf "%s\\0" "$w"; done', "sh", words_line],
        capture_output=True, check=True, timeout=10,
    )  # fmt: skip
    assert out.stdout.split(b"\0")[:-1] == [f"{k}={v}".encode() for k, v in env.items()]
