"""``playground run``: run one program in the sandbox, stream its output, exit with its code.

stdin: piped or redirected, it is read whole before the run (``Spec.stdin``);
a terminal is passed through as the program's keyboard while it runs
(line by line, Ctrl-D for end of input, Ctrl-C stops the run; see
``terminal_input``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path

from playground.cli import exitcodes, hostfiles
from playground.cli.limit_flags import add_limit_flags, checked_limits, limits_from_args
from playground.cli.outdir import write_out_files
from playground.cli.pool_flag import add_pool_flag
from playground.cli.setup_cmd import prepare_language
from playground.cli.terminal_input import terminal_keyboard
from playground.core import (
    DOCKER_ONLY,
    LIMIT_FIELDS,
    PREFER_WASM,
    WASM_ONLY,
    LimitExceeded,
    Pack,
    Policy,
    Result,
    Sandbox,
    SandboxError,
    Spec,
    Stream,
    clean_key,
    default_program_file,
    find_locations,
    program_file,
    reached_note,
)
from playground.core.attempts import report_json, summarize
from playground.core.guest_text import escape, is_clean

SandboxFactory = Callable[[Policy], Sandbox]

POLICIES = {"prefer-wasm": PREFER_WASM, "wasm-only": WASM_ONLY, "docker-only": DOCKER_ONLY}
#: Piped stdin is read whole before the run; more than this is refused.
MAX_STDIN = 64 << 20


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "run",
        help="run a program in the sandbox",
        description="Run FILE (or -e CODE) in the sandbox. The exit code is the program's; "
        "when a limit stops it, 121 memory, 122 output, 123 filesystem quota, 124 time; "
        "125 when it ran to its end but the process limit refused to start a process for it; "
        "120 when it could not run at all.",
    )
    p.add_argument("file", nargs="?", help="program to run (its extension picks the language)")
    p.add_argument("args", nargs="*", help="arguments for the program; put them after -- if they start with -")
    p.add_argument("-e", "--eval", dest="code", metavar="CODE", help="run CODE instead of a file")
    p.add_argument("-l", "--lang", help="language (name, alias); required with -e")
    add_limit_flags(p, dict.fromkeys(LIMIT_FIELDS, ""))
    p.add_argument("--in", dest="inputs", action="append", default=[], metavar="[NAME=]PATH",
                   help="copy a host file read-only into /in (repeatable)")
    p.add_argument("--work", action="append", default=[], metavar="[NAME=]PATH",
                   help="copy a host file, or a directory's files, into /work next to the program, where it runs "
                        "(writable; links inside a directory are skipped; repeatable)")
    p.add_argument("--out", type=Path, metavar="DIR", help="write the files the program left in /out to DIR")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="environment variable for the program (nothing is inherited)")
    p.add_argument("--policy", choices=sorted(POLICIES), default="prefer-wasm", help="which backends may run it")
    p.add_argument("--report", choices=("summary", "json", "none"), default="summary",
                   help="what the program tried beyond the sandbox (files outside it, the network, processes...): "
                        "one line on stderr (summary, the default), the full report as JSON on stderr, or nothing")
    p.add_argument("--pip", action="append", default=[], metavar="NAME[==VERSION]",
                   help="add a pure-Python package from PyPI to the run, with its dependencies (repeatable; "
                        "fetched and checked on this machine first, read-only for the program, which has no network)")
    add_pool_flag(p)
    p.set_defaults(handler=run_command)


class UsageError(Exception):
    pass


def build_spec(args: argparse.Namespace, sandbox: Sandbox) -> Spec:
    if args.code is not None:
        if args.file is not None:
            args.args = [args.file, *args.args]
        if not args.lang:
            raise UsageError("-e needs --lang")
        code: str | bytes = args.code
        lang = args.lang
        main_file = None
    elif args.file is not None:
        path = Path(args.file)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror}") from None
        pack = sandbox.pack(args.lang) if args.lang else sandbox.pack_for_file(path.name)
        lang = pack.name
        main_file = program_file(pack, path.name)
        if _takes_module_bytes(pack):
            code = raw
        else:
            try:
                code = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise UsageError(f"{path} is not UTF-8 text") from None
    else:
        raise UsageError("give a FILE to run, or -e CODE with --lang")
    args_list = [*args.args, *getattr(args, "guest_args", [])]
    return Spec(
        lang=lang,
        code=code,
        args=args_list,
        env=parse_env(args.env),
        stdin=_read_stdin(),
        files=read_inputs(args.inputs),
        work_files=read_work(args.work),
        main_file=main_file,
        packages=args.pip,
        limits=checked_limits(limits_from_args(args)),
    )


def _takes_module_bytes(pack: Pack) -> bool:
    """The ``wasm`` pack runs the user's module itself: its file is bytes, not text."""
    return pack.wasm is not None and pack.wasm.module is None


def parse_env(pairs: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--env wants KEY=VALUE, got {pair!r}")
        env[key] = value
    return env


def read_inputs(items: list[str]) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for item in items:
        name, sep, path_text = item.partition("=")
        path = Path(path_text if sep else item)
        key = name if sep else path.name
        clean_key(key)
        try:
            files[key] = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"--in {item}: {exc.strerror}") from None
    return files


def read_work(items: list[str]) -> dict[str, bytes]:
    """``--work`` items as ``Spec.work_files``; what was skipped inside a directory is said on stderr."""
    try:
        tree = hostfiles.read_tree(items, "--work")
    except hostfiles.HostFileError as exc:
        raise UsageError(str(exc)) from None
    for entry in tree.skipped:
        print(f"playground: --work: skipped {entry}", file=sys.stderr)
    return tree.files


def guest_name(path: Path) -> str | None:
    """The program file's name in /work: the user's own, so tracebacks name it (None: the pack's, when unsafe)."""
    try:
        clean_key(path.name)
    except SandboxError:
        return None
    return path.name


def _read_stdin() -> bytes | None:
    stream = sys.stdin
    if stream is None or stream.closed:
        return None
    try:
        if stream.isatty():
            return None
        data = stream.buffer.read(MAX_STDIN + 1)
    except (OSError, ValueError):
        return None
    if len(data) > MAX_STDIN:
        raise UsageError(f"piped stdin is larger than {MAX_STDIN >> 20} MiB")
    return data


def _stream_output(stream: Stream, data: bytes) -> None:
    target = sys.stdout if stream is Stream.STDOUT else sys.stderr
    target.buffer.write(data)
    target.flush()


def _progress(message: str, fraction: float) -> None:
    suffix = f" {fraction:.0%}" if fraction >= 0 else ""
    print(f"playground: {message}{suffix}", file=sys.stderr, flush=True)


def run_command(args: argparse.Namespace, make_sandbox: SandboxFactory) -> int:
    sandbox = make_sandbox(POLICIES[args.policy])
    try:
        try:
            spec = build_spec(args, sandbox)
        except UsageError as exc:
            print(f"playground run: {exc}", file=sys.stderr)
            return exitcodes.USAGE
        except SandboxError as exc:
            print(f"playground: {exc}", file=sys.stderr)
            return exitcodes.SANDBOX_ERROR
        if not prepare_language(sandbox, spec.lang, spec):
            return exitcodes.SANDBOX_ERROR
        try:
            keyboard = terminal_keyboard() if spec.stdin is None else None  # a terminal: pass the keyboard on
            result = asyncio.run(sandbox.run(spec, on_output=_stream_output, on_progress=_progress, input=keyboard))
        except LimitExceeded as exc:
            if exc.result is not None:
                _save_out(args.out, exc.result)
            print(f"playground: stopped, {exc} [limit: {exc.limit}]", file=sys.stderr)
            if exc.result is not None:
                _tell_attempts(args.report, exc.result)
            return exitcodes.for_limit(exc)
        except SandboxError as exc:
            print(f"playground: {exc}", file=sys.stderr)
            return exitcodes.SANDBOX_ERROR
        except KeyboardInterrupt:
            print("playground: interrupted", file=sys.stderr)
            return exitcodes.INTERRUPTED
        _save_out(args.out, result)
        _tell_attempts(args.report, result)
        hint = sandbox.hint(spec, result) if result.exit_code != 0 else None
        if hint:
            print(f"playground: hint: {hint}", file=sys.stderr)
        if result.exit_code != 0 and args.file is not None:
            _point_at_error(args.file, spec, result, sandbox)
        if (reached := exitcodes.for_reached(result.limits_reached)) is not None:
            limits = sandbox.resolve_limits(spec.limits, sandbox.pack_for(spec))
            for name in result.limits_reached:
                print(f"playground: {reached_note(name, limits)} [limit: {name}]; the program exited with "
                      f"{result.exit_code}", file=sys.stderr)
            return reached
        return result.exit_code & 0xFF if result.exit_code >= 0 else exitcodes.SANDBOX_ERROR
    finally:
        sandbox.close()


def _tell_attempts(report: str, result: Result) -> None:
    """What the program tried beyond the sandbox, on stderr (``--report``); nothing when it tried nothing.

    Targets are safe to print as they are (``core.attempts`` escapes every
    character a terminal would act on).
    """
    if report == "json":
        document = report_json(result.attempts, dropped=result.attempts_dropped)
        print(json.dumps(document, indent=2, ensure_ascii=False), file=sys.stderr)
    elif report == "summary" and result.attempts:
        print(f"playground: {summarize(result.attempts, dropped=result.attempts_dropped)}", file=sys.stderr)


def _point_at_error(file: str, spec: Spec, result: Result, sandbox: Sandbox) -> None:
    """Name the first place in the user's file that the error output points at, as ``FILE:LINE[:COL]``.

    The guest's messages name the program as it is in the sandbox
    (``/work/hello.py``); this line names it as the user typed it, in the
    form terminals and editors turn into a link.
    """
    pack = sandbox.pack(spec.lang)
    program = spec.main_file or default_program_file(pack, result.backend)
    found = find_locations(result.stderr.decode("utf-8", "replace"), pack.error_locations, program)
    if found:
        where = f"{file}:{found[0].line}" + (f":{found[0].column}" if found[0].column else "")
        print(f"playground: error at {where}", file=sys.stderr)


#: How many /out names the note about unsaved files lists.
OUT_NAMES_SHOWN = 5


def _save_out(target: Path | None, result: Result) -> None:
    """Write ``/out`` to ``target``; a name that is not UTF-8 is written byte for byte (and said so).

    Guest names are core text (``playground.core.guest_text``): ``os.open``
    encodes them back to the guest's exact bytes, which Linux accepts as a
    name. A filesystem that refuses such a name refuses only that file;
    the others are still written. Messages show names escaped, never raw.
    Without ``target`` the files are not dropped silently: stderr says how
    many there are and how to get them.
    """
    if not result.files:
        return
    if target is None:
        names = sorted(result.files)
        shown = ", ".join(escape(name) for name in names[:OUT_NAMES_SHOWN])
        more = f", and {len(names) - OUT_NAMES_SHOWN} more" if len(names) > OUT_NAMES_SHOWN else ""
        print(f"playground: the program left {len(names)} file(s) in /out ({shown}{more}); "
              "add --out DIR to save them", file=sys.stderr)
        return
    written, refused = write_out_files(target, result.files)
    print(f"playground: wrote {len(written)} file(s) from /out to {target}", file=sys.stderr)
    for name in written:
        if not is_clean(name):
            print(f"playground: /out/{escape(name)} is not a UTF-8 name; written with the guest's exact bytes",
                  file=sys.stderr)
    for reason in refused:
        print(f"playground: refused /out file {escape(reason)}", file=sys.stderr)
