"""A second, private ``dockerd`` on 127.0.0.1 that speaks only TLS with client certificates.

Why a real daemon: what a remote engine changes (TLS, certificates either
side refuses, features that need the host) is only believable against the
real thing. It lives next to the machine's own daemon without touching it:
its own ``--data-root``, ``--exec-root`` (and so its own containerd),
``--pidfile`` and an empty ``--config-file``; a bridge of its own
(``--bridge=<name>``, made here with ``ip link add`` and an address from the
benchmarking range 198.18.0.0/16, deleted when it stops, also when it fails
to start) and ``--iptables=false`` so it adds no firewall rule (our runs and
sessions use ``network_mode=none``). Not ``--bridge=none``: dockerd started
that way deletes the host's ``docker0`` at start-up, which breaks the
machine's own daemon until that restarts. The test images are copied in from
the local daemon (``docker save | docker load``, through the SDK).

Certificates (openssl, EC P-256, valid two days): a CA; a server certificate
for ``127.0.0.1`` and ``localhost``; a client certificate. A second "rogue"
CA signs another client certificate, for the refusal tests. Each client
directory has Docker's ``DOCKER_CERT_PATH`` layout (``ca.pem``, ``cert.pem``,
``key.pem``).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import docker  # type: ignore[import-untyped]
import docker.tls  # type: ignore[import-untyped]

#: How long the daemon may take to answer after it was started.
START_TIMEOUT = 60.0


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _key_and_csr(folder: Path, name: str, subject: str) -> None:
    _openssl(
        "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", f"{name}-key.pem", "-out", f"{name}.csr", "-subj", subject, cwd=folder,
    )  # fmt: skip


def _sign(folder: Path, name: str, ca: str, extensions: str) -> None:
    (folder / f"{name}.ext").write_text(extensions)
    _openssl(
        "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}-key.pem", "-CAcreateserial",
        "-days", "2", "-out", f"{name}-cert.pem", "-extfile", f"{name}.ext", cwd=folder,
    )  # fmt: skip


def _ca(folder: Path, name: str) -> None:
    _openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
        "-keyout", f"{name}-key.pem", "-out", f"{name}.pem", "-subj", f"/CN=sandbox-playground test {name}",
        cwd=folder,
    )  # fmt: skip


def _client_dir(folder: Path, name: str, *, ca: str, client: str) -> Path:
    """A ``DOCKER_CERT_PATH`` folder: ``ca.pem`` (to check the daemon) and a client certificate."""
    target = folder / name
    target.mkdir()
    shutil.copy(folder / f"{ca}.pem", target / "ca.pem")
    shutil.copy(folder / f"{client}-cert.pem", target / "cert.pem")
    shutil.copy(folder / f"{client}-key.pem", target / "key.pem")
    return target


@dataclass(frozen=True, slots=True, kw_only=True)
class Certificates:
    """The server's files and three client folders: good, rogue client cert, rogue CA for the daemon."""

    ca: Path
    server_cert: Path
    server_key: Path
    good: Path
    rogue_client: Path
    rogue_ca: Path


def make_certificates(folder: Path) -> Certificates:
    """Generate every certificate the remote tests need in ``folder`` (a few hundred ms)."""
    _ca(folder, "ca")
    _ca(folder, "rogue")
    _key_and_csr(folder, "server", "/CN=localhost")
    _sign(folder, "server", "ca", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    for name, ca in (("client", "ca"), ("intruder", "rogue")):
        _key_and_csr(folder, name, f"/CN={name}")
        _sign(folder, name, ca, "extendedKeyUsage=clientAuth\n")
    return Certificates(
        ca=folder / "ca.pem",
        server_cert=folder / "server-cert.pem",
        server_key=folder / "server-key.pem",
        good=_client_dir(folder, "good", ca="ca", client="client"),
        rogue_client=_client_dir(folder, "rogue-client", ca="ca", client="intruder"),
        rogue_ca=_client_dir(folder, "rogue-ca", ca="rogue", client="client"),
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def client(url: str, cert_dir: Path, timeout: float = 30.0) -> docker.APIClient:
    tls = docker.tls.TLSConfig(
        client_cert=(str(cert_dir / "cert.pem"), str(cert_dir / "key.pem")), ca_cert=str(cert_dir / "ca.pem"),
        verify=True,
    )  # fmt: skip
    api = docker.APIClient(base_url=url, tls=tls, timeout=timeout, version="1.41")
    api.trust_env = False  # else REQUESTS_CA_BUNDLE replaces our CA (see backends.docker.engine)
    return api


class TLSDaemon:
    """The running daemon: ``url`` (``tcp://127.0.0.1:PORT``), ``certs``; ``stop()`` ends it and removes its files."""

    def __init__(
        self, root: Path, certs: Certificates, process: subprocess.Popen[bytes], port: int, bridge: str
    ) -> None:
        self.root = root
        self.certs = certs
        self.port = port
        self.bridge = bridge
        self.url = f"tcp://127.0.0.1:{port}"
        self._process = process

    @property
    def log(self) -> str:
        return (self.root / "dockerd.log").read_text(errors="replace")[-3000:]

    def api(self) -> docker.APIClient:
        return client(self.url, self.certs.good)

    def load_images(self, source_url: str, images: Iterable[str]) -> None:
        """Copy ``images`` from the daemon at ``source_url`` (a local socket) into this one."""
        source = docker.APIClient(base_url=source_url, timeout=300, version="1.41")
        target = client(self.url, self.certs.good, timeout=300)
        try:
            for image in images:
                target.load_image(source.get_image(image))
                target.inspect_image(image)
        finally:
            source.close()
            target.close()

    def stop(self) -> None:
        """SIGTERM (dockerd stops its containers and containerd), SIGKILL after 30 s; then remove the files."""
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=10)
        subprocess.run(["umount", "-R", "-l", str(self.root / "data")], capture_output=True, check=False)
        shutil.rmtree(self.root, ignore_errors=True)
        delete_bridge(self.bridge)


def _used_subnets() -> str:
    return subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True, check=True,
                          timeout=10).stdout  # fmt: skip


def make_bridge() -> str:
    """Create a bridge only the private daemon uses, with a free /24 of 198.18.0.0/16; return its name.

    The name is random (``pgtlsd`` and 8 hex digits, under the kernel's 15 characters) so
    two daemons, of one test run or of two, do not collide.
    """
    name = f"pgtlsd{secrets.token_hex(4)}"
    used = _used_subnets()
    third = next((n for n in range(1, 255) if f" 198.18.{n}." not in used), None)
    if third is None:
        raise RuntimeError("no free /24 in 198.18.0.0/16 for the private daemon's bridge")
    subprocess.run(["ip", "link", "add", name, "type", "bridge"], check=True, capture_output=True, timeout=10)
    try:
        subprocess.run(["ip", "addr", "add", f"198.18.{third}.1/24", "dev", name], check=True, capture_output=True,
                       timeout=10)  # fmt: skip
        subprocess.run(["ip", "link", "set", name, "up"], check=True, capture_output=True, timeout=10)
    except BaseException:
        delete_bridge(name)
        raise
    return name


def delete_bridge(name: str) -> None:
    """Remove the private bridge if it is still there (idempotent)."""
    subprocess.run(["ip", "link", "delete", name, "type", "bridge"], capture_output=True, check=False, timeout=10)


def start_tls_daemon() -> TLSDaemon:
    """Generate certificates and start the daemon; return once it answers over TLS.

    Raises:
        RuntimeError: it exited or did not answer within ``START_TIMEOUT`` (with its log).
    """
    root = Path(tempfile.mkdtemp(prefix="pg-tlsd-"))
    certs_dir = root / "certs"
    certs_dir.mkdir()
    certs = make_certificates(certs_dir)
    (root / "daemon.json").write_text("{}\n")
    port = free_port()
    try:
        bridge = make_bridge()
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    argv = [
        shutil.which("dockerd") or "dockerd",
        "--data-root", str(root / "data"), "--exec-root", str(root / "exec"), "--pidfile", str(root / "dockerd.pid"),
        "--config-file", str(root / "daemon.json"), "--host", f"tcp://127.0.0.1:{port}",
        "--tlsverify", "--tlscacert", str(certs.ca), "--tlscert", str(certs.server_cert),
        "--tlskey", str(certs.server_key), f"--bridge={bridge}", "--iptables=false", "--ip-masq=false",
    ]  # fmt: skip
    try:
        with (root / "dockerd.log").open("wb") as log:
            process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True, env={**os.environ, "DOCKER_HOST": ""})  # fmt: skip
    except BaseException:
        delete_bridge(bridge)
        shutil.rmtree(root, ignore_errors=True)
        raise
    daemon = TLSDaemon(root, certs, process, port, bridge)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if process.poll() is not None:
            log_text = daemon.log
            daemon.stop()
            raise RuntimeError(f"the TLS dockerd exited with {process.returncode}:\n{log_text}")
        try:
            api = daemon.api()
            try:
                api.ping()
                return daemon
            finally:
                api.close()
        except Exception:
            if time.monotonic() > deadline:
                log_text = daemon.log
                daemon.stop()
                raise RuntimeError(f"the TLS dockerd did not answer in {START_TIMEOUT:g}s:\n{log_text}") from None
            time.sleep(0.2)
