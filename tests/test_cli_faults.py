"""Faults found by trying the commands as a new user would, one test each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cli import EXAMPLE, ROOT, assert_one_line_error, cli

OVERLAP = """dan.kernel @k {
  %b0, %t0 = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 8>
  %b1, %t1 = dan.alloc {id = 1, buf = 1, offset = 4} : !dan.buf<UB, 8>
  %t2 = dan.compute "VADD" on VECTOR cycles(1) bufs(%b0, %b1) after(%t0, %t1) {id = 2}
  %f0 = dan.free %b0 after(%t2) {id = 3}
  %f1 = dan.free %b1 after(%t2) {id = 4}
}
"""


def test_export_refuses_an_invalid_layout_and_keeps_old_files(tmp_path: Path) -> None:
    k = tmp_path / "k.mlir"
    k.write_text(OVERLAP)
    old = {f"k_{part}.txt": f"old {part}\n" for part in ("schedule", "memory", "spill")}
    for name, text in old.items():
        (tmp_path / name).write_text(text)
    p = cli("dan-export", "--output-dir", str(tmp_path), str(k))
    assert_one_line_error(p, "dan-export", "kernel @k: invalid plan (")
    assert {name: (tmp_path / name).read_text() for name in old} == old
    assert cli("dan-opt", str(k), "-t", "plan", "-o", str(tmp_path / "o")).returncode == 1
    assert not (tmp_path / "o").exists()


def test_export_creates_its_output_directory(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b"
    p = cli("dan-export", "--output-dir", str(out), str(EXAMPLE))
    assert p.returncode == 0, p.stderr
    assert (out / "matmul_4x4x4_schedule.txt").exists()


def test_plan_set_is_written_as_a_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dan.lowering.io import atomic

    paths = [tmp_path / f"k_{part}.txt" for part in ("schedule", "memory", "spill")]
    for path in paths:
        path.write_text("old\n")
    real_replace = os.replace
    calls = []

    def interrupted(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic.atomic_write_all({path: "new\n" for path in paths[:2]}, [paths[2]])
    monkeypatch.setattr(atomic.os, "replace", real_replace)
    assert [p.read_text() for p in paths] == ["old\n"] * 3
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)  # no temporaries
    atomic.atomic_write_all({path: "new\n" for path in paths[:2]}, [paths[2]])
    assert [p.read_text() for p in paths[:2]] == ["new\n"] * 2 and not paths[2].exists()
    assert len(list(tmp_path.iterdir())) == 2


def test_interrupt_while_staging_leaves_no_temporaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dan.lowering.io import atomic

    real_chmod = os.chmod

    def interrupted(path: str, mode: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "chmod", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic.atomic_write_all({tmp_path / "a.txt": "x", tmp_path / "b.txt": "y"})
    monkeypatch.setattr(atomic.os, "chmod", real_chmod)
    assert list(tmp_path.iterdir()) == []


def _closed(fd: int) -> subprocess.CompletedProcess[str]:
    code = "import sys; from dan.tools.dan_opt import main; sys.argv[0] = 'dan-opt'; main()"
    args = [sys.executable, "-c", code] + (["-"] if fd == 0 else [str(EXAMPLE)])
    return subprocess.run(args, capture_output=fd != 1, stderr=subprocess.PIPE if fd == 1 else None,
                          text=True, cwd=ROOT, preexec_fn=lambda: os.close(fd))


def test_closed_stdin_and_stdout_are_one_line_errors() -> None:
    p = _closed(0)
    assert_one_line_error(p, "dan-opt", "standard input is closed")
    p = _closed(1)
    assert_one_line_error(p, "dan-opt", "standard output is closed")


def test_graph_json_on_stdin_is_read_as_a_graph(tmp_path: Path) -> None:
    p = cli("dan-opt", "-", "--mpas", "--dlr", "-t", "plan", "-o", str(tmp_path), stdin=EXAMPLE.read_text())
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "stdin_memory.txt").exists()


def test_misleading_messages_name_the_real_problem(tmp_path: Path) -> None:
    plan = tmp_path / "plan"
    assert cli("dan-opt", str(EXAMPLE), "--mpas", "--dlr", "-t", "plan", "-o", str(plan)).returncode == 0
    spill = plan / "matmul_4x4x4_spill.txt"
    sched = plan / "matmul_4x4x4_schedule.txt"
    sched.write_text(sched.read_text() + "640\n641\n")
    spill.unlink()
    assert_one_line_error(cli("dan-replay", str(EXAMPLE), "--plan", str(plan)), "dan-replay",
                          "node id 640 would be a spill node, but there is no 'matmul_4x4x4_spill.txt'")
    assert_one_line_error(cli("dan-replay", str(EXAMPLE), "--plan", str(sched)), "dan-replay",
                          "is not a directory")
    no_edges = tmp_path / "e.json"
    no_edges.write_text(json.dumps({"Nodes": json.loads(EXAMPLE.read_text())["Nodes"]}))
    assert_one_line_error(cli("dan-opt", str(no_edges)), "dan-opt", "no 'Edges' list")
    latin = tmp_path / "l.mlir"
    latin.write_bytes(b"dan.kernel @k {\xe9}\n")
    assert_one_line_error(cli("dan-opt", str(latin)), "dan-opt", f"'{latin}': not UTF-8 text (byte 15)")


def test_target_file_with_a_misspelt_key_is_refused(tmp_path: Path) -> None:
    t = tmp_path / "t.json"
    t.write_text(json.dumps({"capacity": {"L1": 1, "UB": 1, "L0A": 1, "L0B": 1, "L0C": 1}, "spill_startp": 3}))
    assert_one_line_error(cli("dan-opt", str(EXAMPLE), "--target", str(t)), "dan-opt", "unknown key 'spill_startp'")


def test_second_cube_unit_is_only_a_target_file(tmp_path: Path) -> None:
    data = json.loads(EXAMPLE.read_text())
    cubes = [n for n in data["Nodes"] if n.get("Pipe") == "CUBE"]
    for n in cubes[::2]:
        n["Pipe"] = "CUBE2"
    (tmp_path / "k.json").write_text(json.dumps(data))
    caps = {"L1": 4096, "UB": 1024, "L0A": 256, "L0B": 256, "L0C": 512}
    pipes = ["MTE1", "MTE2", "MTE3", "FIXP", "CUBE", "CUBE2", "VECTOR"]
    (tmp_path / "t.json").write_text(json.dumps({"name": "two_cube", "capacity": caps, "pipes": pipes}))
    target = ["--target", str(tmp_path / "t.json")]
    p = cli("dan-opt", str(tmp_path / "k.json"), *target, "--pipeline", "dan", "-t", "plan", "-o", str(tmp_path))
    assert p.returncode == 0, p.stderr
    rep = cli("dan-replay", str(tmp_path / "k.json"), *target, "--plan", str(tmp_path), "--json")
    assert rep.returncode == 0 and json.loads(rep.stdout)["valid"], rep.stdout + rep.stderr


@pytest.mark.parametrize("spec", ["dlr,mpas", "mpas,dlr,cpe,mpas"])
def test_dropping_a_layout_made_in_the_pipeline_warns(spec: str) -> None:
    p = cli("dan-opt", str(EXAMPLE), "-p", spec, "-o", os.devnull)
    assert p.returncode == 0
    assert p.stderr.startswith("dan-opt: warning: kernel @matmul_4x4x4: pass 'mpas' drops the layout made by")
    assert cli("dan-opt", str(EXAMPLE), "-p", "mpas,dlr", "-o", os.devnull).stderr == ""


def test_help_lists_passes_and_every_command_has_a_version() -> None:
    text = cli("dan-opt", "--help").stdout
    assert "mpas, dlr, cpe" in text and "canonicalize" in text
    for prog in ("dan-opt", "dan-export", "dan-replay", "dan-bench"):
        p = cli(prog, "--version")
        assert p.returncode == 0 and p.stdout.startswith(f"{prog} (dan-scheduler "), p.stdout


@pytest.mark.parametrize("shuffle", [False, True])
def test_plan_target_matches_the_ir_path(tmp_path: Path, shuffle: bool) -> None:
    """Straight from the arrays or through printed IR, the passes see one graph (edge
    order in the file, or nodes listed against the edges, change nothing)."""
    import random

    data = json.loads(EXAMPLE.read_text())
    if shuffle:
        random.Random(7).shuffle(data["Edges"])
        data["Nodes"].reverse()
    k = tmp_path / "k.json"
    k.write_text(json.dumps(data))
    for spec in ("mpas,dlr,cpe", "magis,dlr{policy=lru}"):
        direct, via_ir = tmp_path / "direct", tmp_path / "ir"
        assert cli("dan-opt", str(k), "-p", spec, "-t", "plan", "-o", str(direct)).returncode == 0
        assert cli("dan-opt", str(k), "-o", str(tmp_path / "k.mlir")).returncode == 0
        assert cli("dan-opt", str(tmp_path / "k.mlir"), "-p", spec, "-o", str(tmp_path / "p.mlir")).returncode == 0
        assert cli("dan-export", "-o", str(via_ir), str(tmp_path / "p.mlir")).returncode == 0
        for f in direct.iterdir():
            assert f.read_bytes() == (via_ir / f.name).read_bytes(), (spec, f.name)


def test_graph_target_round_trips() -> None:
    g = cli("dan-opt", str(EXAMPLE), "-t", "graph")
    assert json.loads(g.stdout) == json.loads(EXAMPLE.read_text())


def test_graph_to_plan_files_without_passes_imports_no_ir_machinery(tmp_path: Path) -> None:
    code = ("import sys; from dan.tools.dan_opt import main; sys.argv[0] = 'dan-opt'\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m in ('xdsl.printer', 'xdsl.parser', 'dan.dialect.ir.dialect')))")
    p = subprocess.run([sys.executable, "-c", code, str(EXAMPLE), "-t", "plan", "-o", str(tmp_path)],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.stdout.strip() == "[]", p.stdout + p.stderr


def test_ctrl_c_in_any_command_is_one_line_and_exit_130() -> None:
    """`cli.run` answers Ctrl-C at once with one line, whatever the command was doing."""
    code = ("from dan.tools.cli import run\n"
            "def body():\n    raise KeyboardInterrupt\n"
            "run('dan-x', body)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (130, "", "dan-x: interrupted\n")
