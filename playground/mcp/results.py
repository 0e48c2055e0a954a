"""What the tools return: the structured output models and their ``CallToolResult`` rendering.

Every run result is returned both ways the protocol allows: as
``structured_content`` validated against the tool's output schema, and as a
JSON text block of the same data for clients that only show text. Files the
guest left in ``/out`` come back inline (small UTF-8 text, in the ``files``
list), as image content (PNG, JPEG, GIF and WebP pictures, found by their
bytes: a chart the program saved or showed, so a client can display it),
as embedded resources (other binary or large files), all within one total
budget, or listed as omitted with the reason. Nothing here touches the host
filesystem.

Guest-chosen text (file names, stdout, stderr, anything quoted in a
message) may be any bytes. It reaches the result in the lossless escaped
form of :mod:`playground.core.guest_text`: valid UTF-8 as is, otherwise
``\\xNN`` per undecodable byte with backslashes doubled, and a
``*_escaped: true`` field next to the value says so (the field is left out
when false, so ordinary results look as they always did). The last step,
:func:`tool_result`, escapes any string that still could not be sent, so a
guest's name can never turn a result into a failed call.
"""

from __future__ import annotations

import base64
import json
import logging
import mimetypes
from collections.abc import Mapping
from typing import Literal
from urllib.parse import quote

from mcp_types import (
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)
from pydantic import BaseModel, Field

from playground.core import (
    LimitExceeded,
    Pack,
    ResolvedLimits,
    Result,
    Spec,
    default_program_file,
    find_locations,
    format_duration,
    format_size,
    reached_note,
    summarize,
)
from playground.core.guest_text import escape, from_guest, is_clean

log = logging.getLogger(__name__)

LimitName = Literal["wall_time", "memory", "max_output", "fs_quota"]

#: URI prefix of embedded /out files.
OUT_URI = "playground://out/"


class UsageInfo(BaseModel):
    """Resources the run consumed."""

    wall_seconds: float = Field(description="Wall-clock seconds the run took.")
    peak_memory_bytes: int = Field(description="Peak guest memory in bytes (0 when the backend cannot measure it).")
    fs_bytes: int = Field(description="Bytes used in the sandbox's virtual filesystem.")
    fs_files: int = Field(description="Files and directories in the sandbox's virtual filesystem.")


class AppliedLimits(BaseModel):
    """The limits this run actually ran under (defaults plus what was asked for)."""

    timeout: str = Field(description="Wall-time (and CPU-time) limit, e.g. '10s'.")
    memory: str = Field(description="Memory limit, e.g. '128M'.")
    max_output: str = Field(description="Cap on stdout plus stderr, e.g. '1M'.")


def _shown_only_when_true(value: bool) -> bool:
    return not value


def _escaped_flag(what: str) -> bool:
    """``*_escaped`` field: present (and true) only when ``what`` is in the escaped form."""
    return Field(
        default=False,
        exclude_if=_shown_only_when_true,
        description=f"Present and true when {what} was not valid UTF-8 and is shown escaped: each byte that is "
        "not UTF-8 as \\xNN, and every backslash doubled (so the exact bytes can be rebuilt).",
    )


class OutFile(BaseModel):
    """A file the program left under /out."""

    name: str = Field(description="Path relative to /out (escaped when 'name_escaped' is true).")
    name_escaped: bool = _escaped_flag("the file name")
    size: int = Field(description="Size in bytes.")
    delivery: Literal["inline", "image", "embedded", "omitted"] = Field(
        description="'inline': the content is in 'text'; 'image': a picture, returned as an image content "
        "block of this result (in the order of the files); 'embedded': the content is an embedded resource "
        "(uri) in this result's content blocks; 'omitted': too large to return (see 'note')."
    )
    text: str | None = Field(default=None, description="The file's UTF-8 text when delivery is 'inline'.")
    uri: str | None = Field(default=None, description="URI of the embedded resource when delivery is 'embedded'.")
    mime_type: str = Field(description="Guessed MIME type.")
    note: str | None = Field(default=None, description="Why the file was omitted, if it was.")


class AttemptInfo(BaseModel):
    """One thing the program tried beyond its sandbox, and what became of it."""

    kind: Literal[
        "file_read", "file_write", "file_delete", "file_list", "network_connect", "dns_lookup", "process_spawn",
        "env_lookup", "signal", "native_code", "limit_reached", "reporting_tampered",
    ] = Field(description="What was attempted.")
    target: str = Field(description="The path, host:port, command line or name it was aimed at ('~' is the "
                        "program's home directory). Guest text, with unprintable characters escaped.")
    verdict: str = Field(description="How it was refused, e.g. 'refused: not in the sandbox'.")
    observer: Literal["host", "guest"] = Field(
        description="'host': seen by the sandbox itself (cannot be forged or hidden by the program); 'guest': "
        "reported by a hook inside the program's runtime (the program's word, shown for what it is worth)."
    )
    count: int = Field(description="How many times it was attempted.")
    first_at: float = Field(description="Seconds after the program started, of the first attempt.")


class ErrorLocation(BaseModel):
    """A place in the program that the output names."""

    file: str = Field(description="The program's file name.")
    line: int = Field(description="1-based line.")
    column: int | None = Field(default=None, description="1-based column, when the message gives one.")


class RunOutput(BaseModel):
    """The outcome of running code. A non-zero exit code or a tripped limit is still a result, not an error."""

    status: Literal["completed", "limit_exceeded"] = Field(
        description="'completed': the program ran to its end (any exit code). 'limit_exceeded': the sandbox "
        "stopped it because a limit tripped; 'limit_exceeded' names which, output is partial."
    )
    language: str = Field(description="Canonical language name that ran.")
    backend: str = Field(description="Isolation backend that ran it (e.g. 'wasm').")
    exit_code: int | None = Field(description="The program's exit code; null when a limit stopped it.")
    stdout: str = Field(description="Captured standard output (escaped when 'stdout_escaped' is true).")
    stdout_escaped: bool = _escaped_flag("stdout")
    stderr: str = Field(description="Captured standard error (escaped when 'stderr_escaped' is true).")
    stderr_escaped: bool = _escaped_flag("stderr")
    truncated: bool = Field(description="True when stdout/stderr were cut at the max_output limit.")
    limit_exceeded: LimitName | None = Field(
        default=None,
        description="Which limit stopped the program: 'wall_time' (timeout), 'memory', 'max_output' or "
        "'fs_quota' (virtual filesystem full); null when none did.",
    )
    message: str | None = Field(
        default=None,
        description="What the sandbox said about the limit that stopped the program or that it reached, if any.",
    )
    limits_reached: list[str] = Field(
        default_factory=list,
        description="Limits the program ran into without being stopped by them, so status stays 'completed' and "
        "exit_code is its own: 'max_procs' when the process limit refused to start a process (a fork bomb, "
        "contained). Its output is complete, but whatever it could not start did not run; 'message' says so.",
    )
    error_locations: list[ErrorLocation] = Field(
        default_factory=list,
        description="Places in the program that its output names (a traceback's frames, a compiler's errors), "
        "in the order they appear: the first is usually the one to fix. 'file' is the program's name in "
        "/work ('filename', or main.<ext>).",
    )
    attempts: list[AttemptInfo] = Field(
        default_factory=list,
        description="What the program tried beyond its sandbox (files outside it, the network, processes, "
        "environment variables it was not given, limits), each refused; empty when it tried nothing.",
    )
    attempts_summary: str | None = Field(
        default=None,
        description="'attempts' in one line for a person, e.g. 'tried: read ~/.ssh/id_rsa, connect "
        "api.github.com:443 - all refused'; null when it tried nothing.",
    )
    attempts_dropped: int = Field(
        default=0, description="Distinct attempts left out of 'attempts' because the list is capped."
    )
    usage: UsageInfo
    limits: AppliedLimits
    files: list[OutFile] = Field(default_factory=list, description="Files the program left under /out.")
    hint: str | None = Field(
        default=None,
        description="When the program failed on a module it could not import (ModuleNotFoundError): how to get "
        "it (the runtime that has it, or the package to add with 'packages').",
    )


class SessionOutput(RunOutput):
    """The outcome of one evaluation in a REPL session."""

    session_id: str = Field(description="Pass this id to eval_session again to keep using the same interpreter.")
    session_alive: bool = Field(
        description="False when this evaluation killed the session (a limit tripped): its state is gone and "
        "the id is no longer valid; start a new session."
    )
    restarted: bool = Field(description="True when the interpreter was restarted before this evaluation.")


def _no_variants(value: list[VariantInfo]) -> bool:
    return not value


class VariantInfo(BaseModel):
    """A heavier runtime of a language that a program gets by importing what it provides."""

    name: str = Field(description="The variant's name, e.g. 'scientific'.")
    version: str = Field(description="Its runtime version and what it bundles.")
    provides: list[str] = Field(description="Top-level modules it has; importing one picks this runtime.")
    ready: bool = Field(description="True when it is downloaded and compiled here; otherwise the first program "
                        "that needs it sets it up first (a one-time download and compile, reported as progress).")
    missing: str | None = Field(description="What it still needs here, when it is not ready.")


class LanguageInfo(BaseModel):
    """One language and whether it can run on this server now."""

    name: str = Field(description="Canonical name; use it (or an alias) as 'language'.")
    aliases: list[str] = Field(description="Other accepted names.")
    extensions: list[str] = Field(description="File extensions of the language.")
    version: str = Field(description="Runtime version, if known.")
    available: bool = Field(description="True when execute_code can run it now.")
    backend: str | None = Field(description="Backend that would run it (null when unavailable).")
    reason: str | None = Field(description="Why it is unavailable (per backend), when it is.")
    sessions: bool = Field(description="True when eval_session can keep a live interpreter for it.")
    sessions_reason: str | None = Field(description="Why sessions are unavailable, when they are.")
    cold_start_ms: float | None = Field(
        description="Typical time of a hello-world run on the chosen backend (measured on a 2-core machine with "
        "warm caches; compile included for compiled languages); null when not measured or unavailable."
    )
    variants: list[VariantInfo] = Field(
        default_factory=list,
        exclude_if=_no_variants,
        description="Heavier runtimes of this language, picked per program by its imports (Python's "
        "'scientific': numpy, pandas, scipy, scikit-learn, statsmodels, matplotlib).",
    )


class LanguagesOutput(BaseModel):
    """The language matrix of this server and the ceilings the user set."""

    languages: list[LanguageInfo]
    max_timeout: str = Field(description="Highest timeout an agent may request.")
    max_memory: str = Field(description="Highest memory limit an agent may request.")
    max_output: str = Field(description="Highest max_output an agent may request.")
    default_limits: AppliedLimits = Field(description="Limits used when a call asks for none.")


class CloseOutput(BaseModel):
    """Result of closing a session."""

    session_id: str
    closed: bool = Field(description="True when the session was open and is now closed.")


def applied_limits(limits: ResolvedLimits) -> AppliedLimits:
    """Render the limits a call ran under in human units."""
    return AppliedLimits(
        timeout=format_duration(limits.wall_time), memory=format_size(limits.memory),
        max_output=format_size(limits.max_output),
    )  # fmt: skip


def run_fields(
    result: Result,
    *,
    language: str,
    limits: ResolvedLimits,
    error: LimitExceeded | None,
    inline_text_bytes: int,
    max_embed_bytes: int,
) -> tuple[dict[str, object], list[ContentBlock]]:
    """The ``RunOutput`` fields for ``result`` and the embedded-resource blocks for its /out files."""
    files, blocks = _out_files(result.files, inline_text_bytes, max_embed_bytes)
    limit: str | None = error.limit if error is not None and error.limit else None
    reached = list(result.limits_reached) if error is None else []
    message = escape(str(error)) if error is not None else None
    if reached:
        notes = "; ".join(reached_note(name, limits) for name in reached)
        message = f"{notes}; the program ran on and exited with {result.exit_code}"
    stdout, stderr = from_guest(result.stdout), from_guest(result.stderr)
    fields: dict[str, object] = {
        "status": "limit_exceeded" if error is not None else "completed",
        "language": language,
        "backend": result.backend,
        "exit_code": None if error is not None else result.exit_code,
        "stdout": escape(stdout),
        "stdout_escaped": not is_clean(stdout),
        "stderr": escape(stderr),
        "stderr_escaped": not is_clean(stderr),
        "truncated": result.truncated,
        "limit_exceeded": limit,
        "message": message,
        "limits_reached": reached,
        "attempts": [AttemptInfo.model_validate(a.to_json()) for a in result.attempts],
        "attempts_summary": summarize(result.attempts, dropped=result.attempts_dropped) or None,
        "attempts_dropped": result.attempts_dropped,
        "usage": UsageInfo(
            wall_seconds=round(result.usage.wall, 6),
            peak_memory_bytes=result.usage.peak_memory,
            fs_bytes=result.usage.fs_bytes,
            fs_files=result.usage.fs_files,
        ),
        "limits": applied_limits(limits),
        "files": files,
    }
    return fields, blocks


def error_locations(pack: Pack, spec: Spec, result: Result) -> list[ErrorLocation]:
    """The places in the program that ``result``'s output names (``core.locations``), stderr first, at most 20."""
    program = spec.main_file or default_program_file(pack, result.backend)
    found = []
    for stream in (result.stderr, result.stdout):
        text = from_guest(stream)
        found += [ErrorLocation(file=escape(loc.file), line=loc.line, column=loc.column)
                  for loc in find_locations(text, pack.error_locations, program)]
    return found[:20]


def tool_result(output: BaseModel, blocks: list[ContentBlock] | None = None) -> CallToolResult:
    """A successful result: structured content, the same as JSON text, a summary line, then any embedded files.

    The summary line (what the program tried beyond its sandbox) is its own
    text block, so a client that shows text puts it in front of a person.

    Every string is checked once more on the way out: one that still holds
    lone surrogates (guest text some field forgot to escape) is escaped here
    and logged, instead of making the whole call fail to serialize.
    """
    structured = _sendable(output.model_dump(mode="json"), "result")
    assert isinstance(structured, dict)
    text = json.dumps(structured, indent=2, ensure_ascii=False)
    content: list[ContentBlock] = [TextContent(type="text", text=text)]
    summary = structured.get("attempts_summary")
    if isinstance(summary, str) and summary:
        content.append(TextContent(type="text", text=f"The program {summary}"))
    content += blocks or []
    return CallToolResult(content=content, structured_content=structured)


def _sendable(value: object, where: str) -> object:
    """``value`` (JSON data) with every string that cannot be encoded as UTF-8 escaped."""
    if isinstance(value, str):
        if is_clean(value):
            return value
        log.warning("escaping guest text that reached %s unescaped", where)
        return escape(value)
    if isinstance(value, dict):
        return {_sendable(k, where): _sendable(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_sendable(item, f"{where}[{i}]") for i, item in enumerate(value)]
    return value


def _out_files(
    files: Mapping[str, bytes], inline_text_bytes: int, max_embed_bytes: int
) -> tuple[list[OutFile], list[ContentBlock]]:
    listed: list[OutFile] = []
    blocks: list[ContentBlock] = []
    budget = max_embed_bytes
    for name in sorted(files):
        data = files[name]
        shown, escaped = escape(name), not is_clean(name)
        mime = mimetypes.guess_type(shown)[0]
        text = _as_text(data)
        if text is not None and len(data) <= inline_text_bytes:
            listed.append(OutFile(name=shown, name_escaped=escaped, size=len(data), delivery="inline", text=text,
                                  mime_type=mime or "text/plain"))
            continue
        if len(data) > budget:
            listed.append(OutFile(
                name=shown, name_escaped=escaped, size=len(data), delivery="omitted",
                mime_type=mime or ("text/plain" if text is not None else "application/octet-stream"),
                note=f"exceeds the {format_size(max_embed_bytes)} budget for files returned in one result",
            ))
            continue
        budget -= len(data)
        image = _image_type(data)
        if image is not None:
            blocks.append(ImageContent(type="image", data=base64.b64encode(data).decode("ascii"), mime_type=image))
            listed.append(OutFile(name=shown, name_escaped=escaped, size=len(data), delivery="image",
                                  mime_type=image))
            continue
        uri = OUT_URI + quote(name.encode("utf-8", "surrogateescape"), safe="/")  # the exact bytes, %-encoded
        resource: TextResourceContents | BlobResourceContents
        if text is not None:
            mime = mime or "text/plain"
            resource = TextResourceContents(uri=uri, mime_type=mime, text=text)
        else:
            mime = mime or "application/octet-stream"
            resource = BlobResourceContents(uri=uri, mime_type=mime, blob=base64.b64encode(data).decode("ascii"))
        blocks.append(EmbeddedResource(type="resource", resource=resource))
        listed.append(OutFile(name=shown, name_escaped=escaped, size=len(data), delivery="embedded", uri=uri,
                              mime_type=mime))
    return listed, blocks


#: Leading bytes of the picture formats clients display -> MIME type.
_IMAGE_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"),
                (b"GIF89a", "image/gif"))  # fmt: skip


def _image_type(data: bytes) -> str | None:
    """The MIME type of a picture, told by its bytes (never by the guest's file name), or None."""
    for magic, mime in _IMAGE_MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _as_text(data: bytes) -> str | None:
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
