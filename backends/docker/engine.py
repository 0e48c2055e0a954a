"""The one module that imports the ``docker`` SDK: a small, typed wrapper over its low-level API.

Everything above this module speaks in plain values (container ids, byte
strings, ``ContainerState``) and in this module's exceptions; no
``docker.errors.*`` escapes. Each ``docker`` exception is translated once,
here, with ``raise ... from exc`` so the evidence stays attached.

Thread model: an ``Engine`` may be shared by threads (the SDK's HTTP pool is
thread-safe for independent requests); an ``Attachment`` belongs to the one
thread that reads it, except ``close()`` which any thread may call.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

from backends.docker.attachment import Attachment
from backends.docker.engine_types import (
    ContainerGone,
    ContainerState,
    EngineError,
    EngineInfo,
    EnginePermissionDenied,
    EngineTLSError,
    EngineUnreachable,
    ImageNotFound,
    ImagePullFailed,
    NetworkInfo,
    NetworkOverlap,
    TLSFiles,
    parse_timestamp,
    version_tuple,
)
from backends.docker.hostfirewall import BRIDGE_OPTION
from backends.docker.profile import LABEL, EngineKind

log = logging.getLogger(__name__)

#: The engine's API; the plain values and exceptions live in ``engine_types``, the stream in ``attachment``.
__all__ = [
    "Attachment",
    "ContainerGone",
    "ContainerState",
    "Engine",
    "EngineError",
    "EngineInfo",
    "EnginePermissionDenied",
    "EngineTLSError",
    "EngineUnreachable",
    "ImageNotFound",
    "ImagePullFailed",
    "NetworkInfo",
    "NetworkOverlap",
    "TLSFiles",
    "version_tuple",
]

#: API versions below this lack ``ipc_mode="none"`` and ``init``.
MIN_API_VERSION: Final = "1.32"
#: Seconds ``Engine.remove`` keeps trying while the engine is busy with the container (Podman 4.3 refuses
#: to force-remove one that is just stopping: "container state improper").
REMOVE_PATIENCE: Final = 15.0
#: Podman before 4.4 fails a whole listing when a container's process exits while it reads that process's
#: ``/proc/PID/cgroup`` (podman#16383, fixed by podman#16504; Debian 12 has 4.3): the listing is asked again
#: this many times, ``LIST_RETRY_PAUSE`` seconds apart.
LIST_RETRIES: Final = 5
LIST_RETRY_PAUSE: Final = 0.05
#: The memory cgroup's OOM-kill counters, as seen inside a container (cgroup v2, then v1).
OOM_COUNTER_FILES: Final = ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control")


def _describe(exc: BaseException) -> str:
    explanation = getattr(exc, "explanation", None)
    if isinstance(explanation, bytes):
        explanation = explanation.decode("utf-8", "replace")
    return str(explanation or exc).strip()


@contextmanager
def _translated(what: str) -> Iterator[None]:
    """Translate SDK and transport errors into this module's exceptions, once."""
    try:
        yield
    except Exception as exc:
        translated = _translation(what, exc)
        if translated is None:
            raise
        raise translated from exc


def _translation(what: str, exc: Exception) -> EngineError | None:
    """This module's exception for an SDK or transport error (None: neither, it goes on as it is).

    The Docker SDK (and requests under it) is imported here and in
    ``Engine``, not with this module: that took about 0.19 s of every
    ``playground`` command, and a program the Wasm tier runs never needs it.
    """
    import docker.errors  # type: ignore[import-untyped]
    import requests

    if isinstance(exc, docker.errors.ImageNotFound):
        return ImageNotFound(f"{what}: {_describe(exc)}", detail=_describe(exc))
    if isinstance(exc, docker.errors.NotFound):
        return ContainerGone(f"{what}: {_describe(exc)}", detail=_describe(exc))
    if isinstance(exc, docker.errors.APIError):
        return EngineError(f"{what}: {_describe(exc)}", detail=_describe(exc))
    if isinstance(exc, docker.errors.DockerException):
        return _connection_error(what, exc)
    if isinstance(exc, requests.exceptions.SSLError):
        return _tls_error(what, exc)
    if isinstance(exc, PermissionError):
        return EnginePermissionDenied(f"{what}: permission denied ({exc})", detail=str(exc))
    unreachable = (requests.exceptions.ConnectionError, requests.exceptions.Timeout, ConnectionError, TimeoutError)
    if isinstance(exc, unreachable):
        return _connection_error(what, exc)
    if isinstance(exc, requests.exceptions.RequestException):
        return EngineError(f"{what}: {exc}", detail=str(exc))
    return None


def _tls_error(what: str, exc: BaseException) -> EngineTLSError:
    """Name the likely cause: the daemon's certificate is not signed by our CA (or not for this host),
    or the daemon refused ours."""
    text = str(exc)
    if "CERTIFICATE_VERIFY_FAILED" in text or "hostname" in text.lower() or "IP address mismatch" in text:
        cause = (
            "the daemon's certificate is not signed by the CA in DOCKER_CERT_PATH/ca.pem, "
            "or not issued for this host name or address"
        )
    else:
        cause = (
            "the daemon ended the handshake, most likely refusing the client certificate "
            "(DOCKER_CERT_PATH/cert.pem and key.pem: not signed by the CA the daemon trusts, or expired)"
        )
    return EngineTLSError(f"{what}: TLS handshake failed: {cause} ({text})", detail=text)


def _connection_error(what: str, exc: BaseException) -> EngineError:
    text = str(exc)
    if "Permission denied" in text or "PermissionError" in text:
        return EnginePermissionDenied(f"{what}: permission denied on the socket", detail=text)
    return EngineUnreachable(f"{what}: the daemon does not answer ({text})", detail=text)


class Engine:
    """A connection to one Docker-compatible daemon (Docker or Podman).

    Construction makes no request. ``timeout`` bounds every plain API call;
    attach streams are bounded by the caller's own deadline instead.
    """

    def __init__(
        self, base_url: str, *, timeout: float = 10.0, version: str = MIN_API_VERSION, tls: TLSFiles | None = None
    ) -> None:
        self.base_url = base_url
        #: How this engine speaks TLS (None: plain, as for a unix socket); copy it to open another connection.
        self.tls = tls
        import docker  # see _translation
        import docker.errors
        import docker.tls  # type: ignore[import-untyped]

        try:
            config: Any = False
            if tls is not None:
                config = docker.tls.TLSConfig(
                    client_cert=(tls.cert, tls.key), ca_cert=tls.ca if tls.verify else None, verify=tls.verify
                )
            self._api: Any = docker.APIClient(base_url=base_url, version=version, timeout=timeout, tls=config)
            # requests lets REQUESTS_CA_BUNDLE (or CURL_CA_BUNDLE) replace the daemon's CA, and HTTP(S)_PROXY
            # put a proxy between us and the daemon: the connection uses exactly what it was given.
            self._api.trust_env = False
        except docker.errors.DockerException as exc:
            raise EngineUnreachable(f"cannot use {base_url}: {exc}", detail=str(exc)) from exc

    def close(self) -> None:
        """Close the HTTP pool. Idempotent."""
        try:
            self._api.close()
        except Exception:  # closing a pool must never raise into cleanup paths
            log.debug("closing the docker client failed", exc_info=True)

    # -- the daemon ---------------------------------------------------------

    def ping(self) -> EngineInfo:
        """Ask the daemon who it is.

        Raises:
            EngineUnreachable, EnginePermissionDenied, EngineError.
        """
        with _translated(f"ping {self.base_url}"):
            response = self._api._get(self._api._url("/_ping"))
            self._api._raise_for_status(response)
            server_header = str(response.headers.get("Server", ""))
            version: Mapping[str, Any] = self._api.version(api_version=False)
        components = version.get("Components") or []
        names = " ".join(str(c.get("Name", "")) for c in components if isinstance(c, Mapping))
        podman = "libpod" in server_header.lower() or "podman" in names.lower()
        return EngineInfo(
            kind=EngineKind.PODMAN if podman else EngineKind.DOCKER,
            api_version=str(version.get("ApiVersion", "")),
            server_version=str(version.get("Version", "")),
            os=str(version.get("Os", "")),
        )

    # -- images -------------------------------------------------------------

    def image_present(self, ref: str) -> bool:
        """Whether ``ref`` is in the local image store."""
        try:
            with _translated(f"inspect image {ref}"):
                self._api.inspect_image(ref)
        except (ImageNotFound, ContainerGone):
            return False
        return True

    def pull(self, ref: str, progress: Callable[[str, float], None] | None = None) -> None:
        """Pull ``ref``, reporting layer progress as it goes.

        Raises:
            ImagePullFailed: the registry cannot be reached or has no such image.
        """
        repo, tag = _split_ref(ref)
        layers: dict[str, tuple[int, int]] = {}
        try:
            with _translated(f"pull {ref}"):
                for event in self._api.pull(repo, tag=tag, stream=True, decode=True):
                    if not isinstance(event, Mapping):
                        continue
                    if "error" in event:
                        raise ImagePullFailed(f"pull {ref}: {event['error']}", detail=str(event["error"]))
                    detail = event.get("progressDetail") or {}
                    layer = str(event.get("id", ""))
                    if layer and isinstance(detail, Mapping) and detail.get("total"):
                        layers[layer] = (int(detail.get("current", 0)), int(detail["total"]))
                    if progress is not None:
                        done = sum(c for c, _ in layers.values())
                        total = sum(t for _, t in layers.values())
                        fraction = min(1.0, done / total) if total else -1.0
                        progress(f"pulling {ref}: {event.get('status', '')}".strip(), fraction)
        except ImagePullFailed:
            raise
        except EngineError as exc:
            raise ImagePullFailed(str(exc), detail=exc.detail) from exc
        if not self.image_present(ref):
            raise ImagePullFailed(f"pull {ref} finished but the image is not present")

    # -- containers ---------------------------------------------------------

    def create(
        self,
        image: str,
        argv: list[str],
        create_kwargs: Mapping[str, object],
        environment: Mapping[str, str],
    ) -> str:
        """Create (not start) a container that runs exactly ``argv``; return its id.

        ``argv`` replaces the image's entrypoint and command. ``create_kwargs``
        is ``hardening_profile(...)``: ``host_config`` (for
        ``create_host_config``) and the rest for ``create_container``.
        """
        kwargs = dict(create_kwargs)
        host = kwargs.pop("host_config")
        assert isinstance(host, Mapping)
        with _translated(f"create a container from {image}"):
            host_config = self._api.create_host_config(**host)
            created = self._api.create_container(
                image,
                entrypoint=list(argv),
                command=[],
                environment=dict(environment),
                host_config=host_config,
                **kwargs,
            )
        return str(created["Id"])

    def attach(self, container: str) -> Attachment:
        """Attach to stdin, stdout and stderr. Call before ``start`` to miss nothing."""
        with _translated("attach"):
            raw = self._api.attach_socket(container, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        return Attachment(raw)

    def start(self, container: str) -> None:
        with _translated("start the container"):
            self._api.start(container)

    def kill(self, container: str) -> None:
        """SIGKILL the container; a container that already stopped or is gone is fine."""
        self.signal(container, "SIGKILL")

    def signal(self, container: str, signal: str) -> None:
        """Send ``signal`` to the container's init, which passes it to the main process.

        A container that already stopped or is gone is fine.
        """
        try:
            with _translated(f"send {signal} to the container"):
                self._api.kill(container, signal=signal)
        except ContainerGone:
            return
        except EngineError as exc:
            if "not running" in exc.detail or "not running" in str(exc):
                return
            raise

    def exec_quietly(self, container: str, argv: list[str], timeout: float) -> int | None:
        """Run ``argv`` in the running container (no stdin, output discarded); its exit code.

        Waits up to ``timeout`` seconds for it to end (None: still running).
        The exec is attached and its end is the end of its output stream:
        Podman (4.3) keeps a detached exec "Running" forever, so polling
        ``exec_inspect`` alone would always wait out the timeout there.
        """
        deadline = time.monotonic() + timeout
        with _translated("exec in the container"):
            created: Mapping[str, Any] = self._api.exec_create(container, argv, stdout=True, stderr=True)
            exec_id = str(created["Id"])
            raw = self._api.exec_start(exec_id, detach=False, socket=True)
        sock = getattr(raw, "_sock", raw)
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                sock.settimeout(left)
                try:
                    if not sock.recv(1 << 16):
                        break
                except TimeoutError:
                    return None
                except OSError:
                    break  # the stream broke: the inspection below says how the process ended
        finally:
            with contextlib.suppress(OSError):
                raw.close()
        with _translated("exec in the container"):
            while True:  # Docker may say "Running" for a moment after the stream ended
                info: Mapping[str, Any] = self._api.exec_inspect(exec_id)
                if not info.get("Running") and info.get("ExitCode") is not None:
                    return int(info["ExitCode"])
                if time.monotonic() >= deadline:
                    return None
                time.sleep(0.005)

    def oom_kills(self, container: str) -> int | None:
        """How many processes the running container's memory cgroup has OOM-killed (None: cannot tell).

        Why: Podman (4.3, cgroup v1) sets ``State.OOMKilled`` only when the
        container's main process was the victim, and not even always then;
        Docker sets it for any victim. Asking the kernel's own counter inside
        the container (``OOM_COUNTER_FILES``, via ``cat`` in the image) works
        on both, while the container still runs.
        """
        try:
            with _translated("read the container's OOM counter"):
                created: Mapping[str, Any] = self._api.exec_create(
                    container, ["cat", *OOM_COUNTER_FILES], stdout=True, stderr=False
                )
                output = self._api.exec_start(str(created["Id"]), detach=False, stream=False)
        except EngineError:
            return None
        text = output.decode("ascii", "replace") if isinstance(output, bytes) else str(output)
        counts = [int(words[1]) for words in map(str.split, text.splitlines()) if words[:1] == ["oom_kill"]
                  and len(words) == 2 and words[1].isdigit()]  # fmt: skip
        return max(counts) if counts else None

    def wait(self, container: str, timeout: float) -> int:
        """Wait for the container to stop; return its exit code."""
        with _translated("wait for the container"):
            result: Mapping[str, Any] = self._api.wait(container, timeout=timeout)
        return int(result.get("StatusCode", -1))

    def state(self, container: str) -> ContainerState:
        with _translated("inspect the container"):
            attrs: Mapping[str, Any] = self._api.inspect_container(container)
        state: Mapping[str, Any] = attrs.get("State") or {}
        return ContainerState(
            running=bool(state.get("Running")),
            exit_code=int(state.get("ExitCode", -1)),
            oom_killed=bool(state.get("OOMKilled")),
            error=str(state.get("Error") or ""),
            pid=int(state.get("Pid") or 0),
            finished_at=parse_timestamp(str(state.get("FinishedAt") or "")),
        )

    def memory_usage(self, container: str) -> int | None:
        """The running container's memory use as its cgroup counts it (the stats API's ``usage``), or None."""
        with _translated("read the container's stats"):
            stats: Mapping[str, Any] = self._api.stats(container, stream=False)
        usage = (stats.get("memory_stats") or {}).get("usage")
        return int(usage) if isinstance(usage, int) else None

    def remove(self, container: str) -> None:
        """Force-remove the container and its anonymous volumes; returns once it is gone (gone already is fine).

        Podman refuses while the container is between running and stopped
        ("container state improper"), and either engine answers "already in
        progress" while another removal runs: both are retried until the
        container is gone, for up to ``REMOVE_PATIENCE`` seconds (a loaded
        machine takes longer than a few tries; CI's Podman pass once saw a
        container outlive them). Then the last error is raised, except for a
        removal still in progress elsewhere, which is left to finish.
        """
        deadline = time.monotonic() + REMOVE_PATIENCE
        attempt = 0
        while True:
            attempt += 1
            try:
                with _translated("remove the container"):
                    self._api.remove_container(container, force=True, v=True)
                return
            except ContainerGone:
                return
            except EngineError as exc:
                in_progress = "already in progress" in exc.detail
                if not in_progress and "container state improper" not in exc.detail:
                    raise
                if time.monotonic() >= deadline:
                    if in_progress:
                        return
                    raise
            time.sleep(min(0.05 * attempt, 0.5))

    def create_network(
        self,
        name: str,
        *,
        subnet: str,
        gateway: str,
        labels: Mapping[str, str],
        options: Mapping[str, str] | None = None,
    ) -> str:
        """Create an ``internal`` bridge network on ``subnet`` with driver ``options``; return its id.

        Raises:
            NetworkOverlap: the subnet clashes with an existing network.
            EngineError: anything else the daemon refused.
        """
        import docker.types  # type: ignore[import-untyped]  # see _translation

        try:
            with _translated(f"create network {name}"):
                pool = docker.types.IPAMPool(subnet=subnet, gateway=gateway)
                created = self._api.create_network(
                    name,
                    driver="bridge",
                    internal=True,
                    ipam=docker.types.IPAMConfig(pool_configs=[pool]),
                    labels=dict(labels),
                    options=dict(options or {}),
                    check_duplicate=True,
                )
        except EngineError as exc:
            if "overlap" in (exc.detail or str(exc)).lower():
                raise NetworkOverlap(str(exc), detail=exc.detail) from exc
            raise
        return str(created["Id"])


    def remove_network(self, network: str) -> None:
        """Remove a network; one that is gone already is fine."""
        try:
            with _translated(f"remove network {network[:12]}"):
                self._api.remove_network(network)
        except ContainerGone:
            return


    def networks(self, label: str | None = None) -> list[NetworkInfo]:
        """Every network (or those carrying ``label``) with its subnets."""
        filters = {"label": label} if label else None
        with _translated("list networks"):
            found: list[Mapping[str, Any]] = self._api.networks(filters=filters)
        result = []
        for net in found:
            configs = (net.get("IPAM") or {}).get("Config") or []
            subnets = tuple(str(c["Subnet"]) for c in configs if isinstance(c, Mapping) and c.get("Subnet"))
            options = net.get("Options") or {}
            result.append(
                NetworkInfo(
                    id=str(net["Id"]),
                    name=str(net.get("Name", "")),
                    subnets=subnets,
                    internal=bool(net.get("Internal")),
                    bridge=str(options.get(BRIDGE_OPTION, "")) if isinstance(options, Mapping) else "",
                )
            )
        return result


    def container_address(self, container: str, network: str) -> str:
        """The container's IPv4 address on ``network`` ("" when it has none)."""
        with _translated("inspect the container"):
            attrs: Mapping[str, Any] = self._api.inspect_container(container)
        networks: Mapping[str, Any] = (attrs.get("NetworkSettings") or {}).get("Networks") or {}
        for name, endpoint in networks.items():
            if isinstance(endpoint, Mapping) and network in (name, endpoint.get("NetworkID")):
                return str(endpoint.get("IPAddress") or "")
        return ""

    def containers(self, label: str = LABEL) -> list[str]:
        """Ids of every container (running or not) that carries ``label``."""
        retries = LIST_RETRIES
        while True:
            try:
                with _translated("list containers"):
                    found: list[Mapping[str, Any]] = self._api.containers(all=True, filters={"label": label})
                return [str(c["Id"]) for c in found]
            except EngineError as exc:
                if not retries or not _exited_mid_listing(exc):
                    raise
                retries -= 1
                time.sleep(LIST_RETRY_PAUSE)


def _exited_mid_listing(exc: EngineError) -> bool:
    """Podman's listing race (``LIST_RETRIES``): "read /proc/PID/cgroup: no such process"."""
    return "/cgroup: no such process" in exc.detail and "/proc/" in exc.detail


def _split_ref(ref: str) -> tuple[str, str | None]:
    """``"node:22-slim"`` -> ``("node", "22-slim")``; digests stay on the repository."""
    if "@" in ref:
        return ref, None
    name, _, tag = ref.rpartition(":")
    if name and "/" not in tag:
        return name, tag
    return ref, "latest"
