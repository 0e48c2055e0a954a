import pytest

from playground.core import (
    Artifact,
    DockerSpec,
    InvalidPack,
    InvalidSpec,
    NetPolicy,
    Pack,
    Spec,
    WasmSpec,
    validate_packs,
)

SHA = "a" * 64


def test_spec_is_frozen_and_copies_its_inputs() -> None:
    env = {"A": "1"}
    files = {"x.txt": b"x"}
    spec = Spec(lang="py", code="print(1)", env=env, files=files, args=["a"])
    env["B"] = "2"
    files["y"] = b"y"
    assert dict(spec.env) == {"A": "1"}
    assert dict(spec.files) == {"x.txt": b"x"}
    assert spec.args == ("a",)
    with pytest.raises(AttributeError):
        spec.code = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        spec.env["C"] = "3"  # type: ignore[index]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"lang": ""},
        {"lang": "  "},
        {"code": 5},
        {"args": "not-a-list"},
        {"args": ["ok", 3]},
        {"args": ["nul\x00"]},
        {"env": {"": "x"}},
        {"env": {"A=B": "x"}},
        {"env": {"A": 1}},
        {"env": {"A": "nul\x00"}},
        {"stdin": 5},
        {"files": {"../etc/passwd": b"x"}},
        {"files": {"/abs": b"x"}},
        {"files": {"C:/x": b"x"}},
        {"files": {"ok": "not bytes"}},
        {"limits": {"memory": 1}},
        {"net": {"allow_hosts": ["x"]}},
    ],
)
def test_spec_rejects(kwargs: dict[str, object]) -> None:
    base: dict[str, object] = {"lang": "py", "code": "x"}
    base.update(kwargs)
    with pytest.raises(InvalidSpec):
        Spec(**base)  # type: ignore[arg-type]


def test_stdin_and_code_bytes() -> None:
    assert Spec(lang="x", code="é", stdin="in").stdin_bytes == b"in"
    assert Spec(lang="x", code=b"\x00asm").code_bytes == b"\x00asm"
    assert Spec(lang="x", code="é").code_bytes == "é".encode()
    assert Spec(lang="x", code="").stdin_bytes == b""


@pytest.mark.parametrize(
    "kwargs",
    [
        {"allow_hosts": ["*"]},
        {"allow_hosts": ["*.*.com"]},
        {"allow_hosts": ["a/b"]},
        {"allow_hosts": ["host:80"]},
        {"allow_ports": [0]},
        {"allow_ports": [70000]},
        {"allow_ports": [True]},
        {"max_requests": -1},
        {"max_bytes": 1.5},
    ],
)
def test_net_policy_rejects(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidSpec):
        NetPolicy(**kwargs)  # type: ignore[arg-type]


def test_net_policy_normalises_hosts() -> None:
    assert NetPolicy(allow_hosts=["Example.TEST.", "*.api.test"]).allow_hosts == ("example.test", "*.api.test")


def wasm_pack(name: str, *aliases: str, ext: tuple[str, ...] = ()) -> Pack:
    return Pack(name=name, aliases=aliases, extensions=ext, wasm=WasmSpec(module=None))


def test_pack_validate() -> None:
    wasm_pack("python", "py", ext=(".py",)).validate()
    Pack(name="bash", docker=DockerSpec(image="debian:bookworm", cmd=("bash", "{main}"))).validate()


@pytest.mark.parametrize(
    "pack",
    [
        Pack(name="nobackend"),
        wasm_pack("Python"),
        wasm_pack("py thon"),
        wasm_pack("python", "Py"),
        wasm_pack("python", "python"),
        wasm_pack("python", ext=("py",)),
        wasm_pack("python", ext=(".PY",)),
        wasm_pack(""),
    ],
)
def test_pack_validate_rejects(pack: Pack) -> None:
    with pytest.raises(InvalidPack):
        pack.validate()


def test_aliases_unique_across_packs() -> None:
    with pytest.raises(InvalidPack, match="'js'"):
        validate_packs([wasm_pack("javascript", "js"), wasm_pack("node", "js")])
    with pytest.raises(InvalidPack, match="extension"):
        validate_packs([wasm_pack("javascript", ext=(".js",)), wasm_pack("node", ext=(".js",))])
    with pytest.raises(InvalidPack):
        validate_packs([wasm_pack("lua"), wasm_pack("lua")])


@pytest.mark.parametrize(
    "kwargs",
    [{"name": "a/b", "sha256": SHA}, {"name": "..", "sha256": SHA}, {"name": "x", "sha256": "abc"},
     {"name": "x", "sha256": SHA.upper()}, {"name": "x", "sha256": SHA, "size": -1}],
)
def test_artifact_rejects(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidPack):
        Artifact(**kwargs)  # type: ignore[arg-type]


def test_docker_spec_needs_image_and_cmd() -> None:
    with pytest.raises(InvalidPack):
        DockerSpec(image="", cmd=("x",))
    with pytest.raises(InvalidPack):
        DockerSpec(image="img", cmd=())
