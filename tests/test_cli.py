"""The commands as a user runs them: outputs, round trips, one-line errors, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shared_data import CASES, expected, golden_dir, workload

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "matmul_4x4x4.json"


def cli(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -m` on a command module, as the console script would."""
    module, *rest = args
    code = f"import sys; from dan.tools.{module.replace('-', '_')} import main; sys.argv[0] = '{module}'; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *rest], input=stdin, capture_output=True, text=True,
        env={**os.environ, **(env or {})}, cwd=ROOT,
    )


def assert_one_line_error(p: subprocess.CompletedProcess[str], prog: str, message: str) -> None:
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr
    assert p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith(f"{prog}: error: ") and message in p.stderr, p.stderr


@pytest.mark.parametrize("case", CASES)
def test_import_and_replay_id_order_peak(case: str) -> None:
    path = workload(case)
    ir = cli("dan-opt", str(path))
    assert ir.returncode == 0, ir.stderr
    rep = cli("dan-replay", "-", "--json", stdin=ir.stdout)
    assert rep.returncode == 0, rep.stderr
    assert json.loads(rep.stdout)["peak_l1_ub"] == expected(case)["original_order_peak_l1_ub"]


@pytest.mark.parametrize("case", CASES)
def test_golden_plan_through_ir_exports_byte_for_byte(case: str, tmp_path: Path) -> None:
    from dan.dialect.ir.kernel.view import build_kernel
    from dan.dialect.model.target import CONTEST
    from dan.lowering.io.graph_files import read_graph
    from dan.lowering.io.plan_files import read_plan
    from dan.lowering.io.ir_io import print_module
    from xdsl.dialects.builtin import ModuleOp

    graph = read_graph(workload(case))
    plan = read_plan(graph, golden_dir(case))
    mlir = tmp_path / f"{case}.mlir"
    mlir.write_text(print_module(ModuleOp([build_kernel(graph, plan, CONTEST)])))
    rep = cli("dan-replay", str(mlir), "--json")
    got = json.loads(rep.stdout)
    assert {k: got[k] for k in expected(case)["plan"]} == expected(case)["plan"]
    out = tmp_path / "out"
    out.mkdir()
    exp = cli("dan-export", "--format", "contest", "--output-dir", str(out), str(mlir))
    assert exp.returncode == 0, exp.stderr
    for name in (f"{case}_schedule.txt", f"{case}_memory.txt", f"{case}_spill.txt"):
        assert (out / name).read_bytes() == (golden_dir(case) / name).read_bytes()


def test_export_graph_round_trip(tmp_path: Path) -> None:
    ir = cli("dan-opt", str(EXAMPLE), "-o", str(tmp_path / "k.mlir"))
    assert ir.returncode == 0, ir.stderr
    exp = cli("dan-export", "--format", "graph", "--output-dir", str(tmp_path), str(tmp_path / "k.mlir"))
    assert exp.returncode == 0, exp.stderr
    assert json.loads((tmp_path / "matmul_4x4x4.json").read_text()) == json.loads(EXAMPLE.read_text())


def test_export_without_layout_writes_schedule_with_notice(tmp_path: Path) -> None:
    exp = cli("dan-export", "--output-dir", str(tmp_path), str(EXAMPLE))
    assert exp.returncode == 0
    assert "has no layout; wrote its schedule only" in exp.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["matmul_4x4x4_schedule.txt"]


def test_full_pipeline_is_valid_and_deterministic(tmp_path: Path) -> None:
    outs = []
    for seed in ("0", "1", "12345"):
        p = cli("dan-opt", "--mpas", "--dlr", "--cpe", str(EXAMPLE), env={"PYTHONHASHSEED": seed})
        assert p.returncode == 0, p.stderr
        outs.append(p.stdout)
    assert outs[0] == outs[1] == outs[2]
    rep = cli("dan-replay", "-", "--json", stdin=outs[0])
    assert rep.returncode == 0 and json.loads(rep.stdout)["valid"]


def test_invalid_plan_exits_2(tmp_path: Path) -> None:
    (tmp_path / "matmul_4x4x4_schedule.txt").write_text("".join(f"{i}\n" for i in reversed(range(640))))
    rep = cli("dan-replay", str(EXAMPLE), "--plan", str(tmp_path))
    assert rep.returncode == 2
    assert "INVALID" in rep.stdout and "violation (edge-violated)" in rep.stdout


BAD = [
    (("dan-opt", "missing.json"), "dan-opt", "cannot read 'missing.json': No such file or directory"),
    (("dan-opt", str(EXAMPLE), "-p", "nosuchpass"), "dan-opt", "bad pass pipeline 'nosuchpass': Unrecognized passes: ['nosuchpass']"),
    (("dan-opt", str(EXAMPLE), "-p", "dlr{policy=foo}"), "dan-opt", "option 'policy' of pass 'dlr': unknown value 'foo' (valid: cost, lru, belady, belady-cost, planned)"),
    (("dan-opt", str(EXAMPLE), "-p", "mpas{policy=foo}"), "dan-opt", "option 'policy' of pass 'mpas': unknown value 'foo' (valid: "),
    (("dan-opt", str(EXAMPLE), "--target", "tpu"), "dan-opt", "unknown target 'tpu' (presets: contest, ascend910b; or a .json file)"),
    (("dan-export", "--format", "xml", str(EXAMPLE)), "dan-export", "unknown format 'xml' (valid: contest, graph, chrome-trace, png, svg)"),
    (("dan-replay", str(EXAMPLE), "--plan", "nowhere"), "dan-replay", "plan directory 'nowhere' does not exist"),
]


@pytest.mark.parametrize(("args", "prog", "message"), BAD)
def test_bad_input_one_line_error(args: tuple[str, ...], prog: str, message: str) -> None:
    assert_one_line_error(cli(*args), prog, message)


def test_bad_graph_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"Nodes": [{"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 8, "Type": "L9"}], "Edges": []}')
    assert_one_line_error(cli("dan-opt", str(bad)), "dan-opt", "node 0: unknown tier 'L9'")


def test_bad_ir_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text('dan.kernel @k {\n  %t = dan.compute "EXP" on MTE2 cycles(1) {id = 0}\n}\n')
    p = cli("dan-opt", str(bad))
    assert_one_line_error(p, "dan-opt", "MTE2")


def test_failed_output_leaves_no_file(tmp_path: Path) -> None:
    out = tmp_path / "o.mlir"
    p = cli("dan-opt", str(EXAMPLE), "-p", "nosuchpass", "-o", str(out))
    assert p.returncode == 1 and not out.exists()


def test_output_through_symlink_and_to_devices(tmp_path: Path) -> None:
    real = tmp_path / "real.mlir"
    real.write_text("old")
    (tmp_path / "link.mlir").symlink_to(real)
    assert cli("dan-opt", str(EXAMPLE), "-o", str(tmp_path / "link.mlir")).returncode == 0
    assert (tmp_path / "link.mlir").is_symlink() and "dan.kernel" in real.read_text()
    assert cli("dan-opt", str(EXAMPLE), "-o", os.devnull).returncode == 0
    assert not Path(os.devnull).is_file()


def test_graph_listed_out_of_order_starts_from_a_legal_order(tmp_path: Path) -> None:
    rev = tmp_path / "rev.json"
    rev.write_text(json.dumps({
        "Nodes": [{"Id": 0, "Op": "FREE", "BufId": 0, "Size": 8, "Type": "UB"},
                  {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 3, "Bufs": [0]},
                  {"Id": 2, "Op": "ALLOC", "BufId": 0, "Size": 8, "Type": "UB"}],
        "Edges": [[2, 1], [1, 0]],
    }))
    assert cli("dan-replay", str(rev)).returncode == 0
    out = tmp_path / "out"
    out.mkdir()
    assert cli("dan-export", "--output-dir", str(out), str(rev)).returncode == 0
    assert (out / "rev_schedule.txt").read_text() == "2\n1\n0\n"


def test_export_refuses_a_kernel_name_holding_a_path(tmp_path: Path) -> None:
    k = tmp_path / "k.mlir"
    k.write_text('dan.kernel @"../evil" {\n  %b, %t = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 8>\n'
                 '  %f = dan.free %b after(%t) {id = 1}\n}\n')
    assert_one_line_error(cli("dan-export", "--output-dir", str(tmp_path), str(k)), "dan-export",
                          "kernel name '../evil' cannot name a file")


def test_export_without_layout_removes_stale_layout_files(tmp_path: Path) -> None:
    (tmp_path / "matmul_4x4x4_memory.txt").write_text("0:0\n")
    (tmp_path / "matmul_4x4x4_spill.txt").write_text("")
    p = cli("dan-export", "--output-dir", str(tmp_path), str(EXAMPLE))
    assert p.returncode == 0 and "removed" in p.stderr
    assert sorted(q.name for q in tmp_path.iterdir()) == ["matmul_4x4x4_schedule.txt"]


BAD_TARGETS = [
    ({"capacity": {"L1": 1, "UB": 1, "L0A": 1, "L0B": 1, "L0C": True}}, "capacities must be integers from 1 to 2^62"),
    ({"capacity": {"L1": 1, "UB": 1, "L0A": 1, "L0B": 1, "L0C": 1}, "peak_tiers": [["L1"]]}, "'peak_tiers' must list distinct tiers"),
    ({"capacity": {"L1": 1, "UB": 1, "L0A": 1, "L0B": 1, "L0C": 1}, "spill_units_per_cycle": 1e-320}, "'spill_units_per_cycle' must be a number"),
]


@pytest.mark.parametrize(("data", "message"), BAD_TARGETS)
def test_bad_target_file_one_line_error(tmp_path: Path, data: dict, message: str) -> None:
    t = tmp_path / "t.json"
    t.write_text(json.dumps(data))
    assert_one_line_error(cli("dan-opt", str(EXAMPLE), "--target", str(t)), "dan-opt", message)


def test_dan_ops_outside_a_kernel_are_refused(tmp_path: Path) -> None:
    f = tmp_path / "f.mlir"
    f.write_text('func.func @f() {\n  %b, %t = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 8>\n  func.return\n}\n')
    assert_one_line_error(cli("dan-opt", str(f)), "dan-opt", "dan.alloc (node 0): must be inside a dan.kernel")


def test_deep_and_huge_inputs_are_one_line_errors(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000)
    assert_one_line_error(cli("dan-opt", str(deep)), "dan-opt", "nested too deeply")
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"Nodes": [{"Id": 2**63, "Op": "ALLOC", "BufId": 0, "Size": 8, "Type": "UB"}], "Edges": []}))
    assert_one_line_error(cli("dan-opt", str(big)), "dan-opt", f"node {2**63}: id {2**63} is out of range (0 to 2^62)")


def test_split_input_errors_go_to_stderr_and_block_the_output_file(tmp_path: Path) -> None:
    src = tmp_path / "s.mlir"
    src.write_text('dan.kernel @a {\n}\n// -----\ndan.kernel @b {\n  %t = dan.compute "EXP" on MTE2 cycles(1) {id = 0}\n}\n')
    out = tmp_path / "o.mlir"
    p = cli("dan-opt", "--split-input-file", str(src), "-o", str(out))
    assert p.returncode == 1 and "chunk 2:" in p.stderr and not out.exists()


def test_replay_of_lowered_streams_matches_the_plan_and_prices_the_flags(tmp_path: Path) -> None:
    """dan-replay on a `lower-sync` output replays the streams: at sync cost 0 the plan's
    makespan; each set and wait costing 1 cycle can only make it longer."""
    plan = cli("dan-replay", "-", "--json", stdin=cli("dan-opt", "--pipeline", "dan", str(EXAMPLE)).stdout)
    lowered = tmp_path / "k.sync.mlir"
    low = cli("dan-opt", "--pipeline", "dan", "-p", "lower-sync", str(EXAMPLE), "-o", str(lowered))
    assert low.returncode == 0, low.stderr
    free = json.loads(cli("dan-replay", str(lowered), "--json").stdout)
    assert free["makespan"] == json.loads(plan.stdout)["makespan"] and free["flags"] > 0
    priced = cli("dan-replay", str(lowered), "--sync-cost", "1")
    assert priced.returncode == 0 and priced.stdout.startswith("// sync @")
    assert int(priced.stdout.split("makespan ")[1].split(",")[0]) > free["makespan"]
    assert_one_line_error(cli("dan-replay", str(lowered), "--sync-cost", "-1"), "dan-replay", "--sync-cost must be >= 0")
    assert_one_line_error(
        cli("dan-replay", str(EXAMPLE), "--sync-cost", "1"), "dan-replay", "--sync-cost goes with a lower-sync output (dan_sync.program)"
    )
