"""Listing containers through Podman 4.3's race (``engine.LIST_RETRIES``), against the real engine.

Podman before 4.4 fails a whole listing when a container's process exits
while it reads that process's ``/proc/PID/cgroup`` (podman#16383). The race
itself is rare, so the engine's answer is replaced, for the first calls
only, by the error Podman gives (the SDK's own ``APIError`` from a 500
response); every other call goes to the real engine.
"""

from __future__ import annotations

from typing import Any

import docker.errors  # type: ignore[import-untyped]
import pytest
import requests

from backends.docker import engine as engine_module
from backends.docker.engine import Engine, EngineError

RACE = "read /proc/27575/cgroup: no such process"


def server_error(explanation: str) -> docker.errors.APIError:
    response = requests.Response()
    response.status_code = 500
    response.url = "http+docker://localhost/v1.32/containers/json"
    return docker.errors.APIError("500 Server Error", response=response, explanation=explanation)


class FailingFirst:
    """The engine's API client, whose first ``failures`` container listings fail with ``explanation``."""

    def __init__(self, api: Any, failures: int, explanation: str) -> None:
        self._api = api
        self.failures = failures
        self.explanation = explanation
        self.calls = 0

    def containers(self, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls <= self.failures:
            raise server_error(self.explanation)
        return self._api.containers(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._api, name)


def test_a_listing_that_meets_the_race_is_asked_again_and_gives_the_real_answer(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = engine.containers()
    api = FailingFirst(engine._api, engine_module.LIST_RETRIES, RACE)  # type: ignore[attr-defined]
    monkeypatch.setattr(engine, "_api", api)
    assert engine.containers() == expected
    assert api.calls == engine_module.LIST_RETRIES + 1


def test_a_race_that_never_ends_is_an_engine_error_after_the_retries(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = FailingFirst(engine._api, engine_module.LIST_RETRIES + 1, RACE)  # type: ignore[attr-defined]
    monkeypatch.setattr(engine, "_api", api)
    with pytest.raises(EngineError, match="no such process"):
        engine.containers()
    assert api.calls == engine_module.LIST_RETRIES + 1


@pytest.mark.parametrize("explanation", [
    "read /proc/27575/status: permission denied",
    "no such process",
    "database is locked",
])  # fmt: skip
def test_any_other_failure_of_a_listing_is_raised_at_once(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, explanation: str
) -> None:
    api = FailingFirst(engine._api, 1, explanation)  # type: ignore[attr-defined]
    monkeypatch.setattr(engine, "_api", api)
    with pytest.raises(EngineError, match=explanation):
        engine.containers()
    assert api.calls == 1
