"""The embedded sandbox core: stdlib only (no Qt, no wasmtime, no docker).

Everything a caller needs is re-exported here; the modules behind it are
implementation detail.
"""

from playground.core.backend import Backend, Diagnosable, Diagnostic, MissingBackend, ProgressCallback, Request
from playground.core.errors import (
    BackendUnavailable,
    FSQuotaExceeded,
    InvalidLimits,
    InvalidPack,
    InvalidSpec,
    LimitExceeded,
    ManagerClosed,
    MemoryLimitExceeded,
    NetworkDenied,
    OutputLimitExceeded,
    SandboxError,
    SessionClosed,
    SessionKilled,
    SessionNotFound,
    TimeLimitExceeded,
    TooManySessions,
    UnknownLanguage,
    Unsupported,
)
from playground.core.limits import DEFAULT_LIMITS, LIMIT_FIELDS, UNLIMITED, Limits, Unlimited
from playground.core.output import OutputCapture, OutputListener, Stream
from playground.core.pack import Artifact, Capabilities, DockerSpec, Mount, Pack, WasmSpec, validate_packs
from playground.core.policy import DOCKER_ONLY, PREFER_WASM, WASM_ONLY, Policy
from playground.core.result import NetLogEntry, Outcome, Result, Usage
from playground.core.sandbox import LanguageStatus, Sandbox
from playground.core.session import GuestSession, Session, SessionBackend, SessionConfig, SessionRequest, SessionState
from playground.core.session_manager import SessionManager
from playground.core.spec import NetPolicy, Spec
from playground.core.units import format_duration, format_size, parse_duration, parse_size
from playground.core.vfs import VFS, VFSError, clean_key

__all__ = [
    "DEFAULT_LIMITS",
    "DOCKER_ONLY",
    "LIMIT_FIELDS",
    "PREFER_WASM",
    "UNLIMITED",
    "VFS",
    "WASM_ONLY",
    "Artifact",
    "Backend",
    "BackendUnavailable",
    "Capabilities",
    "Diagnosable",
    "Diagnostic",
    "DockerSpec",
    "FSQuotaExceeded",
    "GuestSession",
    "InvalidLimits",
    "InvalidPack",
    "InvalidSpec",
    "LanguageStatus",
    "LimitExceeded",
    "Limits",
    "ManagerClosed",
    "MemoryLimitExceeded",
    "MissingBackend",
    "Mount",
    "NetLogEntry",
    "NetPolicy",
    "NetworkDenied",
    "Outcome",
    "OutputCapture",
    "OutputLimitExceeded",
    "OutputListener",
    "Pack",
    "Policy",
    "ProgressCallback",
    "Request",
    "Result",
    "Sandbox",
    "SandboxError",
    "Session",
    "SessionBackend",
    "SessionClosed",
    "SessionConfig",
    "SessionKilled",
    "SessionManager",
    "SessionNotFound",
    "SessionRequest",
    "SessionState",
    "Spec",
    "Stream",
    "TimeLimitExceeded",
    "TooManySessions",
    "UnknownLanguage",
    "Unlimited",
    "Unsupported",
    "Usage",
    "VFSError",
    "WasmSpec",
    "clean_key",
    "format_duration",
    "format_size",
    "parse_duration",
    "parse_size",
    "validate_packs",
]
