"""Daemons reached over ``tcp://``: TLS the way Docker does it, plain TCP only when asked for, and what
cannot work on another machine.

Why plain TCP is refused: a daemon's API is root on its host. Without TLS
anyone who can reach the port (or sit on the path) can start a privileged
container there, and can read or change every program, input and output
we send. So ``DOCKER_HOST=tcp://...`` (or ``http://``) is used:

* with ``DOCKER_TLS_VERIFY`` set (any non-empty value, as the Docker CLI
  reads it): TLS, the daemon's certificate checked against
  ``$DOCKER_CERT_PATH/ca.pem`` (default ``~/.docker``) and its host name or
  address, and our ``cert.pem``/``key.pem`` presented;
* without it, only when ``PLAYGROUND_DOCKER_ALLOW_INSECURE_TCP=1``
  (``INSECURE_ENV``): plain HTTP, or with ``DOCKER_TLS`` set, TLS that does
  not check the daemon. Otherwise the endpoint is refused before any
  connection is made, with the reason.

``https://`` counts as ``tcp://`` with TLS. ``ssh://`` is not supported
(the docker SDK would need paramiko): tunnel the socket instead.

What stays local (``remote_refusal``): a served guest is reached by entering
its network namespace, and a network-policy run's egress proxy listens on
the guest network's gateway, firewalled by ``iptables`` on *this* machine.
Neither exists when the containers run elsewhere, so both are refused for
a remote daemon, whatever ``PLAYGROUND_DOCKER_ALLOW_HOST_REACH`` says.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from backends.docker.engine import TLSFiles

#: Set to ``1`` to talk to a ``tcp://`` daemon without a verified TLS connection.
INSECURE_ENV: Final = "PLAYGROUND_DOCKER_ALLOW_INSECURE_TCP"
#: Schemes of a daemon reached over the network.
NETWORK_SCHEMES: Final = ("tcp://", "http://", "https://")


class RemoteRefused(Exception):
    """The endpoint may not be used as configured; the message says why and what to set."""


def is_network_url(url: str) -> bool:
    """Whether ``url`` names a daemon over TCP (as opposed to a local socket)."""
    return url.lower().startswith(NETWORK_SCHEMES)


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes")


def insecure_allowed(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the user accepted an unverified connection to a ``tcp://`` daemon (``INSECURE_ENV=1``)."""
    env = os.environ if environ is None else environ
    return _truthy(env.get(INSECURE_ENV))


def cert_dir(environ: Mapping[str, str]) -> Path:
    """``DOCKER_CERT_PATH``, else ``~/.docker`` (the Docker CLI's default)."""
    given = environ.get("DOCKER_CERT_PATH", "").strip()
    return Path(given).expanduser() if given else Path("~/.docker").expanduser()


def tls_for(url: str, environ: Mapping[str, str] | None = None) -> TLSFiles | None:
    """The TLS to use for the daemon at ``url`` (None: a local socket, or plain TCP the user allowed).

    Raises:
        RemoteRefused: plain TCP without the opt-in, or a certificate file is missing.
    """
    env = os.environ if environ is None else environ
    if not is_network_url(url):
        return None
    verify = bool(env.get("DOCKER_TLS_VERIFY", ""))
    unverified = bool(env.get("DOCKER_TLS", "")) or url.lower().startswith("https://")
    if not verify and not insecure_allowed(env):
        raise RemoteRefused(
            f"{url} would be plain TCP: unencrypted, and anyone who can reach the port controls that daemon "
            f"and every run. Use TLS (DOCKER_TLS_VERIFY=1 with ca.pem, cert.pem and key.pem in DOCKER_CERT_PATH), "
            f"or set {INSECURE_ENV}=1 to accept that"
        )
    if not verify and not unverified:
        return None
    folder = cert_dir(env)
    files = TLSFiles(
        ca=str(folder / "ca.pem"), cert=str(folder / "cert.pem"), key=str(folder / "key.pem"), verify=verify
    )
    needed = (files.ca, files.cert, files.key) if verify else (files.cert, files.key)
    missing = [Path(name).name for name in needed if not os.path.isfile(name)]
    if missing:
        raise RemoteRefused(f"TLS for {url} needs {', '.join(missing)} in {folder} (DOCKER_CERT_PATH)")
    return files


def remote_refusal(url: str, feature: str) -> str | None:
    """Why ``feature`` ("serving", "a network policy") cannot use the daemon at ``url``; None when it is local."""
    if not is_network_url(url):
        return None
    return (
        f"{feature} needs the daemon on this machine, and {url} is remote: the egress proxy, the host "
        "firewall and the way into a served guest's network namespace all live on this machine, not next "
        "to its containers"
    )
