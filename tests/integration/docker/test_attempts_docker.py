"""Issue #15 on the Docker tier: what a guest tried, from its runtime's hook and from the host.

In-guest records (Python's audit hook, node's hooks) reach the host inside
the wrapper's trailer (``backends.docker.report``), so they are always
``Observer.GUEST`` and nothing the guest prints can add to them. Host
records: the process limit the pids cgroup counted, and every request the
egress proxy saw on a ``NetPolicy`` run. A benign program has none.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
import subprocess
import threading
from collections.abc import Iterator, Sequence

import pytest

from backends.docker import DockerBackend
from backends.docker.engine import Engine
from playground.core import DOCKER_ONLY, Attempt, AttemptKind, NetPolicy, Observer, Sandbox, Spec
from playground.net import direct_connector
from playground.net.guard import IPAddress
from playground.packs import bash, go, node, python

from .conftest import COMPILE_LIMITS, PACKS, TEST_LIMITS, require_image
from .test_verdicts import FORK_BOMB

NO_NET = "refused: no network in this sandbox"
RAN = "allowed: inside the container"
NOT_GIVEN = "refused: not given to the program"
OWN = "allowed: only the guest's own processes"
STOPPED = "stopped its in-guest report before the end (closed the channel, removed the hook or skipped the exit)"

Seen = set[tuple[AttemptKind, str, str, Observer]]


def seen(attempts: Sequence[Attempt]) -> Seen:
    return {(a.kind, a.target, a.verdict, a.observer) for a in attempts}


def guest(kind: AttemptKind, target: str, verdict: str) -> tuple[AttemptKind, str, str, Observer]:
    return (kind, target, verdict, Observer.GUEST)


def guest_words(attempts: Sequence[Attempt]) -> Seen:
    return {a for a in seen(attempts) if a[3] is Observer.GUEST}


def host_words(attempts: Sequence[Attempt]) -> Seen:
    return {a for a in seen(attempts) if a[3] is Observer.HOST}


async def attempts_of(sandbox: Sandbox, lang: str, code: str, *, status: int = 0) -> tuple[Attempt, ...]:
    result = await sandbox.run(Spec(lang=lang, code=code))
    assert result.exit_code == status, result.stderr
    return result.attempts


@pytest.fixture
def python_image(engine: Engine) -> None:
    require_image(engine, python.PACK)


@pytest.fixture
def node_image(engine: Engine) -> None:
    require_image(engine, node.PACK)


BENIGN = {
    "python": "import json, csv, re, collections, datetime, decimal, typing, asyncio, unittest, email, zoneinfo\n"
    "import os, tempfile, logging, urllib.parse, http.client, pathlib\n"
    "logging.getLogger('x').warning('careful')\n"
    "print(os.environ.get('HOME'), os.environ['PATH'] != '', tempfile.gettempdir())\n"
    "pathlib.Path('notes.txt').write_text('x'); print(open('notes.txt').read())\n",
    "node": "const os = require('os'), fs = require('fs'), path = require('path'), util = require('util');\n"
    "require('http'); require('child_process'); require('net'); require('dns');\n"
    "fs.writeFileSync('notes.txt', 'x');\n"
    "console.log(os.platform(), path.join('a', 'b'), util.inspect({ a: 1 }), process.env.HOME,\n"
    "  fs.readFileSync('notes.txt', 'utf8'));\n",
}


BENIGN["bash"] = 'x=$(( 6 * 7 )); echo "answer $x" > /out/a.txt; read -r line < /out/a.txt; echo "$line"\n'


@pytest.mark.parametrize("lang", sorted(BENIGN))
async def test_a_benign_program_tries_nothing(engine: Engine, sandbox: Sandbox, lang: str) -> None:
    require_image(engine, {"python": python.PACK, "node": node.PACK, "bash": bash.PACK}[lang])
    assert await attempts_of(sandbox, lang, BENIGN[lang]) == ()


async def test_a_benign_program_that_fails_tries_nothing(
    python_image: None, node_image: None, sandbox: Sandbox
) -> None:
    # The exit handlers that end the report run on an uncaught error too: no "stopped its report".
    assert await attempts_of(sandbox, "python", "raise SystemExit(3)", status=3) == ()
    assert await attempts_of(sandbox, "python", "1 / 0", status=1) == ()
    assert await attempts_of(sandbox, "node", "throw new Error('boom')", status=1) == ()
    assert await attempts_of(sandbox, "node", "process.exit(4)", status=4) == ()


async def test_python_reports_the_network_processes_signals_native_code_and_env(
    python_image: None, sandbox: Sandbox
) -> None:
    code = """
import os, socket, subprocess, urllib.request, ctypes
print(os.environ.get('AWS_SECRET_ACCESS_KEY'))
for _ in range(3):
    try:
        os.environ['GITHUB_TOKEN']
    except KeyError:
        pass
os.system('echo from-shell')
subprocess.run(['ls', '/'], capture_output=True)
try:
    urllib.request.urlopen('https://api.github.com/user', timeout=3)
except OSError as exc:
    print('url', type(exc).__name__)
try:
    socket.create_connection(('203.0.113.7', 4444), timeout=3)
except OSError as exc:
    print('connect', exc.errno)
with socket.socket() as s:  # the container's own loopback: inside the sandbox, not an attempt
    try:
        s.connect(('127.0.0.1', 9))
    except OSError:
        pass
os.kill(os.getpid(), 0)
ctypes.CDLL('libc.so.6')
"""
    attempts = await attempts_of(sandbox, "python", code)
    assert guest_words(attempts) == {
        guest(AttemptKind.ENV_LOOKUP, "AWS_SECRET_ACCESS_KEY", NOT_GIVEN),
        guest(AttemptKind.ENV_LOOKUP, "GITHUB_TOKEN", NOT_GIVEN),
        guest(AttemptKind.PROCESS_SPAWN, "echo from-shell", RAN),
        guest(AttemptKind.PROCESS_SPAWN, "ls /", RAN),
        guest(AttemptKind.DNS_LOOKUP, "api.github.com:443", NO_NET),
        guest(AttemptKind.NETWORK_CONNECT, "203.0.113.7:4444", NO_NET),
        guest(AttemptKind.SIGNAL, "signal 0 to process " + str(_pid(attempts)), OWN),
        guest(AttemptKind.NATIVE_CODE, "libc.so.6", RAN),
    }
    assert next(a.count for a in attempts if a.target == "GITHUB_TOKEN") == 3


def _pid(attempts: Sequence[Attempt]) -> str:
    signal = next(a.target for a in attempts if a.kind is AttemptKind.SIGNAL)
    return signal.rsplit(" ", 1)[1]


async def test_node_reports_the_network_processes_signals_and_env(node_image: None, sandbox: Sandbox) -> None:
    code = """
const cp = require('child_process');
cp.execSync('echo hi');
cp.spawnSync('ls', ['/']);
cp.exec('true', () => {});
const key = process.env.AWS_SECRET_ACCESS_KEY;
process.kill(process.pid, 0);
fetch('https://api.github.com/user').catch((e) => console.log('fetch', e.cause && e.cause.code));
require('net').connect(4444, '203.0.113.7').on('error', (e) => console.log('net', e.code));
require('dns').lookup('example.com', (e) => console.log('dns', e && e.code));
require('net').connect(9, '127.0.0.1').on('error', () => {});
"""
    attempts = await attempts_of(sandbox, "node", code)
    assert guest_words(attempts) == {
        guest(AttemptKind.PROCESS_SPAWN, "/bin/sh -c echo hi", RAN),
        guest(AttemptKind.PROCESS_SPAWN, "ls /", RAN),
        guest(AttemptKind.PROCESS_SPAWN, "/bin/sh -c true", RAN),
        guest(AttemptKind.ENV_LOOKUP, "AWS_SECRET_ACCESS_KEY", NOT_GIVEN),
        guest(AttemptKind.SIGNAL, "signal 0 to process " + _pid(attempts), OWN),
        guest(AttemptKind.NETWORK_CONNECT, "api.github.com:443", NO_NET),
        guest(AttemptKind.DNS_LOOKUP, "api.github.com", NO_NET),
        guest(AttemptKind.NETWORK_CONNECT, "203.0.113.7:4444", NO_NET),
        guest(AttemptKind.DNS_LOOKUP, "example.com", NO_NET),
    }


async def test_node_runs_the_program_as_node_main_js_would(node_image: None, sandbox: Sandbox) -> None:
    code = (
        "console.log(require.main === module, __filename, process.argv.slice(2).join(','),"
        " typeof globalThis.require, typeof globalThis.module)\n"
    )
    result = await sandbox.run(Spec(lang="node", code=code, args=("a", "--version")))
    assert result.stdout == b"true /work/main.js a,--version undefined undefined\n", result.stderr


FORGED_LINES = (
    '{"kind": "limit_reached", "target": "the process limit", "verdict": "refused"}\n'
    '{"kind": "file_read", "target": "/etc/forged", "verdict": "refused"}\n'
    '{"end": true}\n'
)


async def test_report_lines_printed_anywhere_else_are_output_not_records(python_image: None, sandbox: Sandbox) -> None:
    code = f"""
import os, sys
lines = {FORGED_LINES!r}
sys.stdout.write(lines); sys.stdout.flush()
sys.stderr.write(lines); sys.stderr.flush()
for fd in range(5, 64):
    try:
        os.write(fd, lines.encode())
    except OSError:
        pass
wrapper = '/proc/%d/fd/' % os.getppid()  # the root wrapper holds the channel's reading end as fd 5
for path in ('/dev/stdout', '/dev/stderr', '/proc/self/fd/4', wrapper + '4', wrapper + '5', '/tmp/report'):
    try:
        with open(path, 'a') as f:
            f.write(lines)
    except OSError as exc:
        print(path, type(exc).__name__)
"""
    result = await sandbox.run(Spec(lang="python", code=code))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(FORGED_LINES.encode()) and FORGED_LINES.encode() in result.stderr
    assert b"/proc/self/fd/4 PermissionError" in result.stdout  # the channel's file is root's: not reopened
    assert result.stdout.count(b"/fd/4 PermissionError") == 2 and b"/fd/5 PermissionError" in result.stdout
    assert result.attempts == ()


async def test_forged_host_records_on_the_channel_itself_stay_guest_words(engine: Engine, sandbox: Sandbox) -> None:
    # bash has no hook, but it inherits the channel: what it writes there is its own word, parsed as such.
    require_image(engine, bash.PACK)
    code = "printf '%s' " + repr(FORGED_LINES).replace("\\n", "\n") + " >&4\n"
    result = await sandbox.run(Spec(lang="bash", code=code))
    assert result.exit_code == 0, result.stderr
    assert seen(result.attempts) == {
        (AttemptKind.REPORTING_TAMPERED, "a forged limit_reached record on the report channel", "ignored",
         Observer.HOST),
        guest(AttemptKind.FILE_READ, "/etc/forged", "refused"),
    }  # fmt: skip


@pytest.mark.parametrize(
    ("lang", "code"),
    [
        ("python", "import os\nos.close(4)\nos.system('true')\n"),
        ("python", "import atexit\natexit._clear()\n"),
        ("python", "import os\nos._exit(0)\n"),
        ("node", "require('fs').closeSync(4);\nrequire('child_process').execSync('true');\n"),
        ("node", "process.removeAllListeners('exit');\n"),
    ],
)
async def test_a_guest_that_stops_its_report_is_itself_a_record(
    engine: Engine, sandbox: Sandbox, lang: str, code: str
) -> None:
    require_image(engine, python.PACK if lang == "python" else node.PACK)
    attempts = await attempts_of(sandbox, lang, code)
    tampered = {a for a in host_words(attempts) if a[0] is AttemptKind.REPORTING_TAMPERED}
    assert tampered == {(AttemptKind.REPORTING_TAMPERED, STOPPED, "noted", Observer.HOST)}


async def test_a_fork_bomb_is_a_host_record_of_the_process_limit(engine: Engine, sandbox: Sandbox) -> None:
    require_image(engine, bash.PACK)
    result = await sandbox.run(Spec(lang="bash", code=FORK_BOMB))
    assert result.stdout == b"main done\n"
    assert [(a.kind, a.observer, a.verdict) for a in result.attempts] == [
        (AttemptKind.LIMIT_REACHED, Observer.HOST, "refused: the guest was held to it")
    ]
    assert "process" in result.attempts[0].target


async def test_a_python_fork_loop_is_recorded_by_both_the_hook_and_the_host(
    python_image: None, sandbox: Sandbox
) -> None:
    code = """
import os, time
children = []
for _ in range(200):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.kill(pid, 9)
print('forked', len(children))
"""
    result = await sandbox.run(Spec(lang="python", code=code))
    assert result.exit_code == 0, result.stderr
    kinds = {(a.kind, a.observer) for a in result.attempts}
    assert (AttemptKind.LIMIT_REACHED, Observer.HOST) in kinds
    fork = next(a for a in result.attempts if a.target == "fork()")
    assert (fork.kind, fork.verdict, fork.observer) == (AttemptKind.PROCESS_SPAWN, RAN, Observer.GUEST)
    assert fork.count > 1


# -- NetPolicy: the egress proxy's log as host records ---------------------------------------------------


class Names:
    """``api.example.test`` is the loopback test server; nothing else resolves; the proxy dials loopback only."""

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        if host != "api.example.test":
            raise OSError(f"no such test name {host}")
        return ["127.0.0.1"]

    async def connect(self, address: IPAddress, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        assert address.is_loopback, f"the egress proxy dialed {address}"
        return await direct_connector(address, port)


@pytest.fixture
def net_sandbox(network_policy_supported: None, no_network_leaks: None) -> Iterator[Sandbox]:
    names = Names()
    backend = DockerBackend(packs=PACKS, net_resolver=names.resolve, net_connector=names.connect)
    sb = Sandbox(backends=[backend], packs=PACKS, policy=DOCKER_ONLY, default_limits=TEST_LIMITS)
    yield sb
    sb.close()


async def test_the_egress_log_becomes_host_records(python_image: None, net_sandbox: Sandbox) -> None:
    async def hello(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(hello, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        policy = NetPolicy(allow_hosts=("api.example.test",), allow_ports=(port,), allow_private=True)
        code = f"""
import urllib.request, urllib.error
for url in ('http://api.example.test:{port}/', 'http://evil.example.test:{port}/steal'):
    try:
        print(urllib.request.urlopen(url, timeout=10).status)
    except urllib.error.HTTPError as exc:
        print(exc.code)
"""
        result = await net_sandbox.run(Spec(lang="python", code=code, net=policy))
    finally:
        server.close()
        await server.wait_closed()
    assert result.stdout == b"200\n403\n", result.stderr
    host = host_words(result.attempts)
    assert (
        AttemptKind.NETWORK_CONNECT,
        f"api.example.test:{port}",
        "allowed by the network policy",
        Observer.HOST,
    ) in host
    (refused,) = [a for a in host if a[1] == f"evil.example.test:{port}"]
    assert (
        refused[0] is AttemptKind.NETWORK_CONNECT and refused[2].startswith("refused: ") and "allow_hosts" in refused[2]
    )
    assert len(host) == 2
    # The hook does not count the guest's own way out (the proxy) as an attempt.
    assert [a for a in result.attempts if a.observer is Observer.GUEST] == []


# -- net=None: the sinkhole in the guest's own namespace records, and nothing passes ----------------------


@pytest.fixture
def sinkhole(backend: DockerBackend) -> None:
    why = backend._network_record_reason()
    if why is not None:
        pytest.skip(f"no host records of network attempts here: {why}")


def _host_addresses(engine: Engine) -> list[str]:
    """The host's address on Docker's default bridge and its own outward address (no packet is sent)."""
    bridge = [n for n in engine.networks() if n.name == "bridge"]
    found = [str(ipaddress.ip_network(bridge[0].subnets[0]).network_address + 1)] if bridge else []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
            found.append(probe.getsockname()[0])
        except OSError:
            pass
    return found


def _host_routes() -> str:
    return subprocess.run(["ip", "route", "show", "default"], capture_output=True, text=True, check=True).stdout


SINKHOLE_PROBE = """
import errno, json, socket, struct, sys
targets, udp_port = json.loads(sys.argv[1])
for host, port in targets:
    try:
        socket.create_connection((host, port), timeout=5).recv(1)
        print(host, 'connected')
    except OSError as exc:
        print(host, errno.errorcode.get(exc.errno, exc.errno))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
        try:
            u.sendto(b'hello?', (host, udp_port))
        except OSError as exc:
            print(host, 'udp', errno.errorcode.get(exc.errno, exc.errno))
try:
    socket.getaddrinfo('api.github.com', 443)
except socket.gaierror:
    print('lookup failed')
query = struct.pack('!HHHHHH', 0x1234, 0x0100, 1, 0, 0, 0) + b'\\x05exfil\\x07example\\x04test\\x00\\x00\\x01\\x00\\x01'
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
    u.settimeout(5)
    try:
        u.sendto(query, ('203.0.113.9', 53))
        print('dns answer', u.recv(512))
    except OSError as exc:
        print('dns', errno.errorcode.get(exc.errno, exc.errno))
print(sorted(line.split(':')[0].strip() for line in open('/proc/net/dev').readlines()[2:]))
"""


async def test_without_a_network_the_host_records_connects_and_lookups_and_nothing_passes(
    python_image: None, sinkhole: None, engine: Engine, sandbox: Sandbox
) -> None:
    accepted: list[str] = []
    datagrams: list[bytes] = []

    async def on_tcp(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(str(writer.get_extra_info("peername")))
        writer.close()

    class Udp(asyncio.DatagramProtocol):
        def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
            datagrams.append(data)

    server = await asyncio.start_server(on_tcp, "0.0.0.0", 0)  # every host address: a real service to reach
    port = int(server.sockets[0].getsockname()[1])
    loop = asyncio.get_running_loop()
    udp, _ = await loop.create_datagram_endpoint(Udp, local_addr=("0.0.0.0", 0))
    udp_port = int(udp.get_extra_info("sockname")[1])
    hosts = _host_addresses(engine)
    targets = [[host, port] for host in hosts] + [["203.0.113.7", 4444]]
    routes = _host_routes()
    try:
        spec = Spec(lang="python", code=SINKHOLE_PROBE, args=(json.dumps([targets, udp_port]),))
        result = await sandbox.run(spec)
    finally:
        server.close()
        await server.wait_closed()
        udp.close()
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert lines == [line for host, _ in targets for line in (f"{host} ECONNREFUSED", f"{host} udp EPERM")] + [
        "lookup failed", "dns EPERM", "['lo']"
    ]  # fmt: skip
    assert accepted == [] and datagrams == []
    assert _host_routes() == routes  # the route through loopback was added in the guest's namespace only
    refused = "refused: no network in this sandbox"
    assert host_words(result.attempts) == {
        *((AttemptKind.NETWORK_CONNECT, f"{host}:{p}", refused, Observer.HOST) for host, p in targets),
        *((AttemptKind.NETWORK_CONNECT, f"{host}:{udp_port}/udp", refused, Observer.HOST) for host, _ in targets),
        (AttemptKind.DNS_LOOKUP, "api.github.com", refused, Observer.HOST),
        (AttemptKind.DNS_LOOKUP, "exfil.example.test", refused, Observer.HOST),
    }


async def test_a_guest_without_a_hook_is_still_seen_by_the_host(
    sinkhole: None, engine: Engine, sandbox: Sandbox
) -> None:
    require_image(engine, bash.PACK)
    code = "(exec 3<>/dev/tcp/198.51.100.20/22) 2>/dev/null && echo connected || echo refused\n"
    result = await sandbox.run(Spec(lang="bash", code=code))
    assert result.stdout == b"refused\n"
    assert seen(result.attempts) == {
        (AttemptKind.NETWORK_CONNECT, "198.51.100.20:22", "refused: no network in this sandbox", Observer.HOST)
    }


# -- spawned commands, as the host's kernel reports them ----------------------------------------------------


async def test_the_host_records_the_commands_a_program_runs(sinkhole: None, engine: Engine, sandbox: Sandbox) -> None:
    # Commands that live a little: one that ends within microseconds may be gone before it is read (a blind
    # spot: it is then recorded by name or as such, see spawnwatch).
    require_image(engine, bash.PACK)
    code = "sleep 0.3\nsh -c 'sleep 0.3 </etc/hostname'\nfor i in 1 2 3; do true; /bin/sleep 0.2; done\necho done\n"
    result = await sandbox.run(Spec(lang="bash", code=code))
    assert result.stdout == b"done\n", result.stderr
    assert seen(result.attempts) == {
        (AttemptKind.PROCESS_SPAWN, "sleep 0.3", RAN, Observer.HOST),
        (AttemptKind.PROCESS_SPAWN, "sh -c sleep 0.3 </etc/hostname", RAN, Observer.HOST),
        (AttemptKind.PROCESS_SPAWN, "/bin/sleep 0.2", RAN, Observer.HOST),
    }
    assert next(a.count for a in result.attempts if a.target == "/bin/sleep 0.2") == 3


async def test_python_spawns_are_seen_by_the_hook_and_by_the_host(
    python_image: None, sinkhole: None, sandbox: Sandbox
) -> None:
    code = "import subprocess\nsubprocess.run(['sleep', '0.3'])\n"
    attempts = await attempts_of(sandbox, "python", code)
    assert seen(attempts) == {
        (AttemptKind.PROCESS_SPAWN, "sleep 0.3", RAN, Observer.HOST),
        (AttemptKind.PROCESS_SPAWN, "sleep 0.3", RAN, Observer.GUEST),
    }


async def test_a_compile_step_is_not_the_programs_doing(sinkhole: None, engine: Engine, sandbox: Sandbox) -> None:
    require_image(engine, go.PACK)
    code = 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hi") }\n'
    result = await sandbox.run(Spec(lang="go", code=code, limits=COMPILE_LIMITS))
    assert result.stdout == b"hi\n", result.stderr
    assert result.attempts == ()


GUEST_DELETES_THE_ROUTE = """
import errno, socket, struct
# RTM_DELROUTE of the default route (the guest has no CAP_NET_ADMIN: the kernel refuses), then a connect.
with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE) as nl:
    body = struct.pack('=BBBBBBBBI', socket.AF_INET, 0, 0, 0, 254, 0, 0, 1, 0)
    nl.send(struct.pack('=IHHII', 16 + len(body), 25, 0x1 | 0x4, 1, 0) + body)
    answer = nl.recv(4096)
    print('delete route', errno.errorcode.get(-struct.unpack_from('=i', answer, 16)[0]))
try:
    socket.create_connection(('198.51.100.30', 80), timeout=5)
except OSError as exc:
    print('connect', errno.errorcode.get(exc.errno))
"""


async def test_the_guest_cannot_take_the_sinkhole_away(python_image: None, sinkhole: None, sandbox: Sandbox) -> None:
    result = await sandbox.run(Spec(lang="python", code=GUEST_DELETES_THE_ROUTE))
    assert result.stdout == b"delete route EPERM\nconnect ECONNREFUSED\n", result.stderr
    assert (AttemptKind.NETWORK_CONNECT, "198.51.100.30:80", NO_NET, Observer.HOST) in host_words(result.attempts)


async def test_cancelling_a_run_stops_its_recorders(python_image: None, sinkhole: None, sandbox: Sandbox) -> None:
    code = "import socket, time\nwhile True:\n    try:\n        socket.create_connection(('198.51.100.31', 80))\n"
    code += "    except OSError:\n        time.sleep(0.01)\n"
    task = asyncio.ensure_future(sandbox.run(Spec(lang="python", code=code)))
    await asyncio.sleep(2.0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [t.name for t in threading.enumerate() if t.name.startswith("docker-sinkhole")] == []
