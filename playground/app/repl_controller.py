"""``ReplController``: one REPL session per language through the core's ``SessionManager``.

Sessions start on the first input (so an idle pane costs nothing), run
with the limits panel's values and ``auto_restart`` on. An eval's output
streams into the pane as the guest writes it (``Session.eval``'s
``on_output`` fills an ``OutputBuffer`` the pane drains); the status line
then says what the eval used of its limits. After a limit or an interrupt
the next input runs in a fresh interpreter and the pane says ``restarted``.
Each eval gets a keyboard (``InputStream``) the pane feeds while it runs,
so ``input()`` in the code reads what the user types (issue #17).
Where no backend offers sessions for a language, the pane shows the core's
``Unsupported`` / ``BackendUnavailable`` reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from playground.app.output_buffer import OutputBuffer
from playground.app.run_summary import limits_used, summarize_limit
from playground.app.tasks import BackgroundTasks
from playground.core import (
    InputStream,
    LimitExceeded,
    Limits,
    Sandbox,
    SandboxError,
    Session,
    SessionConfig,
    SessionKilled,
    SessionManager,
)


class ReplView(Protocol):
    """What the REPL needs from its pane (``ReplPane`` provides it)."""

    def switch_language(self, language: str) -> None: ...
    def set_status(self, text: str) -> None: ...
    def set_busy(self, busy: bool) -> None: ...
    def set_available(self, available: bool) -> None: ...
    def append(self, text: str, kind: str) -> None: ...
    def stream(self, buffer: OutputBuffer) -> None: ...
    def attach_keyboard(self, keyboard: InputStream, echo: OutputBuffer) -> None: ...


class ReplController:
    """Drives the REPL pane. GUI thread only; ``await shutdown()`` closes every session."""

    def __init__(self, sandbox: Sandbox, view: ReplView, limits: Callable[[], Limits],
                 tasks: BackgroundTasks, *, route: Callable[[str], Sandbox] | None = None) -> None:
        self.sandbox = sandbox
        self.view = view
        #: The sandbox the user's backend choice routes a language to (the window's Auto/Wasm/Docker).
        self._route = route or (lambda _language: sandbox)
        #: One session manager per routed sandbox; a language's session lives in the one it was started in.
        self._managers: dict[int, SessionManager] = {id(sandbox): SessionManager(sandbox, auto_restart=True)}
        self._session_managers: dict[str, SessionManager] = {}
        self.closed = False
        self._limits = limits
        self._tasks = tasks
        self._session_ids: dict[str, str] = {}
        self._unavailable: dict[str, str] = {}
        self._task: asyncio.Task[None] | None = None
        self._running: Session | None = None
        self._stopping = False
        self._backends: set[str] = set()

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    def show_language(self, language: str, cannot_run: str) -> None:
        """Switch the pane to ``language``; ``cannot_run`` explains a language with no backend."""
        self.view.switch_language(language or "(none)")
        status = self._route(language).session_status(language) if language else None
        why = self._unavailable.get(language)
        if status is None or status.backend is None:
            why = status.why_not if status is not None and status.why_not else cannot_run
        if why:
            self.view.set_status(f"No REPL: {why}")
            self.view.set_available(False)
            return
        assert status is not None
        started = language in self._session_ids
        self.view.set_status("session running" if started else
                             f"a session starts on your first input ({status.backend})")
        self.view.set_available(True)

    def submit(self, language: str, code: str) -> None:
        """Evaluate ``code`` in ``language``'s session (started now if needed). Ignored while busy."""
        if self.busy:
            return
        self.view.append(code, "code")
        self._task = self._tasks.spawn(self._eval(language, code))

    def interrupt(self) -> None:
        """Stop the running eval as Ctrl-C does (``Session.stop``: the rule every front end shares).

        Where the session can, the eval stops in place and the interpreter
        keeps its state; otherwise, or when it has not ended within the
        session's grace, it is cancelled, which kills that interpreter (the
        next input gets a fresh one). A second press cancels at once.
        """
        task = self._task
        if task is None or task.done():
            return
        if self._running is None or self._stopping:
            task.cancel()
            return
        self._stopping = True
        self._tasks.spawn(self._stop(self._running, task))

    @staticmethod
    async def _stop(session: Session, task: asyncio.Task[None]) -> None:
        await session.stop(task)  # the eval's own handler tells how it ended

    def reset(self, language: str) -> None:
        """Throw ``language``'s interpreter state away. Ignored while busy."""
        if not self.busy:
            self._task = self._tasks.spawn(self._reset(language))

    def backends_used(self) -> set[str]:
        """Every backend a session of this pane was started on (or is starting on), for the quit logic."""
        return set(self._backends)

    @property
    def sessions(self) -> SessionManager:
        """The session manager of the unrouted sandbox (Auto)."""
        return self._managers[id(self.sandbox)]

    def _manager_for(self, language: str) -> SessionManager:
        sandbox = self._route(language)
        manager = self._managers.get(id(sandbox))
        if manager is None:
            manager = self._managers[id(sandbox)] = SessionManager(sandbox, auto_restart=True)
        return manager

    async def shutdown(self) -> None:
        self.closed = True
        for manager in self._managers.values():
            await manager.shutdown()

    async def _session(self, language: str) -> Session | None:
        manager = self._manager_for(language)
        session_id = self._session_ids.get(language)
        started_in = self._session_managers.get(language)
        if session_id is not None and started_in is not manager and started_in is not None:
            # the user chose another backend for this language: its old interpreter goes, a new one starts there
            try:
                started_in.close(session_id)
            except SandboxError:  # it ended already
                pass
            self._session_ids.pop(language, None)
            session_id = None
            self.view.append("(the backend choice changed; starting a new session there)", "note")
        if session_id is not None:
            try:
                return manager.get(session_id)
            except SandboxError:
                self._session_ids.pop(language, None)
                self.view.append("(the previous session ended; starting a new one)", "note")
        try:
            limits = self._limits()
        except SandboxError as exc:  # InvalidLimits
            self.view.append(f"Not run: {exc}", "stderr")
            return None
        self.view.set_status("starting a session…")
        backend = self._route(language).session_status(language).backend
        if backend is not None:
            self._backends.add(backend)
        try:
            session = await manager.create(language, SessionConfig(auto_restart=True, limits=limits))
        except SandboxError as exc:  # Unsupported, BackendUnavailable, TooManySessions
            self._unavailable[language] = str(exc)
            self.view.append(f"No REPL for {language}: {exc}", "note")
            self.show_language(language, "")
            return None
        self._session_ids[language] = session.id
        self._session_managers[language] = manager
        self.view.set_status(f"session running on {session.backend_name}")
        return session

    async def _eval(self, language: str, code: str) -> None:
        view = self.view
        view.set_busy(True)
        try:
            session = await self._session(language)
            if session is None:
                return
            buffer = OutputBuffer()
            view.stream(buffer)
            keyboard = InputStream()  # closed by the pane when the eval ends (set_busy False)
            view.attach_keyboard(keyboard, buffer)
            self._running = session
            try:
                result = await session.eval(code, on_output=buffer.write, input=keyboard)
            except asyncio.CancelledError:
                if not self.closed:
                    buffer.note("interrupted: the interpreter was stopped; the next input starts a fresh one")
                return
            except LimitExceeded as exc:  # its partial output has streamed already
                if exc.result is not None and exc.result.truncated:
                    buffer.note("[output truncated]")
                note = summarize_limit(exc, session.limits).text
                buffer.note(note + " The next input runs in a fresh interpreter.")
                return
            except SessionKilled as exc:
                buffer.note(f"{exc}. Press Reset to start again.")
                return
            except SandboxError as exc:
                buffer.note(str(exc))
                return
            finally:
                keyboard.close()
                buffer.finish()
                self._running = None
            if result.interrupted:
                view.append("interrupted: the interpreter kept its state", "note")
            if result.truncated:
                view.append("[output truncated]", "note")
            if result.restarted:
                view.append("restarted: the previous interpreter died, so this ran in a fresh one", "note")
            if result.exit_code:
                view.append(f"exit {result.exit_code}", "note")
                hint = session.hint(result)  # a module this session's runtime lacks: where it is
                if hint:
                    view.append(f"hint: {hint}", "note")
            view.set_status(f"session running on {session.backend_name} · last eval: "
                            f"{limits_used(result, session.limits)}")
        finally:
            self._stopping = False
            if not self.closed:
                view.set_busy(False)

    async def _reset(self, language: str) -> None:
        session_id = self._session_ids.get(language)
        if session_id is None:
            self.view.append("(no session yet)", "note")
            return
        try:
            await self._session_managers.get(language, self.sessions).get(session_id).reset()
        except SandboxError as exc:
            self._session_ids.pop(language, None)
            self.view.append(f"reset failed: {exc}; a new session starts on your next input", "note")
            return
        self.view.append("session reset: a fresh interpreter, no state", "note")
