"""``playground serve``: run a guest web server behind the authenticated proxy until Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from playground.cli import exitcodes
from playground.cli.limit_flags import add_limit_flags, duration_arg, limits_from_args
from playground.cli.pool_flag import add_pool_flag
from playground.cli.run_cmd import (
    POLICIES,
    UsageError,
    guest_name,
    parse_env,
    read_inputs,
    read_work,
)
from playground.cli.setup_cmd import prepare_language
from playground.core import (
    UNLIMITED,
    AuthMode,
    HTTPReady,
    Policy,
    PortMap,
    Sandbox,
    SandboxError,
    ServeOpts,
    Spec,
    Stream,
    TCPReady,
)

SandboxFactory = Callable[[Policy], Sandbox]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve",
        help="serve a guest web app on 127.0.0.1 behind a token",
        description="Run FILE as a web service in the sandbox and expose it through an authenticated, "
        "rate-limited proxy on 127.0.0.1. Prints the URL and the bearer token, streams the guest's "
        "logs, and stops on Ctrl-C or when the TTL expires.",
    )
    p.add_argument("file", help="the server program")
    p.add_argument("-l", "--lang", help="language (default: from the file extension)")
    p.add_argument("--port", type=int, action="append", default=[], metavar="GUEST_PORT",
                   help="guest port to expose (repeatable; default 8080)")
    p.add_argument("--host-port", type=int, default=0, help="host port for the first guest port (default: any free)")
    p.add_argument("--bind", default="127.0.0.1", help="host address to listen on (default 127.0.0.1 only)")
    p.add_argument("--ttl", type=duration_arg, default=3600.0, help="stop after this long (default 1h; 'unlimited')")
    p.add_argument("--token", default="", help="bearer token to require (default: a random 256-bit one)")
    p.add_argument("--no-auth", action="store_true", help="no token: anyone who reaches the port may use it")
    p.add_argument("--ready", default="tcp", metavar="tcp|PATH",
                   help="readiness probe: tcp, or an HTTP path like /health")
    add_limit_flags(p, {"memory": " of the guest", "wall_time": " per request (handler bridge)"})
    p.add_argument("--in", dest="inputs", action="append", default=[], metavar="[NAME=]PATH",
                   help="copy a host file read-only into /in")
    p.add_argument("--work", action="append", default=[], metavar="[NAME=]PATH",
                   help="copy a host file, or a directory's files, into /work next to the program (writable)")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="guest environment variable")
    p.add_argument("--policy", choices=sorted(POLICIES), default="prefer-wasm")
    add_pool_flag(p)
    p.set_defaults(handler=serve_command)


def _opts(args: argparse.Namespace) -> ServeOpts:
    guest_ports = args.port or [8080]
    ports = tuple(PortMap(guest=port, host=args.host_port if i == 0 else 0) for i, port in enumerate(guest_ports))
    ready = TCPReady() if args.ready == "tcp" else HTTPReady(path=args.ready)
    return ServeOpts(
        ports=ports,
        bind=args.bind,
        ttl=None if args.ttl is UNLIMITED else args.ttl,
        auth=AuthMode.NONE if args.no_auth else AuthMode.BEARER,
        token="" if args.no_auth else args.token,
        ready=ready,
    )


def serve_command(args: argparse.Namespace, make_sandbox: SandboxFactory) -> int:
    sandbox = make_sandbox(POLICIES[args.policy])
    try:
        path = Path(args.file)
        try:
            code = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            print(f"playground serve: cannot read {path}: {exc}", file=sys.stderr)
            return exitcodes.USAGE
        try:
            lang = args.lang or sandbox.pack_for_file(path.name).name
            spec = Spec(lang=lang, code=code, env=parse_env(args.env), files=read_inputs(args.inputs),
                        work_files=read_work(args.work), main_file=guest_name(path),
                        limits=limits_from_args(args))
            opts = _opts(args)
        except UsageError as exc:
            print(f"playground serve: {exc}", file=sys.stderr)
            return exitcodes.USAGE
        except SandboxError as exc:
            print(f"playground: {exc}", file=sys.stderr)
            return exitcodes.SANDBOX_ERROR
        if not prepare_language(sandbox, spec.lang):
            return exitcodes.SANDBOX_ERROR
        try:
            return asyncio.run(_serve(sandbox, spec, opts))
        except SandboxError as exc:
            print(f"playground: {exc}", file=sys.stderr)
            return exitcodes.SANDBOX_ERROR
        except KeyboardInterrupt:
            return exitcodes.INTERRUPTED
    finally:
        sandbox.close()


async def _serve(sandbox: Sandbox, spec: Spec, opts: ServeOpts) -> int:
    service = await sandbox.serve(spec, opts)
    interrupted = asyncio.Event()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, interrupted.set)
        loop.add_signal_handler(signal.SIGTERM, interrupted.set)

    def show(stream: Stream, data: bytes) -> None:
        target = sys.stdout if stream is Stream.STDOUT else sys.stderr
        loop.call_soon_threadsafe(_write, target, data)

    sys.stdout.write(service.logs())
    service.subscribe_logs(show)
    print(f"serving {spec.lang} on {service.url}", file=sys.stderr)
    for port_map in opts.ports[1:]:
        print(f"  guest port {port_map.guest}: {service.url_for(port_map.guest)}", file=sys.stderr)
    if service.token:
        print(f"token: {service.token}", file=sys.stderr)
        print(f"try:   curl -H 'Authorization: Bearer {service.token}' {service.url}", file=sys.stderr)
    if opts.ttl is not None:
        print(f"stops after {opts.ttl:g}s; Ctrl-C stops now", file=sys.stderr)
    waiter = asyncio.ensure_future(interrupted.wait())
    ended = asyncio.ensure_future(service.done.wait())
    await asyncio.wait([waiter, ended], return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    ended.cancel()
    await service.stop()
    if interrupted.is_set():
        print("stopped", file=sys.stderr)
        return exitcodes.INTERRUPTED
    if service.err is not None:
        print(f"playground: service ended: {service.err}", file=sys.stderr)
        return exitcodes.SANDBOX_ERROR
    print("service ended (TTL)", file=sys.stderr)
    return 0


def _write(target: object, data: bytes) -> None:
    buffer = getattr(target, "buffer", None)
    if buffer is not None:
        buffer.write(data)
    target.flush()  # type: ignore[attr-defined]
