"""``playground repl``: an interactive session in the terminal.

Prompts ``>>> `` and ``... `` (continuation while the input is incomplete,
see ``repl_input``); line editing and history through ``readline`` when
stdin is a terminal (history in ``$XDG_STATE_HOME/sandbox-playground/
repl_history``, else ``~/.local/state/...``); ``:reset``, ``:quit``,
``:help``; Ctrl-D quits.

Ctrl-C during an eval stops it by ``Session.stop``, the rule the window
and the MCP server share: where the runtime allows it the input fails as
it would in the language's own REPL (``KeyboardInterrupt`` in Python, an
"interrupted" error in JavaScript and Lua) and the interpreter keeps its
state. Otherwise, when an interrupted input has not ended within the
session's grace (code that catches or ignores the interrupt), or on a
second Ctrl-C, the eval is cancelled, which stops the interpreter: the
next input runs in a fresh one; the REPL says so, and the session is
created with ``auto_restart`` so it goes on. A limit (``--timeout`` per
input, ``--mem`` for the session, ...) does the same.

Threads: the main thread reads lines (readline needs it, and it is where
Ctrl-C arrives); the session lives on an asyncio loop in a helper thread.
Guest output is streamed to the terminal as it is produced. While an input
runs, the main thread passes the lines typed to it (``input()`` in the
code; Ctrl-D ends that input's stdin only); see ``terminal_input``.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

from playground.cli import exitcodes
from playground.cli.limit_flags import add_limit_flags, limits_from_args
from playground.cli.repl_input import is_complete
from playground.cli.run_cmd import POLICIES, UsageError, parse_env
from playground.cli.setup_cmd import prepare_language
from playground.cli.terminal_input import pump_while, terminal_fd
from playground.core import (
    InputStream,
    LimitExceeded,
    Policy,
    Result,
    Sandbox,
    SandboxError,
    Session,
    SessionConfig,
    Stopped,
    Stream,
)

SandboxFactory = Callable[[Policy], Sandbox]
T = TypeVar("T")
#: The terminal's descriptor, the running input's keyboard, and who hears what was echoed.
Keyboard = tuple[int, InputStream, Callable[[bytes], None]]

PROMPT = ">>> "
CONTINUE = "... "
HISTORY_LENGTH = 2000
HELP = """\
Type code and press Enter; an incomplete input continues on a '... ' line,
and a blank line sends whatever was typed. Commands:
  :reset   throw the interpreter's state (and its files) away
  :quit    leave (Ctrl-D does too)
  :help    this text
Ctrl-C stops a running input and the interpreter keeps its state. An
input that does not stop within a few seconds (or a second Ctrl-C) stops
the interpreter: it restarts with no state.
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "repl",
        help="interactive session (state persists between inputs)",
        description="Start an interactive session in the sandbox. Variables, imports and definitions persist "
        "between inputs; each input has its own time and output limits, memory and files are the session's.",
    )
    p.add_argument("lang_arg", nargs="?", metavar="LANG", help="language (same as --lang)")
    p.add_argument("-l", "--lang", help="language name or alias (default: python)")
    add_limit_flags(p, {"memory": " of the session", "wall_time": " per input", "cpu_time": " per input",
                        "max_output": " per input", "fs_quota": " of the session", "max_files": " of the session"})
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="environment variable for the interpreter (nothing is inherited)")  # fmt: skip
    p.add_argument("--policy", choices=sorted(POLICIES), default="prefer-wasm", help="which backends may run it")
    p.add_argument("--no-history", action="store_true", help="do not read or write the history file")
    p.set_defaults(handler=repl_command)


def history_path() -> Path:
    """``$XDG_STATE_HOME/sandbox-playground/repl_history`` (``~/.local/state`` when unset)."""
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state) if state else Path.home() / ".local" / "state"
    return base / "sandbox-playground" / "repl_history"


class EvalStopped(KeyboardInterrupt):
    """Ctrl-C cancelled a running eval (``how``: why it could not stop in place); its interpreter is gone."""

    def __init__(self, how: Stopped) -> None:
        super().__init__(how.value)
        self.how = how


class LoopThread:
    """An asyncio loop on a helper thread; ``call`` runs a coroutine there and waits.

    Ctrl-C while waiting cancels the coroutine, waits for it, and raises
    ``KeyboardInterrupt`` in the caller; with ``stop`` (``Session.stop``)
    the coroutine is stopped by that rule instead: its result is returned
    when it ended in place, ``EvalStopped`` raised when it was cancelled. A
    second Ctrl-C cancels at once.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="repl-loop", daemon=True)
        with interrupts_blocked():  # it, and every thread it starts, leaves Ctrl-C to the main thread
            self._thread.start()

    def call(
        self,
        coro: Coroutine[Any, Any, T],
        stop: Callable[[asyncio.Future[Any]], Coroutine[Any, Any, Stopped]] | None = None,
        keyboard: Keyboard | None = None,
    ) -> T:
        """Run ``coro``; ``keyboard`` (the terminal, an eval's input, who hears the echo) gets lines typed meanwhile."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return _wait(future, keyboard=keyboard)
        except KeyboardInterrupt:
            if stop is None:
                self._cancel(future)
                raise
        how = self._stop(future, stop)
        if how is Stopped.IN_PLACE:
            return future.result()
        raise EvalStopped(how)

    def _stop(
        self, future: concurrent.futures.Future[T], stop: Callable[[asyncio.Future[Any]], Coroutine[Any, Any, Stopped]]
    ) -> Stopped:
        async def stopping() -> Stopped:
            return await stop(asyncio.wrap_future(future))  # cancelling the wrapper cancels the eval's task

        stopped = asyncio.run_coroutine_threadsafe(stopping(), self.loop)
        try:
            return _wait(stopped)
        except KeyboardInterrupt:  # a second Ctrl-C: no more grace
            self._cancel(future)
            return Stopped.AFTER_GRACE

    @staticmethod
    def _cancel(future: concurrent.futures.Future[Any]) -> None:
        future.cancel()
        while True:
            try:
                concurrent.futures.wait([future])
                return
            except KeyboardInterrupt:
                continue

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self.loop.close()


@contextlib.contextmanager
def interrupts_blocked() -> Iterator[None]:
    """Threads started inside never take SIGINT (they inherit the mask); the main thread's is restored after.

    The kernel hands a process's SIGINT to any thread that does not block
    it. Python's handler then only sets a flag, and readline's wait for a
    key (``input()`` at the prompt) wakes only for a signal its own thread
    received: a Ctrl-C taken by a worker thread would go unanswered until
    the next key.
    """
    if not hasattr(signal, "pthread_sigmask"):  # no POSIX threads' masks (Windows): nothing to hand over
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _wait(
    future: concurrent.futures.Future[T],
    timeout: float | None = None,
    keyboard: Keyboard | None = None,
) -> T:
    """``future``'s result, waking often so Ctrl-C is seen; ``TimeoutError`` after ``timeout`` seconds.

    With ``keyboard``, lines typed meanwhile go to the running eval (``terminal_input.pump_while``).
    """
    deadline = None if timeout is None else time.monotonic() + timeout

    def running() -> bool:
        return not future.done() and (deadline is None or time.monotonic() < deadline)

    while True:
        if keyboard is not None:
            fd, stream, echoed = keyboard
            pump_while(fd, stream, running, echoed=echoed)
        try:
            return future.result(timeout=0.1)
        except concurrent.futures.TimeoutError:
            if deadline is not None and time.monotonic() >= deadline:
                raise
            continue


class Terminal:
    """Guest output and our messages, tracking whether the screen is at the start of a line."""

    def __init__(self, interactive: bool) -> None:
        self.interactive = interactive
        self._lock = threading.Lock()
        self._at_line_start = True

    def guest(self, stream: Stream, data: bytes) -> None:
        target = sys.stdout if stream is Stream.STDOUT else sys.stderr
        with self._lock:
            target.buffer.write(data)
            target.flush()
            self._at_line_start = data.endswith(b"\n")

    def typed(self, data: bytes) -> None:
        """The user typed ``data`` for the running input (the terminal echoed it)."""
        with self._lock:
            self._at_line_start = data.endswith(b"\n")

    def note(self, message: str) -> None:
        """One line of ours on stderr (never mixed into a guest line)."""
        with self._lock:
            sys.stdout.flush()
            prefix = "" if self._at_line_start else "\n"
            sys.stderr.write(f"{prefix}{message}\n")
            sys.stderr.flush()
            self._at_line_start = True

    def end_line(self) -> None:
        """Before a prompt: finish a guest line that had no newline."""
        with self._lock:
            if not self._at_line_start and self.interactive:
                sys.stdout.write("\n")
                sys.stdout.flush()
            self._at_line_start = True


@contextlib.contextmanager
def _history(enabled: bool) -> Iterator[None]:
    try:
        import readline
    except ImportError:  # not every platform has it; plain input() still works
        yield
        return
    path = history_path()
    if enabled:
        with contextlib.suppress(OSError):
            readline.read_history_file(path)
    readline.set_history_length(HISTORY_LENGTH)
    try:
        yield
    finally:
        if enabled:
            try:
                path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                readline.write_history_file(path)
                os.chmod(path, 0o600)
            except OSError as exc:
                print(f"playground: could not save the history to {path}: {exc.strerror}", file=sys.stderr)


class Repl:
    """The read-eval-print loop over one ``Session``. Main thread only."""

    def __init__(self, session: Session, runner: LoopThread, terminal: Terminal) -> None:
        self.session = session
        self.runner = runner
        self.terminal = terminal

    def read_input(self) -> str | None:
        """One complete input (several lines if it continues), or None at end of input."""
        lines: list[str] = []
        while True:
            prompt = (CONTINUE if lines else PROMPT) if self.terminal.interactive else ""
            try:
                line = input(prompt)
            except EOFError:
                if self.terminal.interactive:
                    sys.stdout.write("\n")
                return None if not lines else "\n".join(lines)
            except KeyboardInterrupt:
                sys.stdout.write("\nKeyboardInterrupt\n")
                lines = []
                continue
            if lines and not line.strip():
                return "\n".join(lines)
            lines.append(line)
            source = "\n".join(lines)
            if not lines[0].strip() or is_complete(self.session.editing.input_syntax, source):
                return source

    def loop(self) -> int:
        while True:
            try:
                self.terminal.end_line()
                source = self.read_input()
                if source is None:
                    return 0
                command = source.strip()
                if not command:
                    continue
                if command.startswith(":") and "\n" not in command:
                    if self.command(command):
                        return 0
                    continue
                self.eval(source)
            except KeyboardInterrupt:  # between prompt and eval: nothing was running
                self.terminal.note("KeyboardInterrupt")

    def command(self, command: str) -> bool:
        """Run a ``:command``; True means quit."""
        name = command.split(maxsplit=1)[0]
        if name in (":quit", ":q", ":exit"):
            return True
        if name == ":help":
            self.terminal.note(HELP.rstrip("\n"))
        elif name == ":reset":
            try:
                self.runner.call(self.session.reset())
                self.terminal.note("(the interpreter was reset: a fresh one with no state)")
            except KeyboardInterrupt:
                self.terminal.note("(interrupted)")
            except SandboxError as exc:
                self.terminal.note(f"playground: could not reset: {exc}")
        else:
            self.terminal.note(f"unknown command {name}; try :help")
        return False

    def eval(self, source: str) -> None:
        fd = terminal_fd() if self.terminal.interactive else None
        keyboard = InputStream() if fd is not None else None  # what input() reads while this input runs
        try:
            result: Result = self.runner.call(
                self.session.eval(source, on_output=self.terminal.guest, input=keyboard),
                self.session.stop,
                None if fd is None or keyboard is None else (fd, keyboard, self.terminal.typed),
            )
        except EvalStopped as stopped:
            why = "it did not stop when interrupted" if stopped.how is Stopped.AFTER_GRACE else (
                "it cannot be interrupted in place")  # fmt: skip
            self.terminal.note(
                f"KeyboardInterrupt: the input was stopped; the interpreter restarts with no state ({why})"
            )
            return
        except LimitExceeded as exc:
            self.terminal.note(
                f"playground: stopped, {exc} [limit: {exc.limit}]; the interpreter restarts with no state"
            )
            return
        except SandboxError as exc:
            self.terminal.note(f"playground: {exc}")
            return
        if result.restarted:
            self.terminal.note("(a fresh interpreter ran this input)")
        if result.interrupted:
            self.terminal.note("KeyboardInterrupt (the interpreter keeps its state)")
        hint = self.session.hint(result) if result.exit_code != 0 else None
        if hint:
            self.terminal.note(f"playground: hint: {hint}")


def repl_command(args: argparse.Namespace, make_sandbox: SandboxFactory) -> int:
    if args.lang and args.lang_arg and args.lang != args.lang_arg:
        print("playground repl: give the language once", file=sys.stderr)
        return exitcodes.USAGE
    lang = args.lang or args.lang_arg or "python"
    try:
        env = parse_env(args.env)
    except UsageError as exc:
        print(f"playground repl: {exc}", file=sys.stderr)
        return exitcodes.USAGE
    limits = limits_from_args(args)
    interactive = sys.stdin.isatty()
    terminal = Terminal(interactive)
    sandbox = make_sandbox(POLICIES[args.policy])
    runner = LoopThread()
    session: Session | None = None
    try:
        if not prepare_language(sandbox, lang):
            return exitcodes.SANDBOX_ERROR
        try:
            session = runner.call(sandbox.new_session(lang, SessionConfig(limits=limits, env=env, auto_restart=True)))
        except KeyboardInterrupt:
            return exitcodes.INTERRUPTED
        except SandboxError as exc:
            print(f"playground: {exc}", file=sys.stderr)
            return exitcodes.SANDBOX_ERROR
        if interactive:
            pack = sandbox.pack(lang)
            print(f"{pack.description or pack.name} on {session.backend_name}; "
                  ":help for help, Ctrl-D or :quit to leave")  # fmt: skip
        with _history(interactive and not args.no_history):
            return Repl(session, runner, terminal).loop()
    finally:
        if session is not None:
            session.close()
        runner.close()
        sandbox.close()
