"""What a pack declares per tier is all there is: drivers, capabilities and image recipes agree (issue #19).

``Pack.caps`` is derived from the specs, so these tests check the other
direction too: a driver a pack names exists on that tier (its table entry,
its resource file), every driver resource belongs to some pack, and each
backend's own availability answer agrees with what the pack says.
"""

from __future__ import annotations

import pytest

from backends.docker.drivers import driver_for, drivers_dir, no_driver_reason
from backends.wasm.serve import bridge_unavailable_reason
from backends.wasm.session import DRIVER_DIR, driver_unavailable_reason
from playground.cli.images_cmd import image_recipes
from playground.core import Capabilities, DockerDriver, DockerSpec, InvalidPack, Pack, WasmDriver, WasmSpec
from playground.packs import ALL_PACKS, bash, c, go, javascript, lua, node, python

PACK_IDS = [p.name for p in ALL_PACKS]


def _wasm_sessions(pack: Pack) -> bool:
    return pack.wasm is not None and pack.wasm.module is not None and pack.wasm.session is not None


@pytest.mark.parametrize("pack", ALL_PACKS, ids=PACK_IDS)
def test_sessions_are_declared_where_a_driver_is_and_only_there(pack: Pack) -> None:
    docker_driver = driver_for(pack)
    assert pack.caps.sessions == (_wasm_sessions(pack) or docker_driver is not None)
    if pack.docker is not None:
        assert (no_driver_reason(pack) is None) == (docker_driver is not None), no_driver_reason(pack)
    if docker_driver is not None:
        assert (drivers_dir() / docker_driver.resource).is_file()
    if pack.wasm is not None and pack.wasm.session is not None and pack.wasm.session.script:
        assert (DRIVER_DIR / pack.wasm.session.script).is_file()
    if pack.wasm is not None and pack.wasm.module is not None:
        sessions = driver_unavailable_reason(pack) is None
        # A transform (TypeScript) names no driver: sessions would skip it.
        assert sessions == _wasm_sessions(pack), driver_unavailable_reason(pack)


@pytest.mark.parametrize("pack", ALL_PACKS, ids=PACK_IDS)
def test_serving_a_handler_is_declared_where_the_bridge_is(pack: Pack) -> None:
    bridged = pack.wasm is not None and bridge_unavailable_reason(pack) is None
    assert pack.caps.serve_handler == bridged


@pytest.mark.parametrize("pack", ALL_PACKS, ids=PACK_IDS)
def test_compiles_and_packages_follow_the_specs(pack: Pack) -> None:
    assert pack.caps.compiles == (pack.docker is not None and bool(pack.docker.compile))
    assert pack.caps.packages == pack.packages


def test_the_shipped_capabilities() -> None:
    by_name = {p.name: p.caps for p in ALL_PACKS}
    assert by_name["python"] == Capabilities(sessions=True, packages=True)
    assert by_name["javascript"] == Capabilities(sessions=True, serve_handler=True)
    assert by_name["lua"].sessions and by_name["bash"].sessions and by_name["node"].sessions
    assert not by_name["typescript"].sessions and not by_name["wasm"].sessions
    assert {name for name, caps in by_name.items() if caps.compiles} == {"c", "go", "java", "rust"}


def test_every_driver_resource_belongs_to_a_pack() -> None:
    used = {d.resource for d in map(driver_for, ALL_PACKS) if d is not None}
    used |= {p.wasm.session.script for p in ALL_PACKS if p.wasm is not None and p.wasm.session is not None}
    shipped = {f.name for f in drivers_dir().iterdir() if f.is_file()}
    assert shipped == used - {""}


@pytest.mark.parametrize("pack", [p for p in ALL_PACKS if p.docker is not None], ids=lambda p: p.name)
def test_every_docker_pack_has_a_local_image_recipe(pack: Pack) -> None:
    assert pack.docker is not None and pack.docker.image_packages


def test_image_recipes_come_from_the_packs() -> None:
    assert image_recipes(ALL_PACKS, ["c", "golang", "bash"]) == [
        "c=gcc,libc6-dev", "go=golang-go", "bash=bash,coreutils"
    ]  # fmt: skip
    assert image_recipes(ALL_PACKS, ["busybox=busybox-static"]) == ["busybox=busybox-static"]
    with pytest.raises(ValueError, match=r"no local image recipe for 'lua'.*packs with one: bash c go"):
        image_recipes(ALL_PACKS, ["lua"])
    with pytest.raises(ValueError, match="'cobol'"):
        image_recipes(ALL_PACKS, ["cobol"])


def test_a_docker_driver_is_checked() -> None:
    ok = DockerDriver(resource="r.sh", program=("sh",), fifos=("cmd",), interrupt=("kill", "-INT", "-{pgid}"))
    assert ok.filename == "driver.sh" and ok.interrupt_argv(42) == ["kill", "-INT", "-42"]
    for bad in ({"resource": "../r.sh"}, {"program": ()}, {"interrupt": ()}, {"fifos": ("../x",)}):
        fields = {"resource": "r.sh", "program": ("sh",), "fifos": ("cmd",), "interrupt": ("kill",)} | bad
        with pytest.raises(InvalidPack):
            DockerDriver(**fields)  # type: ignore[arg-type]


def test_image_packages_must_be_debian_names() -> None:
    with pytest.raises(InvalidPack, match="Debian package"):
        DockerSpec(image="x", cmd=("x",), image_packages=("gcc; rm -rf /",))
    assert DockerSpec(image="x", cmd=("x",), image_packages=("g++-12", "libc6-dev")).image_packages


def test_capabilities_cannot_be_declared_beside_the_specs() -> None:
    with pytest.raises(TypeError):
        Pack(name="liar", wasm=WasmSpec(module=None), caps=Capabilities(sessions=True))  # type: ignore[call-arg]
    # A driver without a runtime to keep alive is no session.
    assert not Pack(name="x", wasm=WasmSpec(module=None, session=python.REPL)).caps.sessions


def test_the_c_pack_is_only_data() -> None:
    """The C pack added nothing outside its module, its example and its recipe: the rest is derived."""
    assert c.PACK.docker is not None and c.PACK.limits is not None
    assert c.PACK.caps == Capabilities(compiles=True) == go.PACK.caps
    assert c.PACK.docker.image_packages == ("gcc", "libc6-dev")
    assert driver_for(c.PACK) is None and no_driver_reason(c.PACK) == "no REPL driver for c"
    assert driver_for(bash.PACK) is not None and driver_for(node.PACK) is not None
    assert driver_for(python.PACK) is None  # Python's sessions are on the Wasm tier


def test_a_wasm_driver_is_checked() -> None:
    assert (python.REPL.interrupt, lua.REPL.interrupt, javascript.REPL.interrupt) == ("signal", "poll", "poll")
    with pytest.raises(InvalidPack, match="plain file name"):
        WasmDriver(args=("{driver}",), script="../repl.py")
    with pytest.raises(InvalidPack, match="interrupt"):
        WasmDriver(args=("--repl",), interrupt="kill")  # type: ignore[arg-type]
    with pytest.raises(InvalidPack, match="takes the script"):
        WasmDriver(args=("-c",), script="repl.py")


def test_a_transform_goes_with_no_session_or_bridge() -> None:
    """Sessions and the serve bridge take code as it is: a pack cannot claim them for a transformed language."""
    with pytest.raises(InvalidPack, match="typescript transform"):
        WasmSpec(module=None, transform="typescript", session=javascript.REPL)
    with pytest.raises(InvalidPack, match="typescript transform"):
        WasmSpec(module=None, transform="typescript", serve_args=("--serve", "{main}"))
