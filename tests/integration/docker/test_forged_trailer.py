"""Issue #12, item 8: a guest that hunts for the run's marker cannot forge the wrapper's trailer.

Each guest here does what a hostile one would: it reads ``/proc/<pid>/environ``,
``cmdline`` and the readable memory (``maps`` + ``mem``) of every process it can
see, including ``/proc/1`` and its parent, collects every 32-hex-digit string,
and prints a forged trailer for each: usage of an empty, roomy container, a
peak memory of 1 byte and an ``/out`` tar holding ``forged.txt``. Before the
fix the marker sat in the guest-readable memory of the same-uid wrapper, so
the forgery won: a full ``/work`` went unreported, ``forged.txt`` appeared in
``/out``, the peak memory was 1 and what the guest printed afterwards
vanished. Now the wrapper is another user the guest cannot read, so every
forged block is plain guest output and the numbers are the real ones.

Sessions: the driver's nonce is learnt the same way (it *is* readable: the
driver runs as the guest), yet a printed forged control frame still arrives
as output, because every byte the guest prints travels inside a data frame.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator

import pytest

from backends.docker.engine import Engine
from backends.docker.images import env_var
from playground.core import FSQuotaExceeded, Limits, Sandbox, Spec
from playground.packs import bash, node, python

from .conftest import require_image

FORGED_FILE = "forged.txt"

#: bash: scan /proc, then print a forged trailer for every candidate marker, then a visible line.
BASH_HUNT = r"""
cands=$(
  for p in /proc/[0-9]* /proc/1; do
    [ "${p#/proc/}" = "$$" ] && continue
    cat "$p/environ" "$p/cmdline" 2>/dev/null | tr '\0' '\n'
    while read -r range perms _ _ _ path; do
      case "$perms" in r*) ;; *) continue ;; esac
      case "$path" in ''|'[heap]'|'[stack]') ;; *) continue ;; esac
      s=$((16#${range%-*})); e=$((16#${range#*-}))
      [ $((e - s)) -le $((8 << 20)) ] || continue
      dd if="$p/mem" bs=4096 skip=$((s / 4096)) count=$(((e - s) / 4096)) 2>/dev/null
    done < "$p/maps" 2>/dev/null
  done | grep -aoE '[0-9a-f]{32}' | sort -u
)
echo "candidates: $(printf '%s\n' $cands | grep -c .)" >&2
mkdir -p /tmp/f && echo forged > /tmp/f/forged.txt
df_line='tmpfs 1048576 0 1048576 0%'
for m in $cands; do
  printf '\n%s\n' "$m"
  printf 'Filesystem 1024-blocks Used Available Capacity Mounted on\n'
  for mount in /in /work /out /tmp; do printf '%s %s\n' "$df_line" "$mount"; done
  printf '%s\n' "$m"
  printf 'Filesystem Inodes IUsed IFree IUse%% Mounted on\n'
  for mount in /in /work /out /tmp; do printf 'tmpfs 100000 0 100000 0%% %s\n' "$mount"; done
  printf '%s\n1\n%s\n' "$m" "$m"
  tar -c -f - -C /tmp/f .
done
echo visible-after-forgery
"""

#: python: the same hunt, reading every readable private mapping through /proc/<pid>/mem.
PYTHON_HUNT = r"""
import io, os, re, sys, tarfile
found = set()
for pid in [p for p in os.listdir('/proc') if p.isdigit() and p != str(os.getpid())]:
    for name in ('environ', 'cmdline'):
        try:
            found.update(re.findall(rb'[0-9a-f]{32}', open(f'/proc/{pid}/{name}', 'rb').read()))
        except OSError:
            pass
    try:
        maps = open(f'/proc/{pid}/maps').read().splitlines()
        mem = open(f'/proc/{pid}/mem', 'rb')
    except OSError:
        continue
    for line in maps:
        fields = line.split()
        start, end = (int(x, 16) for x in fields[0].split('-'))
        if not fields[1].startswith('r') or end - start > 64 << 20:
            continue
        try:
            mem.seek(start)
            found.update(re.findall(rb'[0-9a-f]{32}', mem.read(end - start)))
        except (OSError, ValueError, OverflowError):
            pass
print('candidates:', len(found), file=sys.stderr)
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode='w') as t:
    info = tarfile.TarInfo('forged.txt'); info.size = 7; t.addfile(info, io.BytesIO(b'forged\n'))
out = sys.stdout.buffer
for m in sorted(found):
    out.write(b'\n' + m + b'\n' + b'Filesystem 1024-blocks Used Available Capacity Mounted on\n')
    for mount in (b'/in', b'/work', b'/out', b'/tmp'):
        out.write(b'tmpfs 1048576 0 1048576 0% ' + mount + b'\n')
    out.write(m + b'\n' + b'Filesystem Inodes IUsed IFree IUse% Mounted on\n')
    for mount in (b'/in', b'/work', b'/out', b'/tmp'):
        out.write(b'tmpfs 100000 0 100000 0% ' + mount + b'\n')
    out.write(m + b'\n1\n' + m + b'\n' + buf.getvalue())
out.write(b'visible-after-forgery\n')
out.flush()
"""

#: Fill /work to the brim first (the real trailer reports it full).
BASH_FILL = "dd if=/dev/zero of=/work/fill bs=64k 2>/dev/null\n"
PYTHON_FILL = (
    "import os\ntry:\n    with open('/work/fill', 'wb') as f:\n        while True: f.write(b'x' * 65536)\n"
    "except OSError:\n    pass\n"
)

CASES = {
    "bash": (bash.PACK, BASH_FILL, BASH_HUNT),
    "python": (python.PACK, PYTHON_FILL, PYTHON_HUNT),
}


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest, engine: Engine) -> tuple[str, str, str]:
    pack, fill, hunt = CASES[request.param]
    require_image(engine, pack)
    return pack.name, fill, hunt


async def test_forged_usage_and_out_are_ignored(sandbox: Sandbox, case: tuple[str, str, str]) -> None:
    lang, _, hunt = case
    result = await sandbox.run(Spec(lang=lang, code=hunt))
    assert b"candidates:" in result.stderr, result.stderr
    assert result.exit_code == 0, result.stderr
    # The guest's last line is its own output: no forged marker cut the stream.
    assert result.stdout.endswith(b"visible-after-forgery\n"), result.stdout[-300:]
    assert FORGED_FILE not in result.files and not result.files
    # The real cgroup peak of an interpreter, not the forged 1 byte.
    assert result.usage.peak_memory > 1 << 20


async def test_forged_trailer_cannot_hide_a_full_filesystem(sandbox: Sandbox, case: tuple[str, str, str]) -> None:
    lang, fill, hunt = case
    with pytest.raises(FSQuotaExceeded, match="/work") as caught:
        await sandbox.run(Spec(lang=lang, code=fill + hunt, limits=Limits(fs_quota=4 << 20)))
    result = caught.value.result
    assert result is not None and result.stdout.endswith(b"visible-after-forgery\n")


async def test_exit_status_survives_a_forger_that_kills_the_wrapper(sandbox: Sandbox, engine: Engine) -> None:
    """The status comes from the engine: the wrapper's exit, which is the program's. The guest forges a
    trailer, tries to SIGKILL every other process (the wrapper included) and exits 7: 7 it is."""
    require_image(engine, bash.PACK)
    killer = 'for p in /proc/[0-9]*; do [ "${p#/proc/}" = "$$" ] || kill -9 "${p#/proc/}" 2>/dev/null; done\n'
    result = await sandbox.run(Spec(lang="bash", code=BASH_HUNT + killer + "exit 7\n"))
    assert result.exit_code == 7
    assert result.stdout.endswith(b"visible-after-forgery\n")
    assert result.usage.peak_memory > 1 << 20


async def test_guest_cannot_read_the_wrapper(sandbox: Sandbox, engine: Engine) -> None:
    """The wrapper (and init) are another user: environ, mem and fds are closed to the guest; argv holds no secret."""
    require_image(engine, bash.PACK)
    code = r"""
for p in /proc/[0-9]*; do
  pid=${p#/proc/}; [ "$pid" = "$$" ] && continue
  uid=
  while read -r key value _; do [ "$key" = Uid: ] && uid=$value; done 2>/dev/null < "$p/status"
  [ "$uid" = 0 ] || continue
  for f in environ mem fd/1; do
    if head -c 1 "$p/$f" >/dev/null 2>&1; then echo "readable $pid/$f"; else echo "closed $pid/$f"; fi
  done
  if kill -0 "$pid" 2>/dev/null; then echo "signalable $pid"; fi
done
grep -E '^(Uid|CapEff|CapBnd)' /proc/self/status
"""
    result = await sandbox.run(Spec(lang="bash", code=code))
    out = result.stdout.decode()
    assert "closed 1/environ" in out and "closed 1/mem" in out, out
    assert out.count("closed") >= 6, out  # init and the wrapper, three files each
    assert "readable" not in out and "signalable" not in out, out
    assert "Uid:\t65534\t65534\t65534\t65534" in out
    assert "CapEff:\t0000000000000000" in out and "CapBnd:\t0000000000000000" in out


# -- sessions: the driver's nonce is readable, and printing a frame with it still forges nothing ------------

#: bash session: read the readable memory of every other process, print an R frame claiming status 0 for
#: each candidate nonce and each likely eval id, then fail for real.
BASH_SESSION_HUNT = r"""
for p in /proc/[0-9]*; do
  [ "${p#/proc/}" = "$$" ] && continue
  while read -r range perms _ _ _ path; do
    case "$perms" in r*) ;; *) continue ;; esac
    case "$path" in ''|'[heap]'|'[stack]') ;; *) continue ;; esac
    s=$((16#${range%-*})); e=$((16#${range#*-}))
    [ $((e - s)) -le $((8 << 20)) ] || continue
    dd if="$p/mem" bs=4096 skip=$((s / 4096)) count=$(((e - s) / 4096)) 2>/dev/null
  done < "$p/maps" 2>/dev/null
done | grep -aoE '[0-9a-f]{32}' | sort -u > /tmp/cands
while read -r n; do for id in 1 2 3; do printf 'R%08x%s' $((${#n} + 4)) "$n $id 0"; done; done < /tmp/cands
false
"""

#: node session: the same hunt through /proc/<pid>/mem.
NODE_SESSION_HUNT = r"""
(() => {
  const fs = require('fs'); const found = new Set(); const chunk = Buffer.alloc(1 << 20);
  for (const pid of fs.readdirSync('/proc').filter(p => /^\d+$/.test(p) && p !== String(process.pid))) {
    let maps, fd;
    try { maps = fs.readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n'); fd = fs.openSync(`/proc/${pid}/mem`, 'r'); }
    catch (e) { continue; }
    for (const line of maps) {
      const [range, perms] = line.split(' ');
      if (!range || !perms.startsWith('r')) continue;
      const [start, end] = range.split('-').map(x => parseInt(x, 16));
      if (end - start > 256 << 20) continue;
      let tail = '';
      for (let at = start; at < end; at += chunk.length) {  // 1 MiB at a time: the guest has 128 MiB
        let got = 0;
        try { got = fs.readSync(fd, chunk, 0, Math.min(chunk.length, end - at), at); } catch (e) { break; }
        const text = tail + chunk.toString('latin1', 0, got);
        for (const m of text.matchAll(/[0-9a-f]{32}/g)) found.add(m[0]);
        tail = text.slice(-31);
      }
    }
    fs.closeSync(fd);
  }
  for (const n of found) for (const id of [1, 2, 3]) {
    const body = `${n} ${id} 0`;
    process.stdout.write('R' + body.length.toString(16).padStart(8, '0') + body);
  }
  throw new Error('the real status');
})()
"""


@pytest.mark.parametrize("lang", ["bash", "node"])
async def test_session_guest_that_learnt_the_nonce_still_prints_only_data(
    sandbox: Sandbox, engine: Engine, lang: str
) -> None:
    """The nonce is in guest-readable memory (the driver runs as the guest), but printed bytes are always
    wrapped in a data frame: the forged R frames arrive as output and the eval's status is the real one."""
    require_image(engine, bash.PACK if lang == "bash" else node.PACK)
    async with await sandbox.new_session(lang) as session:
        nonce = session._guest._nonce  # type: ignore[attr-defined]
        hunt = BASH_SESSION_HUNT if lang == "bash" else NODE_SESSION_HUNT
        result = await session.eval(hunt)
        forged = f"R{len(nonce) + 4:08x}{nonce} 1 0".encode()
        assert forged in result.stdout, "the guest did not learn the nonce: the test proves nothing"
        assert result.exit_code != 0
        assert (await session.eval("echo alive" if lang == "bash" else "'alive'")).stdout in (b"alive\n", b"'alive'\n")


# -- an image without util-linux's setpriv (Alpine's busybox lacks --reuid): the su fallback -----------------


@pytest.fixture(scope="module")
def image_without_setpriv(engine: Engine) -> Iterator[str]:
    """The bash image minus setpriv, built locally (no registry): the wrapper must fall back to su."""
    base = os.environ.get(env_var("bash"), "")
    if not base or not engine.image_present(base):
        pytest.skip("no local bash image to derive from")
    tag = "playground-bash-nosetpriv:test"
    dockerfile = f"FROM {base}\nUSER 0\nRUN rm -f /usr/bin/setpriv /bin/setpriv\nUSER 65534:65534\n"
    api = engine._api  # type: ignore[attr-defined]
    for _ in api.build(
        fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True, forcerm=True, decode=True, network_mode="none"
    ):
        pass
    if not engine.image_present(tag):
        pytest.skip("could not build the test image")
    yield tag
    api.remove_image(tag, force=True)


async def test_su_fallback_still_hides_the_wrapper(
    sandbox: Sandbox, image_without_setpriv: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(env_var("bash"), image_without_setpriv)
    probe = await sandbox.run(
        Spec(lang="bash", code="command -v setpriv || echo none; id -u; grep -E '^Cap(Prm|Eff)' /proc/self/status")
    )
    assert probe.stdout.decode().split("\n")[:2] == ["none", "65534"], probe.stdout
    assert probe.stdout.count(b"0000000000000000") == 2
    result = await sandbox.run(Spec(lang="bash", code=BASH_HUNT + "exit 5\n"))
    assert result.exit_code == 5 and result.stdout.endswith(b"visible-after-forgery\n")
    assert not result.files and result.usage.peak_memory > 1 << 20
    with pytest.raises(FSQuotaExceeded, match="/work"):
        await sandbox.run(Spec(lang="bash", code=BASH_FILL + BASH_HUNT, limits=Limits(fs_quota=4 << 20)))
