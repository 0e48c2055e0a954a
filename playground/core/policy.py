"""Routing policy: which backends may run code, most preferred first.

Only backends named in ``order`` are ever used. That is the whole "no silent
downgrade" rule: when none of them can run a language the run fails with
``BackendUnavailable`` instead of falling back to something weaker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Policy:
    order: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "order", tuple(self.order))
        if not self.order:
            raise ValueError("a policy needs at least one backend name")
        if len(set(self.order)) != len(self.order):
            raise ValueError(f"a policy names a backend twice: {self.order}")

    def __str__(self) -> str:
        known = {PREFER_WASM.order: "PREFER_WASM", WASM_ONLY.order: "WASM_ONLY", DOCKER_ONLY.order: "DOCKER_ONLY"}
        return known.get(self.order, "Policy(" + " > ".join(self.order) + ")")


#: Wasm when the pack has a Wasm runtime, else Docker. The default.
PREFER_WASM: Final = Policy(("wasm", "docker"))
#: Never anything but Wasm.
WASM_ONLY: Final = Policy(("wasm",))
#: Never anything but Docker.
DOCKER_ONLY: Final = Policy(("docker",))
