"""``Sandbox``: routes a ``Spec`` to a backend and turns what happened into a ``Result``.

This is the one boundary where context is added: limits are merged and
validated, a fresh VFS and output capture are built for every run, the
policy picks the backend, and limit errors get their partial ``.result``.
Nothing is shared between runs, so one ``Sandbox`` serves many concurrent
runs safely.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePath

from playground.core import handoff, package_plan, package_tree, variants
from playground.core.backend import (
    CHECKING,
    Backend,
    CallerRootBackend,
    ProgressCallback,
    Provisionable,
    Request,
    SlowAvailability,
)
from playground.core.capture import Capture
from playground.core.errors import (
    BackendUnavailable,
    FSQuotaExceeded,
    InvalidPack,
    LimitExceeded,
    OutputLimitExceeded,
    UnknownLanguage,
    Unsupported,
)
from playground.core.keyboard import InputStream
from playground.core.limits import DEFAULT_LIMITS, Limits, ResolvedLimits
from playground.core.output import OutputCapture, OutputListener
from playground.core.pack import Pack, validate_packs
from playground.core.packages import PackageSet, PackageStore
from playground.core.policy import PREFER_WASM, Policy
from playground.core.result import Outcome, Result
from playground.core.serve import (
    LogBuffer,
    ProxyStarter,
    ServeBackend,
    ServeOpts,
    ServeRequest,
    Service,
    start_service,
)
from playground.core.session import Session, SessionBackend, SessionConfig
from playground.core.spec import Spec
from playground.core.vfs import VFS, Layout, VFSError

log = logging.getLogger(__name__)

NO_NETWORK = "cannot enforce a network policy"
NO_SESSIONS = "no REPL sessions"
NO_SERVE = "cannot serve"
NO_CALLER_ROOT = "cannot give the guest a root of the caller's (Spec.root_files)"


@dataclass(frozen=True, slots=True, kw_only=True)
class LanguageStatus:
    """Where a language would run now, and why each other backend would not."""

    pack: Pack
    backend: str | None
    reasons: Mapping[str, str]

    @property
    def why_not(self) -> str:
        """The reasons in one line (``wasm: ...; docker: ...``); empty when it can run."""
        return "" if self.backend is not None else _join(self.reasons)

    @property
    def checking(self) -> bool:
        """Nothing runs it yet, but a backend is still learning whether it can (``SlowAvailability``)."""
        return self.backend is None and CHECKING in self.reasons.values()


async def _learn(backends: Iterable[SlowAvailability]) -> None:
    """Each backend refreshes in a daemon thread: a daemon that never answers holds up neither a cancel nor exit."""
    await asyncio.gather(*(handoff.in_daemon_thread(b.refresh, f"learn-{b.name}") for b in backends))


def _join(reasons: Mapping[str, str]) -> str:
    return "; ".join(f"{name}: {why}" for name, why in reasons.items()) or "no backend registered"


class Sandbox:
    """Runs code through registered backends. Safe for concurrent use.

    Construction validates every pack and the default limits, so a
    misconfiguration fails at start-up rather than during a run.

    Like the backends, the host-side proxy that ``serve`` puts in front of a
    guest port is handed in (``proxy_starter``); the core never imports one.
    Without it ``serve`` raises ``Unsupported``; ``playground.default_sandbox``
    passes the aiohttp proxy of ``playground.serve``.

    Raises:
        InvalidPack: a malformed pack, or two packs claiming one name.
        InvalidLimits: ``default_limits`` do not validate after merging.
    """

    def __init__(
        self,
        *,
        backends: Iterable[Backend] = (),
        packs: Iterable[Pack] = (),
        policy: Policy = PREFER_WASM,
        default_limits: Limits | None = None,
        proxy_starter: ProxyStarter | None = None,
        packages: PackageStore | None = None,
    ) -> None:
        self._packs = tuple(packs)
        self._by_name = validate_packs(self._packs)
        self._by_ext = {ext: p for p in self._packs for ext in p.extensions}
        self._backends: dict[str, Backend] = {}
        for backend in backends:
            if backend.name in self._backends:
                raise InvalidPack(f"two backends are named {backend.name!r}")
            self._backends[backend.name] = backend
        self.policy = policy
        #: The built-in defaults with this sandbox's merged in (what a pack without limits of its own gets).
        self.default_limits = DEFAULT_LIMITS.merged(default_limits).validate()
        # Kept apart: a field set here beats a pack's default, a field left unset does not.
        self._chosen_defaults = default_limits
        #: ``default_limits_for`` by pack limits (the sandbox's own defaults never change).
        self._pack_defaults: dict[Limits | None, ResolvedLimits] = {}
        for pack in self._packs:
            self.default_limits_for(pack)
        self._proxy_starter = proxy_starter
        #: Where ``Spec.packages`` are resolved and cached (made on first use: the default cache directory).
        self._package_store = packages

    def with_policy(self, policy: Policy) -> Sandbox:
        """A sibling routed by ``policy``: the same packs, backends, defaults and package store.

        For a caller that lets the user pick where each language runs (the
        GUI's backend choice). Closing either closes the shared backends.
        """
        return Sandbox(packs=self._packs, backends=self._backends.values(), policy=policy,
                       default_limits=self._chosen_defaults, proxy_starter=self._proxy_starter,
                       packages=self.package_store)

    # -- lookup -------------------------------------------------------------

    @property
    def packs(self) -> tuple[Pack, ...]:
        return self._packs

    @property
    def backends(self) -> Mapping[str, Backend]:
        return dict(self._backends)

    def languages(self) -> list[str]:
        """Canonical names of all registered packs, sorted."""
        return sorted(p.name for p in self._packs)

    def pack(self, lang: str) -> Pack:
        """Find a pack by name or alias (case-insensitive).

        Raises:
            UnknownLanguage: nothing matches; the message lists what exists.
        """
        pack = self._by_name.get(lang.strip().lower())
        if pack is None:
            raise UnknownLanguage(f"unknown language {lang!r}; known: {', '.join(self.languages())}")
        return pack

    def pack_for_file(self, filename: str) -> Pack:
        """Find a pack by a file's extension (``app.ts`` -> typescript).

        Raises:
            UnknownLanguage: the extension belongs to no pack.
        """
        suffix = PurePath(filename).suffix.lower()
        pack = self._by_ext.get(suffix)
        if pack is None:
            known = ", ".join(sorted(self._by_ext))
            raise UnknownLanguage(f"no language for extension {suffix or '(none)'!r} of {filename!r}; known: {known}")
        return pack

    def status(self, lang: str) -> LanguageStatus:
        """Which backend the policy would pick to run ``lang`` now, and why not the others.

        Never blocks (the GUI calls it on its thread): a backend that has not
        learned yet whether it can run ``lang`` says ``CHECKING``; after
        ``learn_availability`` or ``refresh_availability`` it knows.
        """
        return self._status(lang)

    def refresh_availability(self, *, unknown_only: bool = False) -> None:
        """Every slow backend learns what it can run now, blocking this thread (``playground doctor``, scripts).

        ``unknown_only``: only those still ``CHECKING`` a language of this sandbox.
        """
        for backend in self._slow_backends(self._packs, self._backends, unknown_only=unknown_only):
            backend.refresh()

    async def learn_availability(self) -> None:
        """Every slow backend still ``CHECKING`` a language of this sandbox learns it now, off the event loop."""
        await _learn(self._slow_backends(self._packs, self._backends, unknown_only=True))

    async def _learned(self, pack: Pack, **needs: bool) -> Backend | None:
        """Before routing ``pack`` for real: the backends the policy prefers over its choice know their answer.

        Only those: a Python run that Wasm takes never waits for a Docker
        daemon that does not answer. Learning happens off the event loop.
        Returns the backend the route then picks (None: none, or one still
        unsure; the caller's own routing says why).
        """
        for _ in range(2):  # a second pass only covers a backend that failed to learn
            chosen, _ = self._route(pack, **needs)
            order = list(self.policy.order)
            ahead = order if chosen is None else order[: order.index(chosen.name)]
            pending = self._slow_backends([pack], {n: b for n, b in self._backends.items() if n in ahead},
                                          unknown_only=True)  # fmt: skip
            if not pending:
                return chosen
            await _learn(pending)
        return None

    @staticmethod
    def _slow_backends(
        packs: Iterable[Pack], backends: Mapping[str, Backend], *, unknown_only: bool
    ) -> list[SlowAvailability]:
        found: list[SlowAvailability] = []
        for backend in backends.values():
            if not isinstance(backend, SlowAvailability):
                continue
            if not unknown_only or any(backend.unavailable_reason(p) == CHECKING for p in packs):
                found.append(backend)
        return found

    def session_status(self, lang: str) -> LanguageStatus:
        """Which backend would host a REPL session for ``lang`` (``new_session``), and why not the others."""
        return self._status(lang, needs_sessions=True)

    def serve_status(self, lang: str) -> LanguageStatus:
        """Which backend would serve a program in ``lang`` (``serve``), and why not the others."""
        return self._status(lang, needs_serve=True)

    def _status(self, lang: str, *, needs_sessions: bool = False, needs_serve: bool = False) -> LanguageStatus:
        pack = self.pack(lang)
        chosen, reasons = self._route(pack, needs_network=False, needs_sessions=needs_sessions, needs_serve=needs_serve)
        return LanguageStatus(pack=pack, backend=chosen.name if chosen else None, reasons=reasons)

    def _route(
        self,
        pack: Pack,
        *,
        needs_network: bool,
        needs_sessions: bool = False,
        needs_serve: bool = False,
        needs_caller_root: bool = False,
    ) -> tuple[Backend | None, dict[str, str]]:
        reasons: dict[str, str] = {}
        for name in self.policy.order:
            backend = self._backends.get(name)
            if backend is None:
                reasons[name] = "backend not registered"
                continue
            reason = backend.unavailable_reason(pack)
            if reason is None and needs_network and not backend.supports_network:
                reason = NO_NETWORK
            if reason is None and needs_caller_root and not (
                isinstance(backend, CallerRootBackend) and backend.supports_caller_root()
            ):
                reason = NO_CALLER_ROOT
            if reason is None and needs_sessions:
                if not isinstance(backend, SessionBackend):
                    reason = NO_SESSIONS
                elif (why := backend.session_unavailable_reason(pack)) is not None:
                    reason = f"{NO_SESSIONS}: {why}"
            if reason is None and needs_serve:
                if not isinstance(backend, ServeBackend):
                    reason = NO_SERVE
                elif (why := backend.serve_unavailable_reason(pack)) is not None:
                    reason = f"{NO_SERVE}: {why}"
            if reason is None:
                return backend, reasons
            reasons[name] = reason
        return None, reasons

    def select_backend(self, pack: Pack, *, needs_network: bool = False, needs_caller_root: bool = False) -> Backend:
        """The backend the policy picks for ``pack``.

        Raises:
            Unsupported: only a network policy or a caller's root
                (``Spec.root_files``) stood in the way.
            BackendUnavailable: no permitted backend can run the pack; the
                message names the language, the policy and each reason.
        """
        backend, reasons = self._route(pack, needs_network=needs_network, needs_caller_root=needs_caller_root)
        if backend is not None:
            return backend
        detail = _join(reasons)
        if needs_network and all(why == NO_NETWORK for why in reasons.values()):
            raise Unsupported(
                f"{pack.name}: no backend allowed by {self.policy} can enforce a network policy ({detail})"
            )
        if needs_caller_root and all(why in (NO_CALLER_ROOT, NO_NETWORK) for why in reasons.values()):
            raise Unsupported(f"{pack.name}: no backend allowed by {self.policy} takes Spec.root_files ({detail})")
        raise BackendUnavailable(f"cannot run {pack.name} under policy {self.policy}: {detail}")

    def pack_for(self, spec: Spec) -> Pack:
        """The pack that runs ``spec``: its language's, or that language's variant the program needs.

        A pack's ``WasmVariant`` (Python's scientific runtime) is picked from
        the program's imports and ``spec.packages`` (see ``variants``); a
        caller's root (``Spec.root_files``) keeps the pack's own runtime.

        Raises:
            UnknownLanguage: ``spec.lang`` matches no pack.
        """
        pack = self.pack(spec.lang)
        if spec.uses_caller_root:
            return pack
        return variants.variant_pack(pack, variants.choose(pack, spec.code, spec.packages))

    def hint(self, spec: Spec, result: Result) -> str | None:
        """A sentence on what a failed program met and what to do about it, or None.

        First what no tier of the language can do (``Pack.nowhere``: open a
        window); on the Wasm tier, then what its runtime cannot do
        (``WasmSpec.cannot``: a thread, a standard module its build leaves out;
        ``cannot_parse``: a syntax error its program's source explains, as
        TypeScript's decorators) and where it can be done; then, for a module it could not import
        (``ModuleNotFoundError``), whether a variant of the language has it
        (and that importing it by name picks that runtime) or how to add it
        as a package.
        """
        try:
            base = self.pack(spec.lang)
        except UnknownLanguage:
            return None
        nowhere = variants.nowhere_hint(base, result.stderr)
        if nowhere is not None:
            return nowhere
        chosen = None if spec.uses_caller_root else variants.choose(base, spec.code, spec.packages)
        runtime = chosen.name if chosen else ""
        cannot = None
        if result.backend == "wasm":
            source = spec.code if isinstance(spec.code, str) else ""  # bytes: a Wasm module
            cannot = variants.cannot_hint(base, result.stderr, runtime=runtime, source=source)
        return cannot or variants.missing_module_hint(base, result.stderr, runtime=runtime)

    def missing(self, pack: Pack) -> list[str]:
        """What the first backend of the policy that could run ``pack`` still lacks here (empty: ready)."""
        for name in self.policy.order:
            backend = self._backends.get(name)
            if isinstance(backend, Provisionable):
                missing = backend.missing(pack)
                if missing:
                    return missing
            if backend is not None and backend.unavailable_reason(pack) is None:
                return []
        return []

    @property
    def package_store(self) -> PackageStore:
        """Where ``Spec.packages`` are resolved, fetched and cached (``core.packages``)."""
        if self._package_store is None:
            self._package_store = PackageStore()
        return self._package_store

    def packages_for(self, spec: Spec, progress: Callable[[str], None] | None = None) -> PackageSet | None:
        """The pure-Python packages ``spec`` adds to its run, fetched and verified (blocks; None: none to add).

        Packages the chosen runtime already has are not fetched. Call it off
        the event loop (``prepare`` and ``run`` do): a first use downloads.

        Raises:
            PackageRefused: a package needs native code, has no wheel, or conflicts
                (the message says whether another runtime of the language has it).
            Unsupported: the language takes no packages, or ``spec`` has a caller's root.
            BackendUnavailable: the package index or pip failed.
        """
        if not spec.packages:
            return None
        base = self.pack(spec.lang)
        chosen = None if spec.uses_caller_root else variants.choose(base, spec.code, spec.packages)
        if chosen is not None:  # a variant's runtime (what it has, its Python) is there only on the Wasm tier
            backend, _ = self._route(variants.variant_pack(base, chosen), needs_network=spec.net is not None)
            chosen = chosen if backend is not None and backend.name == package_plan.VARIANT_BACKEND else None
        request = package_plan.request_for(spec, variants.variant_pack(base, chosen), chosen)
        if request is None:
            return None
        return self.package_store.ensure(request, progress, elsewhere=package_plan.elsewhere(base, chosen))

    def variant_status(self, lang: str) -> dict[str, LanguageStatus]:
        """For each variant of ``lang``'s pack: where it would run now, and why not elsewhere."""
        pack = self.pack(lang)
        found: dict[str, LanguageStatus] = {}
        for variant in pack.wasm.variants if pack.wasm is not None else ():
            view = variants.variant_pack(pack, variant)
            chosen, reasons = self._route(view, needs_network=False)
            found[variant.name] = LanguageStatus(pack=view, backend=chosen.name if chosen else None, reasons=reasons)
        return found

    def prepare(
        self, lang: str, progress: Callable[[str], None], *, spec: Spec | None = None, complete: bool = False
    ) -> list[str]:
        """Fetch or build what the backend the policy would use for ``lang`` still lacks (blocks).

        Walks the policy order like routing does: stops at the first backend
        that can run ``lang`` as it is, and provisions the first one that
        could once its missing parts are there. Returns what was provisioned
        (empty when nothing was needed). Call it off the event loop; never
        part of a run, so a download is never charged to a time limit.
        With ``spec``, prepares the runtime that would run that program
        (``pack_for``: a variant when its imports ask for one). ``complete``:
        see ``prepare_pack``.

        Raises:
            UnknownLanguage: ``lang`` matches no pack.
            BackendUnavailable: provisioning failed (the message says why).
        """
        pack = self.pack(lang) if spec is None else self.pack_for(spec)
        done = self.prepare_pack(pack, progress, complete=complete)
        if spec is not None and (packages := self.packages_for(spec, progress)) is not None:
            done.append(f"packages: {packages.describe()}")
        return done

    def prepare_pack(self, pack: Pack, progress: Callable[[str], None], *, complete: bool = False) -> list[str]:
        """``prepare`` for a pack as it is (a language, or a variant view from ``pack_for``/``variant_status``).

        ``complete`` (a set-up ahead of use): also what the first run that
        needs it would build for itself (``Provisionable.provision``).
        """
        for name in self.policy.order:
            backend = self._backends.get(name)
            if backend is None:
                continue
            if isinstance(backend, Provisionable) and (missing := backend.missing(pack, complete=complete)):
                backend.provision(pack, progress, complete=complete)
                return missing
            if backend.unavailable_reason(pack) is None:
                return []
        return []

    async def new_session(self, lang: str, config: SessionConfig | None = None) -> Session:
        """Start a stateful REPL session for ``lang``; the interpreter is up when this returns.

        Raises:
            Unsupported: the language can run here, but no permitted backend
                keeps a live interpreter for it.
            BackendUnavailable: the language cannot run here at all.
            UnknownLanguage, InvalidLimits, InvalidSpec.
        """
        pack = self.pack(lang)
        config = config or SessionConfig()
        limits = self.resolve_limits(config.limits, pack)
        await self._learned(pack, needs_network=False, needs_sessions=True)
        backend, reasons = self._route(pack, needs_network=False, needs_sessions=True)
        if backend is None:
            self.select_backend(pack)  # raises BackendUnavailable when nothing can run it at all
            detail = _join(reasons)
            raise Unsupported(f"{pack.name}: no backend allowed by {self.policy} offers REPL sessions ({detail})")
        assert isinstance(backend, SessionBackend)
        chosen = config.limits
        session = Session(
            backend, backend.name, pack, config, limits, limits_for=lambda p: self.resolve_limits(chosen, p)
        )
        try:
            await session.start()
        except BaseException:
            session.close()
            raise
        return session

    # -- running ------------------------------------------------------------

    def default_limits_for(self, pack: Pack | str) -> ResolvedLimits:
        """The limits a run of ``pack`` gets when the caller sets none, validated.

        Built-in defaults <- the pack's own (``Pack.limits``: what its
        compiler needs) <- the ones this sandbox was given. A pack's default
        only replaces a built-in one, never a value someone chose.
        """
        found = self.pack(pack) if isinstance(pack, str) else pack
        key = found.limits  # the only input that differs between packs (frozen and hashable, or None)
        cached = self._pack_defaults.get(key)
        if cached is None:
            cached = DEFAULT_LIMITS.merged(found.limits).merged(self._chosen_defaults).validate()
            if len(self._pack_defaults) < 64:  # asked at every run: merging and checking took about 0.1 ms
                self._pack_defaults[key] = cached
        return cached

    def variant_defaults(self, pack: Pack | str) -> dict[str, ResolvedLimits]:
        """``default_limits_for`` each other runtime of ``pack`` (the scientific Python's), by variant name.

        A session or a run moves to one of those when its code needs it, and
        then takes that runtime's defaults for what its caller did not set.
        """
        found = self.pack(pack) if isinstance(pack, str) else pack
        others = found.wasm.variants if found.wasm is not None else ()
        return {variant.name: self.default_limits_for(variants.variant_pack(found, variant)) for variant in others}

    def resolve_limits(self, overrides: Limits | None, pack: Pack | str | None = None) -> ResolvedLimits:
        """The defaults (``pack``'s when given, see ``default_limits_for``) with ``overrides`` merged in, validated."""
        base = self.default_limits if pack is None else self.default_limits_for(pack)
        return base.merged(overrides)

    async def run(
        self,
        spec: Spec,
        *,
        on_output: OutputListener | None = None,
        on_progress: ProgressCallback | None = None,
        input: InputStream | None = None,
    ) -> Result:
        """Run ``spec`` once and return what it produced.

        A non-zero guest exit code is not an error. ``on_output`` sees the
        output as it is captured (on the guest's thread); ``on_progress``
        hears about slow one-time work such as a first compile. ``input``
        is the keyboard (``core.keyboard``): the guest reads ``spec.stdin``
        first, then what is written to it until it is closed; a guest
        waiting for a line is still stopped by the wall-time limit and by
        cancellation.
        ``spec.packages`` are fetched first if ``prepare`` has not
        (``packages_for``), before the program's limits start.

        Cancellation: cancelling the awaiting task stops the guest; the
        backend waits for its worker before the ``CancelledError`` leaves.

        Raises:
            LimitExceeded: one of its four subclasses, with ``.result`` set
                to what was captured before the limit tripped.
            UnknownLanguage, InvalidLimits, BackendUnavailable, Unsupported
            (``PackageRefused`` among them).
        """
        pack = self.pack_for(spec)
        limits = self.resolve_limits(spec.limits, pack)
        needs = {"needs_network": spec.net is not None, "needs_caller_root": spec.uses_caller_root}
        backend = await self._learned(pack, **needs) or self.select_backend(pack, **needs)  # routed once
        packages = await self._packages_off_loop(spec, on_progress)
        vfs = VFS.for_limits(limits, Layout.CALLER_ROOT if spec.uses_caller_root else Layout.STANDARD)
        capture = Capture(output=OutputCapture(limits.max_output_cap, on_output), vfs=vfs, limits=limits)

        def result_of(outcome: Outcome | None) -> Result:
            return capture.result(outcome, backend=backend.name)

        try:
            _seed(vfs, spec)
        except VFSError as exc:
            raise FSQuotaExceeded(f"input files do not fit: {exc.strerror}", result=result_of(None)) from None
        guest_spec = spec
        if packages is not None:  # read-only at package_tree.GUEST_SITE, on PYTHONPATH, charged to no quota
            package_tree.place(vfs, packages.files)
            guest_spec = dataclasses.replace(spec, env=package_tree.guest_env(spec.env))

        request = Request(
            pack=pack, spec=guest_spec, limits=limits, vfs=vfs, output=capture.output,
            stdin=spec.stdin_bytes, progress=on_progress, input=input, attempts=capture.attempts,
        )
        try:
            outcome = await backend.run(request)
        except LimitExceeded as exc:
            if exc.result is None:
                exc.result = result_of(exc.outcome)
            raise

        result = result_of(outcome)
        if capture.output.truncated:
            raise OutputLimitExceeded(f"output limit of {limits.max_output} bytes exceeded", result=result)
        if vfs.quota_hit:
            raise FSQuotaExceeded(
                f"filesystem quota exceeded ({limits.fs_quota} bytes, {limits.max_files} files)", result=result
            )
        return result

    async def serve(self, spec: Spec, opts: ServeOpts | None = None) -> Service:
        """Run a server in the sandbox and expose it through an authenticated proxy.

        The URL is handed out only once every port's readiness probe passed.
        The guest's output goes to ``service.logs()`` (a bounded ring).

        Cancellation: cancelling while starting stops whatever was started.

        Raises:
            Unsupported: the language runs here but no permitted backend can
                serve it (or enforce ``spec.net``), or the sandbox was built
                without a ``proxy_starter``.
            ServiceNotReady: a readiness probe never passed.
            ServeError, BackendUnavailable, UnknownLanguage, InvalidLimits,
            InvalidServeOptions.
        """
        opts = opts or ServeOpts()
        pack = self.pack(spec.lang)
        if spec.packages:
            raise Unsupported("serve: Spec.packages are for runs (a served program gets no packages)")
        limits = self.resolve_limits(spec.limits, pack)
        await self._learned(pack, needs_network=spec.net is not None, needs_serve=True)
        backend, reasons = self._route(pack, needs_network=spec.net is not None, needs_serve=True)
        if backend is None:
            self.select_backend(pack, needs_network=spec.net is not None)
            detail = _join(reasons)
            raise Unsupported(f"{pack.name}: no backend allowed by {self.policy} can serve it ({detail})")
        assert isinstance(backend, ServeBackend)
        if spec.uses_caller_root:
            raise Unsupported("serve: Spec.root_files is for runs; a served program gets the standard layout")
        starter = self._proxy_starter
        if starter is None:
            raise Unsupported(
                "serve: this Sandbox has no proxy to expose a service with; pass proxy_starter= "
                "(playground.serve.start_service_proxy, as playground.default_sandbox() does)"
            )
        vfs = VFS.for_limits(limits)
        try:
            _seed(vfs, spec)
        except VFSError as exc:
            raise FSQuotaExceeded(f"input files do not fit: {exc.strerror}") from None
        request = ServeRequest(
            pack=pack, spec=spec, limits=limits, vfs=vfs, logs=LogBuffer(opts.log_bytes),
            stdin=spec.stdin_bytes, ports=tuple(p.guest for p in opts.ports),
        )
        return await start_service(backend, backend.name, request, opts, starter)

    async def _packages_off_loop(self, spec: Spec, on_progress: ProgressCallback | None) -> PackageSet | None:
        """``packages_for`` in a worker thread, before the run starts (never charged to its time limit)."""
        if not spec.packages:
            return None
        say = None if on_progress is None else (lambda line: on_progress(line, -1.0))
        return await asyncio.to_thread(self.packages_for, spec, say)

    def run_sync(self, spec: Spec) -> Result:
        """Blocking ``run`` for scripts. Not for use inside a running event loop.

        Raises:
            RuntimeError: called from a thread that runs an asyncio loop.
            Everything ``run`` raises.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.run(spec))
        raise RuntimeError("run_sync() called inside a running event loop; use 'await sandbox.run(spec)'")

    def close(self) -> None:
        """Close every backend. Idempotent."""
        for backend in self._backends.values():
            backend.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _seed(vfs: VFS, spec: Spec) -> None:
    """Place the caller's files: the root's (if any), ``/in`` (sealed read-only), ``/work``.

    Raises:
        VFSError: EDQUOT when they do not fit the quota.
        InvalidSpec: two files collide (a key used as a file and as a directory).
    """
    if spec.root_files is not None:
        vfs.seed_root(spec.root_files)
    vfs.seed_inputs(spec.files)
    vfs.seed_work(spec.work_files)
