"""A run's way out when ``Spec.net`` is a ``NetPolicy``: an internal network plus the host's egress proxy.

The run's container joins a fresh ``internal`` network (``networks``): the
host forwards nothing from it anywhere. The only thing it can reach is
``playground.net``'s egress proxy, bound on that network's gateway (the
host's address on the bridge), which enforces the policy, resolves names
itself with SSRF guards and logs every request: the network's firewall chain
(``hostfirewall``) lets TCP to that one port through and refuses everything
else addressed to the host. The guest learns the proxy from
``HTTP_PROXY``/``HTTPS_PROXY`` (and lower-case, ``ALL_PROXY``), whose URL
carries a per-run random token: should the host not be firewalled (no root,
and ``PLAYGROUND_DOCKER_ALLOW_HOST_REACH=1``), the gateway addresses of all
our networks are host addresses, so another guest could reach this proxy
too, but without the token it gets 407.

Clients that ignore proxy variables get nothing (no route leaves the host):
curl, wget, Python's urllib/requests/pip honour them; Node 18's ``http`` and
``fetch`` do not (Node 24 has ``NODE_USE_ENV_PROXY=1``, which is set too).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from backends.docker.engine import Engine, EngineError
from backends.docker.hostfirewall import HostFirewall
from backends.docker.networks import create_guest_network, isolate_from_host, remove_guest_network
from backends.docker.report import record_net_log
from playground.core import AttemptLog, BackendUnavailable, LimitExceeded, NetLogEntry, NetPolicy, Outcome
from playground.net import Connector, EgressProxy, Resolver, start_egress_proxy

T = TypeVar("T")

#: The user name in the proxy URL (the proxy checks only the password).
PROXY_USER = "sandbox"


@dataclass(frozen=True, slots=True, kw_only=True)
class NetAccess:
    """What the container needs to use its egress: the network to join and the proxy variables."""

    network: str
    env: Mapping[str, str] = field(default_factory=dict)


def proxy_env(host: str, port: int, token: str) -> dict[str, str]:
    """The proxy variables for a guest (upper and lower case: tools disagree on which they read)."""
    url = f"http://{PROXY_USER}:{token}@{host}:{port}"
    env = {}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = url
    env["NO_PROXY"] = env["no_proxy"] = ""
    env["NODE_USE_ENV_PROXY"] = "1"
    return env


@dataclass(slots=True)
class EgressLog:
    """Filled when the egress ends: every request the guest made, allowed or refused."""

    entries: tuple[NetLogEntry, ...] = ()


async def _finish_in_thread(job: Callable[[], T]) -> tuple[T, bool]:
    """Run ``job`` in a thread to its end even if we are cancelled meanwhile; return its result and
    whether we were cancelled (then the caller cleans up and re-raises ``CancelledError``).

    So a network is never created, nor a firewall chain installed, behind the cleanup's back.
    """
    future = asyncio.ensure_future(asyncio.to_thread(job))
    try:
        return await asyncio.shield(future), False
    except asyncio.CancelledError:
        while not future.done():
            with contextlib.suppress(asyncio.CancelledError):  # re-raised by the caller
                await asyncio.shield(future)
        return future.result(), True


@asynccontextmanager
async def guest_egress(
    engine: Engine,
    policy: NetPolicy,
    *,
    resolver: Resolver | None,
    connector: Connector | None,
    firewall: HostFirewall | None = None,
) -> AsyncIterator[tuple[NetAccess, EgressLog]]:
    """Create the network, start the proxy on its gateway, shield the host from the network except
    for that proxy's port (with ``firewall``); on exit stop the proxy, then remove the network and its chain.

    ``EgressLog.entries`` is final once the block has exited.
    """
    network, cancelled = await _finish_in_thread(lambda: create_guest_network(engine, "run", firewall=firewall))
    result = EgressLog()
    try:
        if cancelled:
            raise asyncio.CancelledError()
        token = secrets.token_urlsafe(24)
        proxy: EgressProxy = await start_egress_proxy(
            policy, resolver=resolver, connector=connector, bind=network.gateway, proxy_token=token
        )
        try:
            host, port = proxy.address
            _, cancelled = await _finish_in_thread(lambda: isolate_from_host(network, proxy_port=port))
            if cancelled:
                raise asyncio.CancelledError()
            yield NetAccess(network=network.name, env=proxy_env(host, port, token)), result
        finally:
            await proxy.stop()
            result.entries = tuple(proxy.log)
    finally:
        await asyncio.to_thread(remove_guest_network, engine, network)


async def run_with_egress(
    engine: Engine,
    policy: NetPolicy,
    execute: Callable[[NetAccess], Awaitable[Outcome]],
    attempts: AttemptLog,
    *,
    resolver: Resolver | None,
    connector: Connector | None,
    firewall: HostFirewall | None,
) -> Outcome:
    """``execute`` a run inside ``guest_egress``; every request lands in ``Outcome.net_log`` and ``attempts``,
    also on a limit error's outcome.

    Raises:
        BackendUnavailable: the network or the proxy could not be set up.
        LimitExceeded: as ``execute``, with the net log on its outcome.
    """
    failed: LimitExceeded | None = None
    try:
        async with guest_egress(engine, policy, resolver=resolver, connector=connector, firewall=firewall) as (
            access,
            egress,
        ):
            try:
                outcome = await execute(access)
            except LimitExceeded as exc:
                failed = exc
    except EngineError as exc:
        raise BackendUnavailable(f"docker: could not set up the run's network: {exc}") from exc
    record_net_log(egress.entries, attempts)
    if failed is not None:
        failed.outcome = dataclasses.replace(failed.outcome or Outcome(exit_code=-1), net_log=egress.entries)
        raise failed
    return dataclasses.replace(outcome, net_log=egress.entries)
