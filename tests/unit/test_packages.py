"""Packages added to a run (``Spec.packages``): the parts that need no network, pip or runtime.

Wheels are unpacked into a read-only tree charged to no quota, a wheel
that is not pure Python is refused by its tags, pip's error text is read
for the package it could not find, a runtime's own packages are not
fetched, and the Docker tier's tar members and tmpfs are shaped right.
The real resolution, downloads, cache and guests are in
``tests/integration/packages``.
"""

from __future__ import annotations

import io
import tarfile
import zipfile

import pytest

from backends.docker import packages as docker_packages
from playground.core import InvalidSpec, Limits, Spec, Unsupported, package_pip, package_plan, package_tree
from playground.core.packages import PackageRefused, PackageRequest, Wheel
from playground.core.variants import variant_pack
from playground.core.vfs import VFS, File, Layout
from playground.packs import javascript, python

WHEEL_META = "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def make_wheel(members: dict[str, bytes], *, wheel_meta: str = WHEEL_META, dist: str = "demo-1.0") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        archive.writestr(f"{dist}.dist-info/WHEEL", wheel_meta)
        archive.writestr(f"{dist}.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
    return buf.getvalue()


def test_a_pure_wheel_unpacks_as_an_installer_would() -> None:
    data = make_wheel({
        "demo/__init__.py": b"X = 1\n", "demo/data/table.txt": b"t\n",
        "demo-1.0.data/purelib/extra.py": b"Y = 2\n", "demo-1.0.data/scripts/tool": b"#!/bin/sh\n",
    })  # fmt: skip
    files = dict(package_tree.unpack_wheel("demo-1.0-py3-none-any.whl", data))
    assert files[("demo", "__init__.py")] == b"X = 1\n"
    assert files[("demo", "data", "table.txt")] == b"t\n"
    assert files[("extra.py",)] == b"Y = 2\n"  # .data/purelib lands at the top
    assert ("demo-1.0.dist-info", "METADATA") in files  # importlib.metadata finds it
    assert not any(parts[0].endswith(".data") for parts in files)  # scripts are left out


@pytest.mark.parametrize(
    ("filename", "meta"),
    [
        ("demo-1.0-cp312-cp312-manylinux_2_17_x86_64.whl", WHEEL_META),
        ("demo-1.0-py3-abi3-any.whl", WHEEL_META),
        ("demo-1.0-py3-none-any.whl", WHEEL_META.replace("Root-Is-Purelib: true", "Root-Is-Purelib: false")),
        ("demo-1.0-py3-none-any.whl", WHEEL_META + "Tag: cp312-cp312-linux_x86_64\n"),
    ],
)
def test_a_wheel_with_native_code_is_refused(filename: str, meta: str) -> None:
    with pytest.raises(Unsupported, match=r"native code|not pure Python"):
        package_tree.unpack_wheel(filename, make_wheel({"demo/__init__.py": b""}, wheel_meta=meta))


@pytest.mark.parametrize("member", ["../evil.py", "/abs.py", "demo/../../x.py", "demo\\x.py", "demo/\x01.py"])
def test_unsafe_member_names_are_refused(member: str) -> None:
    with pytest.raises(InvalidSpec):
        package_tree.unpack_wheel("demo-1.0-py3-none-any.whl", make_wheel({member: b""}))


def test_two_wheels_that_disagree_on_a_path_are_refused() -> None:
    with pytest.raises(InvalidSpec, match="disagree"):
        package_tree.merge([[(("a",), b"file")], [(("a", "b.py"), b"")]])
    assert package_tree.merge([[(("a.py",), b"1")], [(("a.py",), b"2")]]) == ((("a.py",), b"2"),)


def test_the_tree_is_read_only_shared_and_charged_to_no_quota() -> None:
    files = ((("demo", "__init__.py"), b"X = 1\n"), (("demo", "sub", "m.py"), b"Y = 2\n"))
    vfs = VFS(fs_quota=1 << 20, max_files=16)
    used = (vfs.bytes_used, vfs.nodes_used)
    package_tree.place(vfs, files)
    assert (vfs.bytes_used, vfs.nodes_used) == used
    node = vfs.resolve(vfs.root, f"{package_tree.GUEST_SITE}/demo/sub/m.py", follow=True).node
    assert isinstance(node, File) and node.readonly and node.owner is None and node.data == b"Y = 2\n"
    site = vfs.resolve(vfs.root, package_tree.GUEST_SITE, follow=True).node
    assert site is not None and site.readonly
    with pytest.raises(Unsupported, match="standard layout"):
        package_tree.place(VFS(fs_quota=None, max_files=None, layout=Layout.CALLER_ROOT), files)


def test_the_guest_path_comes_after_the_callers_own() -> None:
    assert package_tree.guest_env({}) == {"PYTHONPATH": package_tree.GUEST_SITE}
    assert package_tree.guest_env({"PYTHONPATH": "/work/lib", "A": "b"}) == {
        "PYTHONPATH": f"/work/lib:{package_tree.GUEST_SITE}", "A": "b"}


def test_pip_errors_name_the_package_without_a_usable_wheel() -> None:
    plain = ("ERROR: Could not find a version that satisfies the requirement orjson (from versions: none)\n"
             "ERROR: No matching distribution found for orjson\n")
    found = package_pip._failure(plain)
    assert isinstance(found, package_pip.Unresolvable) and dict(found.missing) == {"orjson": ""}
    dependency = "ERROR: No matching distribution found for numpy!=1.24.0,>=1.20 (from seaborn)\n"
    assert dict(package_pip._failure(dependency).missing) == {"numpy": "seaborn"}  # type: ignore[union-attr]
    conflict = (
        "ERROR: Cannot install seaborn==0.13.2 and seaborn==0.9.0 because these package versions have conflicting "
        "dependencies.\n\nThe conflict is caused by:\n    seaborn 0.13.2 depends on numpy!=1.24.0 and >=1.20\n"
        "    seaborn 0.9.0 depends on matplotlib>=1.4.3\n\nAdditionally, some packages in these conflicts have no "
        "matching distributions available for your environment:\n    matplotlib\n    numpy\n\nTo fix this\n"
    )
    assert dict(package_pip._failure(conflict).missing) == {  # type: ignore[union-attr]
        "matplotlib": "seaborn", "numpy": "seaborn"}
    with pytest.raises(package_pip.PipError, match="could not be reached"):
        package_pip._failure("WARNING: Retrying ... NewConnectionError ...\nERROR: Could not find a version\n")


def test_a_package_the_runtime_has_is_not_fetched() -> None:
    variant = python.PACK.wasm.variants[0]  # type: ignore[union-attr]
    view = python.PACK  # the light runtime: everything is fetched
    request = package_plan.request_for(Spec(lang="python", code="", packages=["b-pkg", "a-pkg==1"]), view, None)
    assert request == PackageRequest(("a-pkg==1", "b-pkg"), "3.12", ())
    spec = Spec(lang="python", code="import numpy", packages=["sympy", "SymPy>=1.2", "scikit-learn", "humanize"])
    request = package_plan.request_for(spec, python.PACK, variant)
    assert request is not None and request.requirements == ("humanize",)
    assert dict(request.provided)["numpy"] == variant.distributions["numpy"]
    assert package_plan.request_for(Spec(lang="python", code="", packages=["numpy"]), python.PACK, variant) is None
    with pytest.raises(PackageRefused, match="has sympy"):
        package_plan.request_for(Spec(lang="python", code="", packages=["sympy==1.0"]), python.PACK, variant)


def test_packages_are_refused_where_they_cannot_apply() -> None:
    with pytest.raises(Unsupported, match="takes no packages"):
        package_plan.request_for(Spec(lang="js", code="", packages=["left-pad"]), javascript.PACK, None)
    spec = Spec(lang="python", code="", packages=["humanize"], root_files={"a.txt": b""})
    with pytest.raises(Unsupported, match="standard layout"):
        package_plan.request_for(spec, python.PACK, None)


def test_a_refusal_says_whether_the_scientific_runtime_has_it() -> None:
    where = package_plan.elsewhere(python.PACK, None)
    assert "scientific runtime has it" in where("pandas") and "import pandas" in where("pandas")
    assert "import sklearn" in where("scikit-learn")
    assert "does not have it" in where("orjson")


def test_the_python_version_comes_from_the_runtime() -> None:
    variant = python.PACK.wasm.variants[0]  # type: ignore[union-attr]
    assert package_plan.python_version(python.PACK) == "3.12"
    assert package_plan.python_version(variant_pack(python.PACK, variant)) == "3.15"


def test_wheel_entries_are_checked() -> None:
    with pytest.raises(ValueError):
        Wheel("x", "1", "../x.whl", "0" * 64)
    with pytest.raises(ValueError):
        Wheel("x", "1", "x-1-py3-none-any.whl", "not-a-hash")


def test_docker_ships_the_tree_read_only_in_a_tmpfs_of_its_own() -> None:
    vfs = VFS(fs_quota=1 << 20, max_files=16)
    package_tree.place(vfs, ((("demo", "__init__.py"), b"X = 1\n"), (("top.py",), b"")))
    found = docker_packages.for_run(vfs)
    assert found is not None and found.dirs == ("demo",)
    members = docker_packages.members(found)
    assert len(members) % 512 == 0 and not members.endswith(bytes(1024))  # no end-of-archive: more follows
    with tarfile.open(fileobj=io.BytesIO(members + bytes(1024))) as archive:
        entries = [(m.name, m.mode, m.isdir()) for m in archive.getmembers()]
    site = package_tree.GUEST_SITE.lstrip("/")
    assert entries == [
        (f"{site}/demo", 0o755, True), (f"{site}/demo/__init__.py", 0o444, False), (f"{site}/top.py", 0o444, False),
        (f"{site}/demo", 0o555, True), (site, 0o555, True),
    ]  # fmt: skip
    assert docker_packages.for_run(VFS(fs_quota=1 << 20, max_files=16)) is None
    profile = {"host_config": {"tmpfs": {"/in": "rw,noexec,size=100,nr_inodes=5,mode=0755,uid=65534,gid=65534"},
                               "mem_limit": 1000, "memswap_limit": 1000}}
    shaped = docker_packages.with_mount(profile, found)
    host = shaped["host_config"]
    assert isinstance(host, dict)
    assert host["tmpfs"][package_tree.GUEST_SITE] == (
        f"rw,noexec,mode=0755,uid=65534,gid=65534,size={found.pages},nr_inodes={found.inodes}")
    assert host["mem_limit"] == host["memswap_limit"] == 1000 + found.pages
    assert profile["host_config"]["tmpfs"] == {"/in": "rw,noexec,size=100,nr_inodes=5,mode=0755,uid=65534,gid=65534"}


def test_spec_packages_still_validate() -> None:
    assert Spec(lang="python", code="", packages=["humanize"], limits=Limits()).packages == ("humanize",)
    with pytest.raises(InvalidSpec):
        Spec(lang="python", code="", packages=["--index-url=http://evil"])
