"""Strict parsing of a guest's /out tar stream, and the stdout/trailer split, without a daemon."""

from __future__ import annotations

import io
import tarfile

import pytest

from backends.docker.outtar import OutQuotaExceeded, clean_member_name, read_out_archive
from backends.docker.trailer import MARKER_LEAD, MarkerSplitter, marker_line, parse_df, parse_trailer
from backends.docker.wrapper import MARK_ENV, STAGE, expand, guest_script, input_archive, wrapper_argv, wrapper_script
from playground.core import VFS, DockerSpec


def make_tar(*entries: tuple[str, str, bytes | str]) -> bytes:
    """entries: (name, kind, data-or-linkname); kind in file/dir/sym/hard/fifo/chr/blk."""
    buf = io.BytesIO()
    kinds = {
        "file": tarfile.REGTYPE,
        "dir": tarfile.DIRTYPE,
        "sym": tarfile.SYMTYPE,
        "hard": tarfile.LNKTYPE,
        "fifo": tarfile.FIFOTYPE,
        "chr": tarfile.CHRTYPE,
        "blk": tarfile.BLKTYPE,
    }
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for name, kind, payload in entries:
            info = tarfile.TarInfo(name)
            info.type = kinds[kind]
            if kind == "file":
                assert isinstance(payload, bytes)
                info.size = len(payload)
                archive.addfile(info, io.BytesIO(payload))
            else:
                if kind in ("sym", "hard"):
                    assert isinstance(payload, str)
                    info.linkname = payload
                archive.addfile(info)
    return buf.getvalue()


def test_regular_files_and_dirs() -> None:
    data = make_tar((".", "dir", b""), ("./a.txt", "file", b"A"), ("./d", "dir", b""), ("./d/b.bin", "file", b"\0\1"))
    out = read_out_archive(data, max_bytes=100, max_entries=10)
    assert out.files == [("a.txt", b"A"), ("d/b.bin", b"\0\1")]
    assert out.dirs == ["d"]
    assert out.refused == []
    assert out.total_bytes == 3


def test_empty_stream_is_empty_out() -> None:
    assert read_out_archive(b"", max_bytes=1, max_entries=1).files == []


@pytest.mark.parametrize(
    ("kind", "payload", "why"),
    [
        ("sym", "/etc/passwd", "symbolic link"),
        ("hard", "a.txt", "hard link"),
        ("fifo", b"", "FIFO"),
        ("chr", b"", "character device"),
        ("blk", b"", "block device"),
    ],
)
def test_links_and_special_files_are_refused(kind: str, payload: bytes | str, why: str) -> None:
    data = make_tar(("./a.txt", "file", b"A"), ("./evil", kind, payload), ("./z.txt", "file", b"Z"))
    out = read_out_archive(data, max_bytes=100, max_entries=10)
    assert [name for name, _ in out.files] == ["a.txt", "z.txt"]
    assert out.refused == [("evil", why)]


@pytest.mark.parametrize("name", ["/etc/passwd", "../x", "a/../../x", "./a/../b", "a//b", "a\\b", "a\x00b"])
def test_unsafe_names_are_refused(name: str) -> None:
    assert clean_member_name(name) is None


def test_unsafe_names_inside_an_archive() -> None:
    data = make_tar(("../escape", "file", b"x"), ("/abs", "file", b"y"), ("ok", "file", b"z"))
    out = read_out_archive(data, max_bytes=100, max_entries=10)
    assert out.files == [("ok", b"z")]
    assert {why for _, why in out.refused} == {"unsafe name"}


def test_byte_quota_is_checked_before_reading() -> None:
    data = make_tar(("a", "file", b"x" * 60), ("b", "file", b"y" * 60))
    with pytest.raises(OutQuotaExceeded, match="more than 100 bytes"):
        read_out_archive(data, max_bytes=100, max_entries=10)


def test_declared_size_is_not_trusted_or_read() -> None:
    """A header claiming 10 GB fails on its declared size; nothing that large is read."""
    info = tarfile.TarInfo("huge")
    info.size = 10 << 30
    header = info.tobuf(format=tarfile.GNU_FORMAT)
    with pytest.raises(OutQuotaExceeded):
        read_out_archive(header + b"\0" * 1024, max_bytes=1 << 20, max_entries=10)


def test_entry_count_limit() -> None:
    data = make_tar(*((f"f{i}", "file", b"") for i in range(5)))
    with pytest.raises(OutQuotaExceeded, match="more than 3 entries"):
        read_out_archive(data, max_bytes=100, max_entries=3)
    assert len(read_out_archive(data, max_bytes=None, max_entries=None).files) == 5


def test_damaged_archive_keeps_the_good_prefix() -> None:
    data = make_tar(("a", "file", b"A" * 10), ("b", "file", b"B" * 2000))
    out = read_out_archive(data[:1536], max_bytes=10_000, max_entries=10)
    assert out.files == [("a", b"A" * 10)]
    assert out.refused
    assert out.refused[-1][1] == "truncated" or out.refused[-1][1].startswith("damaged")


def test_garbage_is_not_an_archive() -> None:
    out = read_out_archive(b"not a tar at all" * 100, max_bytes=100, max_entries=10)
    assert out.files == [] and out.refused


# -- the stdout / trailer split ----------------------------------------------------------


def test_marker_split_across_chunks() -> None:
    splitter = MarkerSplitter("abc123")
    stream = b"hello\nworld" + marker_line("abc123") + b"TRAILER"
    guest = bytearray()
    trailer = bytearray()
    for i in range(len(stream)):
        g, t = splitter.feed(stream[i : i + 1])
        guest += g
        trailer += t
    assert bytes(guest) == b"hello\nworld"
    assert bytes(trailer) == b"TRAILER"
    assert splitter.found


def test_guest_bytes_are_not_held_back() -> None:
    """Issue #17: a line the guest printed is passed on at once, not when more output or the trailer comes."""
    mark = "0123456789abcdef0123456789abcdef"
    splitter = MarkerSplitter(mark)
    for chunk in (b"step1\n", b"x", b"\n", b"abc", b"Name? ", b"\n\n", b"0123456789abcdef"):
        assert splitter.feed(chunk) == (chunk, b"")
    # Only a tail that starts the marker line waits (output practically never ends with the lead byte).
    assert splitter.feed(b"out" + MARKER_LEAD) == (b"out", b"")
    assert splitter.feed(mark[:5].encode()) == (b"", b"")
    assert splitter.feed(b"!") == (MARKER_LEAD + mark[:5].encode() + b"!", b"")
    assert splitter.feed(b"end" + marker_line(mark) + b"T") == (b"end", b"T")
    assert splitter.found


def test_a_lead_byte_in_output_is_output() -> None:
    splitter = MarkerSplitter("feed")
    guest, trailer = bytearray(), bytearray()
    for chunk in (MARKER_LEAD, MARKER_LEAD + b"fe", b"e", MARKER_LEAD * 2, b"x" + MARKER_LEAD + b"fe", b"ed\nREST"):
        g, t = splitter.feed(chunk)
        guest += g
        trailer += t
    assert bytes(guest) == MARKER_LEAD * 2 + b"fee" + MARKER_LEAD * 2 + b"x"
    assert bytes(trailer) == b"REST"


def test_no_marker_flushes_everything() -> None:
    splitter = MarkerSplitter("zzz")
    g, t = splitter.feed(b"partial output without end")
    assert t == b""
    assert g + splitter.flush() == b"partial output without end"
    assert not splitter.found


def test_parse_trailer_sections() -> None:
    df_k = (
        "Filesystem 1024-blocks Used Available Capacity Mounted on\n"
        "tmpfs 16384 4 16380 1% /work\ntmpfs 16384 16384 0 100% /out\n"
    )
    df_i = "Filesystem Inodes IUsed IFree IUse% Mounted on\ntmpfs 256 3 253 2% /work\n"
    data = df_k.encode() + b"M\n" + df_i.encode() + b"M\n" + b"12345\n" + b"M\n" + b"TARDATA\nM\n"
    trailer = parse_trailer(data, "M")
    assert trailer.complete
    assert trailer.space["/work"].used == 4096 and trailer.space["/out"].available == 0
    assert trailer.inodes["/work"].available == 253
    assert trailer.peak_memory == 12345
    assert trailer.out_tar == b"TARDATA\nM\n"


def test_parse_trailer_forged_or_cut() -> None:
    trailer = parse_trailer(b"junk", "M")
    assert not trailer.complete and trailer.space == {} and trailer.out_tar == b""
    assert parse_df("header only\n", scale=1) == {}


# -- what goes into the container ------------------------------------------------------


def test_expand_main_and_args() -> None:
    assert expand(("node", "{main}", "{args}", "x{main}"), "/work/m.js", ["a b", "c"]) == [
        "node",
        "/work/m.js",
        "a b",
        "c",
        "x/work/m.js",
    ]


def test_wrapper_quotes_arguments_and_chains_compile() -> None:
    spec = DockerSpec(image="i", compile=("cc", "{main}"), cmd=("/work/a.out", "{args}"), main_file="m.c")
    script = wrapper_script(spec, ["$(reboot)", "it's"])
    assert "cc /work/m.c </dev/null 3<&- && exec /work/a.out '$(reboot)' 'it'\"'\"'s' <&3 3<&-" in script
    assert "kill -s KILL -- -1" in script  # dash reads a bare -1 as an option and kills nothing


def test_input_archive_layout() -> None:
    vfs = VFS(fs_quota=None, max_files=None)
    vfs.seed_inputs({"data/a.txt": b"A", "b.bin": b"\0"})
    spec = DockerSpec(image="i", cmd=("bash", "{main}"), main_file="main.sh")
    blob = input_archive(vfs, spec, b"echo hi", b"stdin!")
    with tarfile.open(fileobj=io.BytesIO(blob)) as archive:
        members = {m.name: m for m in archive.getmembers()}
        # No marker: the guest unpacks (and can read) all of it (issue #12).
        assert set(members) == {
            "in/b.bin",
            "in/data",
            "in/data/a.txt",
            "work/main.sh",
            STAGE[1:],
            f"{STAGE[1:]}/stdin",
        }
        assert all(m.isreg() or m.isdir() for m in members.values())

        def read(name: str) -> bytes:
            f = archive.extractfile(name)
            assert f is not None
            return f.read()

        assert read("work/main.sh") == b"echo hi"
        assert read(f"{STAGE[1:]}/stdin") == b"stdin!"



# -- issue #12: the trailer's secret never reaches anything the guest can read ----------------------------


def test_wrapper_argv_carries_the_env_but_no_marker() -> None:
    spec = DockerSpec(image="i", cmd=("bash", "{main}"), main_file="main.sh")
    argv = wrapper_argv(spec, ["a"], {"GREETING": "hi there", "-odd name": "x=y"})
    assert argv[:2] == ["/bin/sh", "-c"] and argv[3:] == ["sh", "GREETING=hi there", "-odd name=x=y"]
    script = argv[2]
    # The marker comes from the environment, is unset at once and is never written anywhere but stdout.
    assert script.startswith(f"mark=${{{MARK_ENV}-}}\nunset {MARK_ENV}\n")
    # Four section markers, and the line that starts the in-guest report (trailer.report_line).
    assert script.count("$mark") == 5 and all("printf" in line for line in script.splitlines() if "$mark" in line)
    # Guest code runs only through drop, which leaves no capability (setpriv) or falls back to su.
    assert "--bounding-set=-all" in script and "--inh-caps=-all" in script
    assert 'drop env -- PATH="$guest_path" HOME="$guest_home" "$@" /bin/sh -c "$guest"' in script
    # Nothing of the guest may still write when the trailer starts.
    assert script.index("kill -s KILL -- -1") < script.index("printf '\\036%s\\n' \"$mark\"")


def test_guest_part_cannot_end_its_here_document_early() -> None:
    spec = DockerSpec(image="i", cmd=("bash", "{main}", "{args}"), main_file="main.sh")
    script = wrapper_script(spec, ["\nPLAYGROUND_GUEST_x\n", "\nid -u\n"])
    lines = script.splitlines()
    opener = next(line for line in lines if line.startswith("guest=$(cat <<'"))
    delimiter = opener.split("'")[1]
    assert lines.count(delimiter) == 1  # the arguments cannot contain it as a line
    body = script.split(opener + "\n", 1)[1].split("\n" + delimiter + "\n", 1)[0]
    assert body == guest_script(spec, ["\nPLAYGROUND_GUEST_x\n", "\nid -u\n"])


# -- issue #17: the keyboard reaches the program through the container's stdin ------------------------------


def test_wrapper_reads_exactly_the_archive_then_leaves_stdin_to_the_program() -> None:
    spec = DockerSpec(image="i", cmd=("bash", "{main}"), main_file="main.sh")
    plain = wrapper_script(spec, [], archive_size=10240)
    # tar drains a pipe to its end: head -c takes exactly the archive, so nothing after it is lost.
    assert "if ! head -c 10240 | drop tar -x -o -f - -C /; then" in plain
    assert '/bin/sh -c "$guest" </dev/null' in plain and "exec 3<&0" not in plain
    live = wrapper_script(spec, [], archive_size=10240, live_stdin=True)
    assert "if ! head -c 10240 | drop tar -x -o -f - -C /; then" in live
    assert '/bin/sh -c "$guest"\n' in live and '"$guest" </dev/null' not in live
    guest = guest_script(spec, [], live_stdin=True)
    assert "exec 3<&0" in guest and f"{STAGE}/stdin" not in guest.replace(f"rm -rf {STAGE}", "")
    assert guest.endswith("exec bash /work/main.sh <&3 3<&-")
    # A compile step never reads the keyboard.
    compiled = DockerSpec(image="i", compile=("cc", "{main}"), cmd=("/work/a.out",), main_file="m.c")
    assert "cc /work/m.c </dev/null 3<&- && exec /work/a.out <&3 3<&-" in guest_script(compiled, [], live_stdin=True)


def test_wrapper_argv_passes_the_archive_size_and_mode() -> None:
    spec = DockerSpec(image="i", cmd=("bash", "{main}"), main_file="main.sh")
    argv = wrapper_argv(spec, [], {}, archive_size=512, live_stdin=True)
    assert "head -c 512 | drop tar" in argv[2] and "exec 3<&0" in argv[2]
