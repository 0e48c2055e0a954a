"""The CLI end to end, in process, against the fake backend."""

import io
import os
import sys
from pathlib import Path

import pytest

from playground.cli import exitcodes, main
from playground.core import Outcome, Pack, Policy, Request, Sandbox, WasmSpec
from tests.fake_backend import FakeBackend, FakeSessionBackend

TEXT = Pack(name="text", aliases=("txt",), extensions=(".txt",), wasm=WasmSpec(module=None))


def guest(req: Request) -> Outcome:
    """A scripted guest: the code is a tiny command language."""
    code = req.spec.code_bytes.decode()
    for line in code.splitlines():
        cmd, _, rest = line.partition(" ")
        if cmd == "print":
            req.output.write_stdout(rest.encode() + b"\n")
        elif cmd == "eprint":
            req.output.write_stderr(rest.encode() + b"\n")
        elif cmd == "args":
            req.output.write_stdout(" ".join(req.spec.args).encode() + b"\n")
        elif cmd == "env":
            req.output.write_stdout(repr(sorted(req.spec.env.items())).encode() + b"\n")
        elif cmd == "cat":
            req.output.write_stdout(req.vfs.read_file(rest))
        elif cmd == "stdin":
            req.output.write_stdout(req.stdin)
        elif cmd == "out":
            name, _, data = rest.partition(" ")
            req.vfs.write_file("/out/" + name, data.encode())
        elif cmd == "outhex":  # a name of any bytes, kept as the backends keep it (surrogateescape)
            name, _, data = rest.partition(" ")
            req.vfs.write_file("/out/" + bytes.fromhex(name).decode("utf-8", "surrogateescape"), data.encode())
        elif cmd == "flood":
            while True:
                req.output.write_stdout(b"z" * 4096)
        elif cmd == "exit":
            return Outcome(exit_code=int(rest))
    return Outcome(exit_code=0)


@pytest.fixture
def backend() -> FakeBackend:
    return FakeBackend("wasm", guest)


@pytest.fixture
def cli(backend: FakeBackend, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))

    def factory(policy: Policy) -> Sandbox:
        return Sandbox(backends=[backend], packs=[TEXT], policy=policy)

    def run(*argv: str) -> int:
        return main(list(argv), make_sandbox=factory)

    return run


def test_run_file_streams_output_and_returns_exit_code(cli, tmp_path: Path, capfd) -> None:  # type: ignore[no-untyped-def]
    prog = tmp_path / "prog.txt"
    prog.write_text("print hello\neprint warn\nargs\nexit 7\n")
    assert cli("run", str(prog), "a", "b") == 7
    out, err = capfd.readouterr()
    assert out == "hello\na b\n"
    assert "warn" in err


def test_args_after_double_dash(cli, tmp_path: Path, capfd) -> None:  # type: ignore[no-untyped-def]
    prog = tmp_path / "p.txt"
    prog.write_text("args\n")
    assert cli("run", str(prog), "--", "--not-an-option", "x") == 0
    assert capfd.readouterr().out == "--not-an-option x\n"


def test_eval_needs_lang(cli, capfd) -> None:  # type: ignore[no-untyped-def]
    assert cli("run", "-e", "print hi") == exitcodes.USAGE
    assert "--lang" in capfd.readouterr().err
    assert cli("run", "-e", "print hi", "--lang", "TXT") == 0
    assert capfd.readouterr().out == "hi\n"


def test_limits_are_parsed_and_passed(cli, backend: FakeBackend) -> None:  # type: ignore[no-untyped-def]
    assert cli("run", "-e", "print x", "-l", "txt", "--timeout", "500ms", "--mem", "64M", "--max-output", "2K",
               "--fs-quota", "1M", "--max-files", "9", "--cpu", "2s") == 0
    limits = backend.runs[-1].limits
    assert (limits.wall_time, limits.memory, limits.max_output, limits.fs_quota, limits.max_files, limits.cpu_time) \
        == (0.5, 64 << 20, 2048, 1 << 20, 9, 2.0)


def test_bad_limit_is_a_usage_error(cli, capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as info:
        cli("run", "-e", "x", "-l", "txt", "--mem", "lots")
    assert info.value.code == 2
    assert "not a size" in capsys.readouterr().err


def test_invalid_limit_value_is_a_sandbox_error(cli, capfd) -> None:  # type: ignore[no-untyped-def]
    assert cli("run", "-e", "x", "-l", "txt", "--max-files", "0") == exitcodes.SANDBOX_ERROR
    assert "max_files" in capfd.readouterr().err


def test_output_limit_has_its_own_exit_code_and_one_line_reason(cli, capfd) -> None:  # type: ignore[no-untyped-def]
    assert cli("run", "-e", "flood", "-l", "txt", "--max-output", "10K") == exitcodes.OUTPUT_LIMIT
    out, err = capfd.readouterr()
    assert len(out) == 10 * 1024
    reason = [line for line in err.splitlines() if line.startswith("playground:")]
    assert len(reason) == 1 and "output limit" in reason[0]


def test_in_and_out_round_trip(cli, tmp_path: Path, capfd) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "data.csv"
    data.write_text("a,b\n")
    out_dir = tmp_path / "results"
    code = "cat /in/data.csv\ncat /in/renamed.csv\nout r.txt done\nout sub/deep.txt deep"
    assert cli("run", "-e", code, "-l", "txt", "--in", str(data), "--in", f"renamed.csv={data}",
               "--out", str(out_dir)) == 0
    assert capfd.readouterr().out == "a,b\na,b\n"
    assert (out_dir / "r.txt").read_text() == "done"
    assert (out_dir / "sub" / "deep.txt").read_text() == "deep"


def test_out_dir_refuses_symlinked_subdirectory(cli, tmp_path: Path, capfd) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "outside"
    outside.mkdir()
    out_dir = tmp_path / "results"
    out_dir.mkdir()
    os.symlink(outside, out_dir / "sub")
    os.symlink(outside / "victim", out_dir / "link.txt")
    assert cli("run", "-e", "out sub/evil.txt pwned\nout link.txt pwned", "-l", "txt", "--out", str(out_dir)) == 0
    assert list(outside.iterdir()) == []
    assert capfd.readouterr().err.count("refused /out file") == 2


def test_env_is_only_what_is_given(cli, capfd) -> None:  # type: ignore[no-untyped-def]
    assert cli("run", "-e", "env", "-l", "txt", "--env", "A=1", "--env", "B=x=y") == 0
    assert capfd.readouterr().out == "[('A', '1'), ('B', 'x=y')]\n"
    assert cli("run", "-e", "env", "-l", "txt", "--env", "novalue") == exitcodes.USAGE


def test_piped_stdin_reaches_the_guest(cli, monkeypatch: pytest.MonkeyPatch, capfd) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"piped data")))
    assert cli("run", "-e", "stdin", "-l", "txt") == 0
    assert capfd.readouterr().out == "piped data"


def test_unknown_language_and_missing_file(cli, tmp_path: Path, capfd) -> None:  # type: ignore[no-untyped-def]
    assert cli("run", "-e", "x", "-l", "cobol") == exitcodes.SANDBOX_ERROR
    assert "unknown language" in capfd.readouterr().err
    assert cli("run", str(tmp_path / "nope.txt")) == exitcodes.USAGE
    assert "cannot read" in capfd.readouterr().err
    odd = tmp_path / "x.unknownext"
    odd.write_text("")
    assert cli("run", str(odd)) == exitcodes.SANDBOX_ERROR
    assert "no language for extension" in capfd.readouterr().err


def test_bad_in_key(cli, tmp_path: Path, capfd) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "f"
    f.write_text("x")
    assert cli("run", "-e", "x", "-l", "txt", "--in", f"../escape={f}") == exitcodes.SANDBOX_ERROR


def test_languages_table(cli, capfd) -> None:  # type: ignore[no-untyped-def]
    assert cli("languages") == 0
    out = capfd.readouterr().out
    assert "text" in out and "txt" in out and ".txt" in out and "wasm" in out


def test_languages_say_why_not(backend: FakeBackend, capfd) -> None:  # type: ignore[no-untyped-def]
    backend.refuse = lambda pack: "runtime missing"
    assert main(["languages"], make_sandbox=lambda p: Sandbox(backends=[backend], packs=[TEXT], policy=p)) == 0
    assert "unavailable: wasm: runtime missing; docker: backend not registered" in capfd.readouterr().out


def test_doctor(cli, capfd) -> None:  # type: ignore[no-untyped-def]
    assert cli("doctor") == 0
    out = capfd.readouterr().out
    assert "[ok  ] python" in out and "1 of 1 can run: text" in out
    assert "[ok  ] mcp worker processes: playground mcp " in out


@pytest.mark.parametrize(("cpus", "said"), [(1, "starts none by default"), (2, "in 2 Wasm worker processes")])
def test_doctor_says_what_mcp_spends_on_worker_processes(  # type: ignore[no-untyped-def]
    cli, capfd, monkeypatch: pytest.MonkeyPatch, cpus: int, said: str
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)))
    assert cli("doctor") == 0
    assert said in capfd.readouterr().out


def test_unknown_command_is_a_usage_error(cli, capfd) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as caught:
        cli("frobnicate")
    assert caught.value.code == exitcodes.USAGE
    assert "invalid choice: 'frobnicate'" in capfd.readouterr().err


def test_every_command_is_built() -> None:
    from playground import cli as cli_module

    assert cli_module.NOT_YET == {}


@pytest.fixture
def repl_cli(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    backend = FakeSessionBackend("wasm")

    def run(stdin: str, *argv: str) -> int:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
        return main(["repl", *argv], make_sandbox=lambda p: Sandbox(backends=[backend], packs=[TEXT], policy=p))

    run.backend = backend  # type: ignore[attr-defined]
    return run


def test_repl_keeps_state_and_resets(repl_cli, capfd) -> None:  # type: ignore[no-untyped-def]
    assert repl_cli("set x 42\nget x\n:reset\nget x\n:quit\nget x\n", "--lang", "text") == 0
    out, err = capfd.readouterr()
    assert out == "42\n<unset>\n"
    assert "interpreter was reset" in err
    assert all(guest.closed for guest in repl_cli.backend.guests)


def test_repl_reports_a_limit_and_goes_on(repl_cli, capfd) -> None:  # type: ignore[no-untyped-def]
    assert repl_cli("set x 1\nsleep 5\nget x\n", "txt", "--timeout", "100ms") == 0
    out, err = capfd.readouterr()
    assert "stopped" in err and "[limit: wall_time]" in err and "restarts with no state" in err
    assert out == "<unset>\n" and "a fresh interpreter ran this input" in err


def test_repl_usage_errors(repl_cli, capfd) -> None:  # type: ignore[no-untyped-def]
    assert repl_cli("", "--lang", "text", "--env", "novalue") == exitcodes.USAGE
    assert repl_cli("", "nosuchlang") == exitcodes.SANDBOX_ERROR
    assert "unknown language" in capfd.readouterr().err


def test_options_after_the_file_are_ours_and_guest_args_follow(cli, tmp_path: Path, capfd) -> None:  # type: ignore[no-untyped-def]
    prog = tmp_path / "p.txt"
    prog.write_text("args\nout r.txt x\n")
    out_dir = tmp_path / "o"
    assert cli("run", str(prog), "a", "--out", str(out_dir), "--", "-b", "--out") == 0
    assert capfd.readouterr().out == "a -b --out\n"
    assert (out_dir / "r.txt").read_text() == "x"


# -- issue #12: guest names that are not UTF-8 (item 6), limit flags that are not numbers (item 7) --------------


def test_out_writes_a_non_utf8_name_byte_for_byte_and_every_other_file(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, capfd
) -> None:
    out = tmp_path / "out"
    code = "outhex fffe2e747874 weird one\nouthex feff2e747874 weird two\nout ok.txt fine\n" \
           "outhex 7375622f6e6573746564ff2e747874 deep\nprint done"
    assert cli("run", "-e", code, "-l", "txt", "--out", str(out)) == 0
    stdout, err = capfd.readouterr()
    assert stdout == "done\n"
    root = os.fsencode(out)
    assert sorted(os.listdir(root)) == [b"ok.txt", b"sub", b"\xfe\xff.txt", b"\xff\xfe.txt"]

    def read(*parts: bytes) -> bytes:
        return Path(os.fsdecode(os.path.join(root, *parts))).read_bytes()

    assert read(b"\xff\xfe.txt") == b"weird one"
    assert read(b"\xfe\xff.txt") == b"weird two"
    assert read(b"sub", b"nested\xff.txt") == b"deep"
    assert (out / "ok.txt").read_text() == "fine"
    assert "wrote 4 file(s)" in err
    # the names are shown escaped, never as raw bytes or mojibake
    assert "/out/\\xff\\xfe.txt is not a UTF-8 name" in err and "/out/sub/nested\\xff.txt" in err
    err.encode("utf-8")  # nothing unencodable reached the terminal


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--timeout", "true"), ("--timeout", "nan"), ("--timeout", "1e3"), ("--cpu", ""), ("--mem", "yes"),
     ("--mem", "1.5"), ("--max-output", "false"), ("--fs-quota", "-1"), ("--max-files", "true"),
     ("--max-files", "1.5"), ("--max-files", "1_000"), ("--max-files", " 7")],
)
def test_limit_flags_refuse_what_is_not_a_number(  # type: ignore[no-untyped-def]
    cli, backend: FakeBackend, capsys, flag: str, value: str
) -> None:
    with pytest.raises(SystemExit) as info:
        cli("run", "-e", "print ran", "-l", "txt", flag, value)
    assert info.value.code == exitcodes.USAGE
    assert f"argument {flag}:" in capsys.readouterr().err
    assert backend.runs == []


@pytest.mark.parametrize(
    ("flag", "value", "field"),
    [("--timeout", "0", "wall_time"), ("--timeout", "9" * 400, "wall_time"), ("--cpu", "9999999s", "cpu_time"),
     ("--mem", "0", "memory"), ("--max-output", "0K", "max_output"), ("--max-files", "-3", "max_files"),
     ("--max-files", "9" * 30, "max_files")],
)
def test_limit_flags_out_of_range_name_the_flag(  # type: ignore[no-untyped-def]
    cli, backend: FakeBackend, capfd, *, flag: str, value: str, field: str
) -> None:
    assert cli("run", "-e", "print ran", "-l", "txt", flag, value) == exitcodes.SANDBOX_ERROR
    out, err = capfd.readouterr()
    assert f"{flag} ({field}):" in err and out == ""
    assert backend.runs == []


def test_max_files_takes_unlimited_like_the_other_limit_flags(cli, backend: FakeBackend) -> None:  # type: ignore[no-untyped-def]
    from playground.core import UNLIMITED

    assert cli("run", "-e", "print x", "-l", "txt", "--max-files", "unlimited", "--mem", "unlimited") == 0
    assert backend.runs[-1].limits.max_files is UNLIMITED and backend.runs[-1].limits.memory is UNLIMITED


def test_out_files_without_out_dir_are_named_on_stderr(cli, capfd) -> None:  # type: ignore[no-untyped-def]
    """Issue #17: a run that left files in /out, without --out, says how many and how to get them."""
    assert cli("run", "-e", "out plot.png x\nout hello.txt hi", "-l", "txt") == 0
    err = capfd.readouterr().err
    assert ("playground: the program left 2 file(s) in /out (hello.txt, plot.png); add --out DIR to save them"
            in err), err
    code = "\n".join(f"out f{i}.txt {i}" for i in range(7))
    assert cli("run", "-e", code, "-l", "txt") == 0
    err = capfd.readouterr().err
    assert "left 7 file(s) in /out (f0.txt, f1.txt, f2.txt, f3.txt, f4.txt, and 2 more); add --out DIR" in err, err
    assert cli("run", "-e", "echo nothing", "-l", "txt") == 0
    assert "/out" not in capfd.readouterr().err
