"""From a ``Request`` to a one-shot container that ran it: inputs, create arguments, create, run, remove.

Why its own module: the backend decides *whether* and *where* a run happens
(daemon, image, network); this module turns one request into the container's
inputs (the archive the wrapper unpacks, the wrapper's argv with the guest's
environment, ``oneshot_profile`` plus the packages' mount and the run's
network) and owns the container for the run's life: it is removed in
``finally``, whatever happened. ``oneshot.run_container`` does what happens
between start and exit.
"""

from __future__ import annotations

import contextlib
import logging
import secrets

from backends.docker import packages, parked
from backends.docker.control import RunControl
from backends.docker.egress import NetAccess
from backends.docker.engine import Engine, EngineError
from backends.docker.oneshot import run_container
from backends.docker.pool import WarmPool
from backends.docker.profile import EngineKind, on_network, oneshot_profile
from backends.docker.spawnwatch import SpawnWatch
from backends.docker.usage import check_inputs_fit
from backends.docker.wrapper import MARK_ENV, expand, for_request, input_archive, main_path, wrapper_argv
from playground.core import BackendUnavailable, LimitExceeded, Outcome, Request

log = logging.getLogger(__name__)


def execute_oneshot(
    engine: Engine,
    kind: EngineKind,
    image: str,
    request: Request,
    ctl: RunControl,
    *,
    net: NetAccess | None,
    watch: SpawnWatch | None,
    record_network: bool,
    pool: WarmPool | None = None,
) -> Outcome:
    """Run ``request`` in a container of ``image`` (on ``net``'s network when given) and remove it.

    ``watch`` records the commands the guest spawns; ``record_network``: the
    host records a network-less run's attempts to use one (``sinkhole``).
    ``pool``: a run without a network or packages takes a prepared container
    made with exactly its create arguments when there is one (``pool``),
    else a fresh one; once it completed, the pool keeps one ready like it.

    Raises:
        BackendUnavailable: the daemon refused the container or failed mid-run.
        LimitExceeded: as ``run_container``.
    """
    assert request.pack.docker is not None
    spec = for_request(request.pack.docker, request.spec)
    check_inputs_fit(request)
    mark = secrets.token_hex(16)
    live = request.input is not None  # stdin is forwarded while the program runs (see keyboard)
    archive = input_archive(request.vfs, spec, request.spec.code_bytes, b"" if live else request.stdin)
    kwargs = oneshot_profile(request.limits, spec, kind)
    if (added := packages.for_run(request.vfs)) is not None:  # Spec.packages: a tmpfs of their own
        archive = packages.members(added) + archive
        kwargs = packages.with_mount(kwargs, added)
    env = dict(request.spec.env)
    if net is not None:
        kwargs = on_network(kwargs, net.network)
        env.update(net.env)
    # Only a run whose container needs nothing beyond the create arguments may be pooled.
    language = request.pack.name
    poolable = pool is not None and net is None and added is None
    prepared = pool.take(language, image, kwargs, ctl) if pool is not None and poolable else None
    hole = None
    if prepared is not None:
        container, mark = prepared.container, prepared.mark
        if prepared.hole is not None and prepared.recorder is not None and record_network:
            hole = prepared.hole
            prepared.recorder.begin(request.attempts)
        elif prepared.hole is not None:
            prepared.hole.close()
        archive = parked.payload(spec, request.spec.args, env, archive, live_stdin=live)
    else:
        argv = wrapper_argv(spec, request.spec.args, env, archive_size=len(archive), live_stdin=live)
        try:
            # The guest's environment travels in argv; the container's holds only the marker (see wrapper).
            container = engine.create(image, argv, kwargs, {MARK_ENV: mark})
        except EngineError as exc:
            raise BackendUnavailable(f"docker: {exc}") from exc
    program = expand(spec.cmd, main_path(spec), request.spec.args)
    completed = False
    try:
        with watch.track(container, program, request.attempts) if watch else contextlib.nullcontext():
            outcome = run_container(
                engine, container, image=image, archive=archive, mark=mark, request=request, ctl=ctl,
                record_network=record_network, parked=prepared.attachment if prepared else None, hole=hole,
            )  # fmt: skip
        completed = True
        return outcome
    except LimitExceeded:
        completed = True
        raise
    except EngineError as exc:
        raise BackendUnavailable(f"docker: the run failed: {exc}") from exc
    finally:
        try:
            engine.remove(container)
        except EngineError:
            log.warning("could not remove container %s", container[:12], exc_info=True)
        if completed and pool is not None and poolable:
            pool.warm(language, image, kwargs)
