"""The MCP tools: ``execute_code``, ``eval_session``, ``close_session``, ``list_languages``.

Each tool is a typed function: its docstring is the description the model
reads, its parameters (with ``Field`` descriptions) are the input schema,
and its ``RunOutput``-style return model is the output schema.

Outcomes versus errors:

* The program ran (any exit code) or a limit stopped it: a *successful*
  result; ``status``/``limit_exceeded`` say which limit tripped and the
  partial output is included.
* The request cannot be run (unknown or disabled language, bad input, too
  much code, a limit above the user's ceiling, a dead session): a tool
  error (``isError``) whose message says what to change. Messages come from
  the sandbox's own errors or from here; tracebacks stay in the server log.

Arguments are checked strictly before a tool body runs (see
:mod:`playground.mcp.inputs`): wrong types, unknown fields, ``null``, NaN
and non-positive limits are tool errors naming the argument, never
coerced or ignored.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import itertools
import logging
from collections.abc import Callable, Collection
from typing import Annotated, Literal

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import Field

from playground.core import (
    LIMIT_INFO,
    LimitExceeded,
    Limits,
    Pack,
    ProgressCallback,
    ResolvedLimits,
    Result,
    SandboxError,
    Session,
    SessionConfig,
    SessionNotFound,
    Spec,
    TooManySessions,
    UnknownLanguage,
    Unsupported,
    WasmVariant,
    clean_key,
    format_duration,
    format_size,
    program_file,
)
from playground.mcp.config import ServerConfig
from playground.mcp.inputs import Duration, Size
from playground.mcp.results import (
    CloseOutput,
    LanguageInfo,
    LanguagesOutput,
    RunOutput,
    SessionOutput,
    VariantInfo,
    applied_limits,
    error_locations,
    run_fields,
    tool_result,
)
from playground.mcp.state import ServerState

log = logging.getLogger(__name__)

def _limit_description(name: str, lead: str, tail: str = "") -> str:
    """An argument's description from the core's ``LIMIT_INFO``: its grammar and default are written there once."""
    info = LIMIT_INFO[name]
    return (
        f"{lead}: {info.agent_grammar}. Omit for the server default ({info.default()} unless the language needs "
        f"more or the server allows less). {tail}Must not exceed the server's maximum (see list_languages)."
    )


TimeoutArg = Annotated[
    Duration,
    Field(description=_limit_description("wall_time", "Wall-time limit for this run (CPU time gets the same)")),
]
MemoryArg = Annotated[Size, Field(description=_limit_description("memory", "Memory limit"))]
MaxOutputArg = Annotated[
    Size,
    Field(
        description=_limit_description(
            "max_output", "Cap on stdout plus stderr together", "The program is stopped when it writes more. "
        ),
    ),
]
LanguageArg = Annotated[
    str,
    Field(description="Language name or alias, e.g. 'python', 'py', 'javascript', 'js', 'typescript', 'lua'. "
          "Call list_languages to see what this server can run."),
]


def _state(ctx: Context[ServerState]) -> ServerState:
    return ctx.request_context.lifespan_context


async def execute_code(
    *,
    language: LanguageArg,
    code: Annotated[str, Field(description="The program's source code. For the 'wasm' language: WAT text, or a "
                               "binary module base64-encoded (with code_encoding='base64').")],
    ctx: Context[ServerState],
    code_encoding: Annotated[Literal["text", "base64"], Field(
        description="'text' (default): code is source text. 'base64': code is base64 of raw bytes "
        "(a binary WebAssembly module for the 'wasm' language).")] = "text",
    stdin: Annotated[str | None, Field(description="Text fed to the program's standard input.")] = None,
    files: Annotated[dict[str, str] | None, Field(
        description="Text input files: relative path -> UTF-8 content. They appear read-only under /in "
        "(e.g. {'data/input.csv': 'a,b\\n1,2\\n'} -> /in/data/input.csv). Paths must be relative, "
        "without '..', '.', empty segments, backslashes or ':'.")] = None,
    files_base64: Annotated[dict[str, str] | None, Field(
        description="Binary input files: relative path -> base64-encoded bytes, also placed read-only "
        "under /in. Same path rules as 'files'; a path may appear in only one of the two.")] = None,
    work_files: Annotated[dict[str, str] | None, Field(
        description="Text files placed next to the program in /work, its working directory, where it may "
        "change them: other modules it imports, a data file it reads with a relative path "
        "(e.g. {'helper.py': 'X = 1\n'} -> /work/helper.py, importable). Same path rules as 'files'; "
        "the program itself is /work/main.<ext>, which a work file may not replace.")] = None,
    work_files_base64: Annotated[dict[str, str] | None, Field(
        description="Binary files for /work: relative path -> base64-encoded bytes. Same rules as "
        "'work_files'; a path may appear in only one of the two.")] = None,
    args: Annotated[list[str] | None, Field(description="Command-line arguments for the program.")] = None,
    filename: Annotated[str | None, Field(
        description="The program's file name, e.g. 'solver.py' or 'Hello.java' (default main.<ext>, Main.java "
        "for Java): it is stored as /work/<filename>, so tracebacks and compiler errors name it, and "
        "'error_locations' refer to it. A plain name with one of the language's extensions.")] = None,
    timeout: TimeoutArg = None,
    memory: MemoryArg = None,
    max_output: MaxOutputArg = None,
    packages: Annotated[list[str] | None, Field(
        description="Python only: pure-Python packages from PyPI to add to the run, with their dependencies, "
        "e.g. ['python-slugify', 'humanize==4.9.0'] (a name, optionally ==VERSION or >=VERSION). They are "
        "fetched and hash-checked outside the sandbox before the run (not counted in its timeout) and are "
        "read-only on the program's sys.path; the program still has no network. A package with native code "
        "is refused with a message saying so (numpy, pandas, scipy, matplotlib, scikit-learn and more are "
        "already there when the program imports them).")] = None,
) -> Annotated[CallToolResult, RunOutput]:
    """Run a program once in an isolated sandbox and return its output.

    The sandbox has no network, no access to the host's files or environment,
    and a fresh in-memory filesystem each run: input files are read-only under
    /in, the working directory is /work (the program and any work files;
    relative paths start there), and files the program writes under /out are
    returned (small text files inline, others as embedded resources).
    Nothing persists between calls; use eval_session for state that persists.
    Python on the WebAssembly tier (list_languages says where each language
    runs) has one thread and no processes: asyncio works, threading,
    multiprocessing and subprocess fail (the result's 'hint' says so).

    A non-zero exit code is a normal result. When a limit stops the program
    (timeout, memory, output size, filesystem quota) the result is still
    returned, with status 'limit_exceeded', the limit's name in
    'limit_exceeded', and the output captured up to that point. A program
    that ran to its end but was refused a process by the process limit
    (a fork bomb, contained) is 'completed' with 'max_procs' in
    'limits_reached' and a 'message' that says so.
    """
    state = _state(ctx)
    pack = _resolve_language(state, language)
    spec = _build_spec(config=state.config, pack=pack, code=code, code_encoding=code_encoding, stdin=stdin,
                       files=files, files_base64=files_base64, work_files=work_files,
                       work_files_base64=work_files_base64, args=args, limits=Limits(), packages=packages,
                       filename=filename)
    # over the defaults of the runtime the program runs on (the scientific Python's memory)
    limits = _request_limits(state, state.sandbox.pack_for(spec), timeout, memory, max_output)
    spec = dataclasses.replace(spec, limits=limits.as_limits())
    error: LimitExceeded | None = None
    async with state.gate:
        progress = _progress_reporter(ctx)
        try:  # a runtime used for the first time (the scientific one) and packages are set up here, outside
            # the time limit
            await asyncio.to_thread(state.sandbox.prepare, pack.name, _preparing(progress), spec=spec)
        except SandboxError as exc:
            raise ToolError(str(exc)) from None
        try:
            result = await state.sandbox.run(spec, on_progress=progress)
        except LimitExceeded as exc:
            error = exc
            result = exc.result or Result()
        except SandboxError as exc:
            raise ToolError(str(exc)) from None
    fields, blocks = run_fields(
        result, language=pack.name, limits=limits, error=error,
        inline_text_bytes=state.config.inline_text_bytes, max_embed_bytes=state.config.max_embed_bytes,
    )
    if error is None and result.exit_code != 0:  # ModuleNotFoundError: which runtime has it, or add it as a package
        fields["hint"] = state.sandbox.hint(spec, result)
    fields["error_locations"] = error_locations(pack, spec, result)
    return tool_result(RunOutput.model_validate(fields), blocks)


async def eval_session(
    *,
    code: Annotated[str, Field(description="Code to evaluate in the session's live interpreter. Variables, "
                               "functions and imports from earlier evaluations are still defined; the value "
                               "of a final expression is printed, like a REPL.")],
    ctx: Context[ServerState],
    session_id: Annotated[str | None, Field(
        description="The id returned by an earlier eval_session call. Omit it to start a new session; "
        "then 'language' is required.", min_length=1)] = None,
    language: Annotated[str | None, Field(
        description="Language of a new session (name or alias). Only used when session_id is omitted.",
        min_length=1)] = None,
    timeout: TimeoutArg = None,
    memory: MemoryArg = None,
    max_output: MaxOutputArg = None,
) -> Annotated[CallToolResult, SessionOutput]:
    """Evaluate code in a persistent REPL session (state survives between calls).

    Start a session by passing 'language' without 'session_id'; the result
    carries the new 'session_id'. Pass that id on later calls to keep
    working in the same interpreter. The limits (timeout per evaluation,
    memory and max_output) can only be set when the session is created.
    Sessions are closed after some idle minutes; close them with
    close_session when done.

    If an evaluation hits a limit, the result says which (status
    'limit_exceeded', partial output) and the session is gone
    ('session_alive': false): start a new one. A call that is cancelled
    stops its evaluation like Ctrl-C and the session normally keeps its
    state. Languages without session support return an error; use
    execute_code for them.
    """
    state = _state(ctx)
    _check_code_size(state.config, len(code.encode("utf-8")))
    if session_id:
        if timeout is not None or memory is not None or max_output is not None:
            raise ToolError("timeout, memory and max_output can only be set when a session is created "
                            "(call eval_session without session_id)")
        session = _get_session(state, session_id)
        if language is not None and _resolve_language(state, language).name != session.lang:
            raise ToolError(f"session {session_id} runs {session.lang}, not {_short(language)}")
    else:
        if not language:
            raise ToolError("give 'language' to start a new session, or 'session_id' to continue one")
        pack = _resolve_language(state, language)
        limits = _request_limits(state, pack, timeout, memory, max_output)
        asked = {"wall_time", "cpu_time"} if timeout is not None else set()
        asked |= {name for name, value in (("memory", memory), ("max_output", max_output)) if value is not None}
        # The language's runtime, and the one its first input moves the session to (the scientific Python's for
        # `import numpy`), are set up here, outside any limit, as execute_code does: a session cannot start or
        # move on a runtime that is not there.
        progress = _preparing(_progress_reporter(ctx))
        first = Spec(lang=pack.name, code=code)
        try:
            await asyncio.to_thread(state.sandbox.prepare, pack.name, progress)
            if state.sandbox.pack_for(first) is not pack:  # the first input moves it to a variant: that one too
                await asyncio.to_thread(state.sandbox.prepare, pack.name, progress, spec=first)
        except SandboxError as exc:
            raise ToolError(str(exc)) from None
        session = await _create_session(state, pack, _session_limits(state, pack, limits, asked))

    error: LimitExceeded | None = None
    async with state.gate:
        evaluation = asyncio.ensure_future(session.eval(code))
        try:
            result = await asyncio.shield(evaluation)
        except asyncio.CancelledError:
            await _stop_in_place(session, evaluation)
            raise
        except LimitExceeded as exc:
            error = exc
            result = exc.result or Result()
        except SandboxError as exc:  # SessionKilled, SessionClosed, ...
            _forget(state, session.id)
            raise ToolError(f"{exc}; start a new session") from None
    alive = session.alive
    if not alive:
        _forget(state, session.id)
    fields, blocks = run_fields(
        result, language=session.lang, limits=session.limits, error=error,
        inline_text_bytes=state.config.inline_text_bytes, max_embed_bytes=state.config.max_embed_bytes,
    )
    fields |= {"session_id": session.id, "session_alive": alive, "restarted": result.restarted}
    if error is None and result.exit_code != 0:  # ModuleNotFoundError: which runtime has it (a new session's)
        fields["hint"] = session.hint(result)
    return tool_result(SessionOutput.model_validate(fields), blocks)


async def close_session(
    session_id: Annotated[str, Field(description="The id of the session to close.")],
    ctx: Context[ServerState],
) -> CloseOutput:
    """Close a REPL session and free its interpreter. Closing an unknown or already closed id is an error."""
    state = _state(ctx)
    try:
        state.sessions.close(session_id)
    except SessionNotFound:
        raise ToolError(f"no open session {_short(session_id)} (closed, expired, or never created)") from None
    return CloseOutput(session_id=session_id, closed=True)


async def list_languages(ctx: Context[ServerState]) -> LanguagesOutput:
    """List the languages this server can run, with aliases, versions, availability and session support.

    Also reports the highest limits (timeout, memory, max_output) an agent
    may request and the defaults used when none are given.
    """
    state = _state(ctx)
    await state.sandbox.learn_availability()  # a daemon not asked yet is asked now, off the event loop
    infos = [_language_info(state, name) for name in state.sandbox.languages() if name in state.allowed]
    config = state.config
    return LanguagesOutput(
        languages=infos,
        max_timeout=format_duration(config.max_timeout),
        max_memory=format_size(config.max_memory),
        max_output=format_size(config.max_output),
        default_limits=applied_limits(config.defaults),
    )


# -- helpers -----------------------------------------------------------------


def _short(text: str, limit: int = 60) -> str:
    """A caller-given string made safe to quote in a message: repr'd and cut."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _progress_reporter(ctx: Context[ServerState]) -> ProgressCallback:
    """Forward slow one-time work (a first compile) as MCP progress, so clients see the call is alive.

    Callable from any thread; a no-op for clients that did not ask for progress.
    """
    loop = asyncio.get_running_loop()
    steps = itertools.count(1)

    def report(message: str, fraction: float) -> None:
        log.info("%s (%s)", message, "?" if fraction < 0 else f"{fraction:.0%}")
        step = next(steps)
        coro = ctx.report_progress(step, None, message)
        try:
            asyncio.run_coroutine_threadsafe(coro, loop)
        except RuntimeError:  # the loop is closing
            coro.close()

    return report


def _preparing(progress: ProgressCallback) -> Callable[[str], None]:
    """``progress`` for ``Sandbox.prepare``'s lines: set-up has no known fraction."""
    return lambda line: progress(line, -1.0)


def _resolve_language(state: ServerState, language: str) -> Pack:
    enabled = ", ".join(sorted(state.allowed)) or "none"
    try:
        pack = state.sandbox.pack(language)
    except UnknownLanguage:
        raise ToolError(f"unknown language {_short(language)}; this server runs: {enabled}") from None
    if pack.name not in state.allowed:
        raise ToolError(f"language {pack.name} is not enabled on this server; enabled: {enabled}")
    return pack


def _request_limits(state: ServerState, pack: Pack, timeout: str | float | None, memory: str | int | None,
                    max_output: str | int | None) -> ResolvedLimits:
    """The call's limits over the language's defaults (a compiler's memory), held to the server's ceilings."""
    try:
        base = state.sandbox.default_limits_for(pack)
        return state.config.request_limits(timeout=timeout, memory=memory, max_output=max_output, base=base)
    except SandboxError as exc:  # InvalidLimits
        raise ToolError(str(exc)) from None


def _check_code_size(config: ServerConfig, size: int) -> None:
    if size > config.max_code_bytes:
        cap = format_size(config.max_code_bytes)
        raise ToolError(f"code is {format_size(size)}; this server accepts at most {cap}")


def _build_spec(
    *,
    config: ServerConfig,
    pack: Pack,
    code: str,
    code_encoding: str,
    stdin: str | None,
    files: dict[str, str] | None,
    files_base64: dict[str, str] | None,
    args: list[str] | None,
    limits: Limits,
    work_files: dict[str, str] | None = None,
    work_files_base64: dict[str, str] | None = None,
    packages: list[str] | None = None,
    filename: str | None = None,
) -> Spec:
    source: str | bytes = code
    if code_encoding == "base64":
        _check_code_size(config, len(code) * 3 // 4)
        source = _b64("code", code)
    else:
        _check_code_size(config, len(code.encode("utf-8")))
    stdin_bytes = stdin.encode("utf-8") if stdin is not None else None
    if stdin_bytes is not None and len(stdin_bytes) > config.max_stdin_bytes:
        raise ToolError(f"stdin is {format_size(len(stdin_bytes))}; at most "
                        f"{format_size(config.max_stdin_bytes)} is accepted")
    arg_list = list(args or [])
    if len(arg_list) > config.max_args or sum(len(a.encode("utf-8")) for a in arg_list) > 64 * 1024:
        raise ToolError(f"too many or too long args: at most {config.max_args} arguments and 64K in total")
    if any("\x00" in a for a in arg_list):
        raise ToolError("an argument contains a NUL character")
    inputs, work = _input_files(config, files or {}, files_base64 or {}, work_files or {}, work_files_base64 or {})
    try:
        return Spec(lang=pack.name, code=source, args=arg_list, stdin=stdin_bytes, files=inputs, work_files=work,
                    limits=limits, packages=packages or (), main_file=_program_file(pack, filename))
    except SandboxError as exc:  # InvalidSpec
        raise ToolError(str(exc)) from None


def _program_file(pack: Pack, filename: str | None) -> str | None:
    """``filename`` as the program's name in /work, or None for the pack's; a name it cannot take is a tool error."""
    if filename is None:
        return None
    if program_file(pack, filename) != filename:
        shown = ", ".join(pack.extensions) or "any"
        raise ToolError(f"filename {_short(filename)}: give a plain file name (no directory); {pack.name} "
                        f"needs one of its extensions ({shown}) when it compiles or transforms the program")
    return filename


def _input_files(
    config: ServerConfig, text: dict[str, str], binary: dict[str, str], work_text: dict[str, str],
    work_binary: dict[str, str],
) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """(/in files, /work files); the server's file count and byte ceilings cover both together."""
    if len(text) + len(binary) + len(work_text) + len(work_binary) > config.max_files:
        raise ToolError(f"too many input files: at most {config.max_files}")
    for first, second, a, b in (("files", "files_base64", text, binary),
                                ("work_files", "work_files_base64", work_text, work_binary)):
        both = set(a) & set(b)
        if both:
            raise ToolError(f"{_short(sorted(both)[0])} is given in both '{first}' and '{second}'")
    inputs: dict[str, bytes] = {}
    work: dict[str, bytes] = {}
    total = 0
    for source, items, out in (("files", text, inputs), ("files_base64", binary, inputs),
                               ("work_files", work_text, work), ("work_files_base64", work_binary, work)):
        encoded = source.endswith("_base64")
        for name, content in items.items():
            try:
                clean_key(name)
            except SandboxError as exc:  # InvalidSpec
                raise ToolError(f"{source}: bad file name: {exc}") from None
            total += len(content) * 3 // 4 if encoded else len(content.encode("utf-8"))
            if total > config.max_files_bytes:
                raise ToolError(f"input files exceed {format_size(config.max_files_bytes)} in total")
            out[name] = _b64(f"{source}[{name!r}]", content) if encoded else content.encode()
    return inputs, work


def _b64(what: str, text: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ToolError(f"{what} is not valid base64") from None


def _get_session(state: ServerState, session_id: str) -> Session:
    try:
        return state.sessions.get(session_id)
    except SandboxError:  # SessionNotFound, ManagerClosed
        raise ToolError(f"no open session {_short(session_id)} (closed, expired, killed by a limit, or never "
                        "created); start a new one by calling eval_session with 'language'") from None


def _session_limits(state: ServerState, pack: Pack, limits: ResolvedLimits, asked: Collection[str]) -> Limits:
    """What a new session is given of ``limits``: what the agent ``asked`` for, or a ceiling must hold.

    A field left out stays a default, so a session that moves to another
    runtime of its language (the scientific Python) takes that runtime's
    (its memory) as a one-shot run would. Where some runtime's default is
    above the server's ceiling, the field is set: to the highest default
    the ceiling allows, which then holds for every runtime of the session.
    """
    base = state.sandbox.default_limits_for(pack)
    runtimes = [base, *state.sandbox.variant_defaults(pack).values()]
    held = [state.config.clipped(defaults) for defaults in runtimes]
    chosen: dict[str, object] = {}
    for field in dataclasses.fields(ResolvedLimits):
        name = field.name
        mine = getattr(limits, name)
        if name in asked or mine != getattr(base, name):  # the agent's, or the language's default held
            chosen[name] = mine
        elif any(getattr(c, name) != getattr(d, name) for c, d in zip(held, runtimes, strict=True)):
            chosen[name] = max(getattr(c, name) for c in held)  # all finite: a ceiling clipped one of them
    return Limits(**chosen)  # type: ignore[arg-type]


async def _create_session(state: ServerState, pack: Pack, limits: Limits) -> Session:
    config = SessionConfig(limits=limits, idle_timeout=state.config.session_idle_timeout)
    try:
        return await state.sessions.create(pack.name, config)
    except Unsupported as exc:
        raise ToolError(f"{exc}; use execute_code instead") from None
    except TooManySessions:
        raise ToolError(f"at most {state.config.max_sessions} sessions may be open at once; close one with "
                        "close_session first") from None
    except LimitExceeded as exc:
        raise ToolError(f"the {pack.name} interpreter could not start within its limits: {exc}") from None
    except SandboxError as exc:
        raise ToolError(str(exc)) from None


async def _stop_in_place(session: Session, evaluation: asyncio.Future[Result]) -> None:
    """The client cancelled the call: stop the eval like Ctrl-C (``Session.stop``), so the session keeps its state.

    Shielded from the cancellation that brought us here (anyio cancels on
    every await inside a cancelled scope), so the guest is always stopped
    before the handler ends.
    """
    with anyio.CancelScope(shield=True):
        await session.stop(evaluation)
    if not evaluation.cancelled():
        evaluation.exception()  # retrieved: the caller is gone, whatever it was


def _forget(state: ServerState, session_id: str) -> None:
    try:
        state.sessions.close(session_id)
    except SessionNotFound:
        pass


def _language_info(state: ServerState, name: str) -> LanguageInfo:
    status = state.sandbox.status(name)
    pack = status.pack
    reason = status.why_not or None
    session_status = state.sandbox.session_status(name)
    return LanguageInfo(
        name=pack.name,
        aliases=list(pack.aliases),
        extensions=list(pack.extensions),
        version=pack.version,
        available=status.backend is not None,
        backend=status.backend,
        reason=reason,
        sessions=session_status.backend is not None,
        sessions_reason=session_status.why_not or None,
        cold_start_ms=_cold_start_ms(pack, status.backend),
        variants=[_variant_info(state, name, variant) for variant in pack.wasm.variants] if pack.wasm else [],
    )


def _variant_info(state: ServerState, lang: str, variant: WasmVariant) -> VariantInfo:
    view = state.sandbox.variant_status(lang)[variant.name].pack
    missing = state.sandbox.missing(view)
    return VariantInfo(
        name=variant.name, version=variant.version, provides=list(variant.provides), ready=not missing,
        missing=", ".join(missing) or None,
    )


def _cold_start_ms(pack: Pack, backend: str | None) -> float | None:
    spec = pack.wasm if backend == "wasm" else pack.docker if backend == "docker" else None
    return round(spec.typical_start * 1000, 1) if spec is not None and spec.typical_start else None
