"""dan-batch: every kernel planned as dan-opt plans it, whatever the executor and jobs;
failures reported and survived; --resume; the summary; progress; the executors."""

from __future__ import annotations

import csv
import gc
import io
import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dan.dialect.model.replay import replay
from dan.tools.batch.kernel import BatchError, BatchOptions, KernelTask, discover, plan_kernel
from dan.tools.batch.run import BatchInterrupted, chunks, run_batch
from dan.passes.pipeline.executors import ExecutorError, LocalPool, Serial, make_executor
from dan.lowering.io.frontends import load_kernels
from dan.tools.progress import Progress
from dan.tools.cli import USER_ERRORS, one_line
from tests.test_cli import cli

TIMING = ("seconds", "pass_seconds")


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seven small kernels of every input kind, and one that does not parse."""
    from dan.dialect.model.graph import Plan
    from dan.lowering.io.backends import build_module, mlir_text
    from dan.lowering.gen.synthetic import random_kernel, tiled_matmul
    from dan.lowering.io.graph_files import graph_to_json, write_graph_json
    from dan.dialect.model.graph import KernelView
    from dan.dialect.model.target import CONTEST

    d = tmp_path_factory.mktemp("kernels")
    for seed in range(4):
        write_graph_json(random_kernel(seed, 30), d / f"rand{seed}.json")
    write_graph_json(tiled_matmul(2, 2, 2), d / "mm222.json")
    pair = graph_to_json(tiled_matmul(1, 2, 2, name="pair"))
    (d / "pair_Nodes.csv").write_text("Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs\n" + "".join(
        f"{n['Id']},{n['Op']},{n.get('BufId', '')},{n.get('Size', '')},{n.get('Type', '')},{n.get('Pipe', '')},"
        f"{n.get('Cycles', '')},\"{' '.join(map(str, n.get('Bufs', [])))}\"\n" for n in pair["Nodes"]))
    (d / "pair_Edges.csv").write_text("src,dst\n" + "".join(f"{s},{t}\n" for s, t in pair["Edges"]))
    g = tiled_matmul(1, 1, 3, name="ir_kernel")
    (d / "ir.mlir").write_text(mlir_text(build_module([KernelView(g, Plan(list(range(g.n))), CONTEST)])))
    (d / "broken.json").write_text('{"Nodes": [}')
    (d / "notes.txt").write_text("not a kernel")
    return d


def options(outdir: Path, spec: str = "mpas,dlr,cpe", fmt: str = "plan") -> BatchOptions:
    return BatchOptions(spec, str(outdir), None, fmt, one_line, USER_ERRORS)


def plan_files(outdir: Path) -> dict[str, bytes]:
    """Every output file but the manifests and the summary (which hold timings)."""
    return {str(p.relative_to(outdir)): p.read_bytes() for p in sorted(outdir.rglob("*"))
            if p.is_file() and p.name not in ("batch.json", "summary.json", "summary.csv")}


def untimed(outdir: Path) -> list[dict[str, object]]:
    rows = json.loads((outdir / "summary.json").read_text())["rows"]
    return [{k: v for k, v in row.items() if k not in TIMING} for row in rows]


def test_discover_expands_directories_and_refuses_collisions(kernels: Path, tmp_path: Path) -> None:
    names = [t.name for t in discover([str(kernels)])]
    assert names == ["broken", "ir", "mm222", "pair", "rand0", "rand1", "rand2", "rand3"]
    assert [t.name for t in discover([str(kernels / "notes.txt")])] == ["notes"]  # named: taken as given
    (tmp_path / "mm222.json").write_text("{}")
    with pytest.raises(BatchError, match="two inputs are named 'mm222'"):
        discover([str(kernels), str(tmp_path)])
    with pytest.raises(BatchError, match="no such file"):
        discover([str(tmp_path / "absent")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(BatchError, match="no kernels found"):
        discover([str(tmp_path / "empty")])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 100_000), max_size=30), st.integers(1, 150_000))
def test_chunks_hold_every_task_once_biggest_first(sizes: list[int], limit: int) -> None:
    tasks = [KernelTask(f"k{i}", f"k{i}.json", s) for i, s in enumerate(sizes)]
    groups = chunks(tasks, limit)
    assert sorted(t.name for g in groups for t in g) == sorted(t.name for t in tasks)
    assert all(len(g) == 1 or sum(t.size for t in g) <= limit for g in groups)
    flat = [t.size for g in groups for t in g]
    assert flat == sorted(flat, reverse=True)


def test_a_failing_kernel_is_a_row_not_an_exception(kernels: Path, tmp_path: Path) -> None:
    broken = plan_kernel(KernelTask("broken", str(kernels / "broken.json")), options(tmp_path))
    assert broken.status == "failed" and not broken.files
    assert broken.rows[0]["error"] == "'broken.json': malformed JSON at line 1 column 12: Expecting value"
    bad_pass = plan_kernel(KernelTask("mm222", str(kernels / "mm222.json")), options(tmp_path, "dlr{policy=x}"))
    assert bad_pass.status == "failed" and "policy" in bad_pass.rows[0]["error"]


def batch(*args: str) -> int:
    """dan-batch in this process (the command turns the collector off: turn it back on)."""
    from dan.tools.dan_batch import main

    try:
        with pytest.raises(SystemExit) as e:
            main(list(args))
    finally:
        gc.unfreeze()
        gc.enable()
    return int(e.value.code or 0)


def test_bounds_are_asked_for_and_match_the_replay_s(kernels: Path, tmp_path: Path) -> None:
    from dan.dialect.model.bounds.report import best_bounds, graph_bounds
    from dan.dialect.model.target import CONTEST
    from dan.lowering.io.graph_files import read_graph

    task = KernelTask("mm222", str(kernels / "mm222.json"))
    plain = plan_kernel(task, options(tmp_path))
    (row,) = plan_kernel(task, BatchOptions("mpas,dlr,cpe", str(tmp_path), bounds=True)).rows
    assert "bound_makespan" not in plain.rows[0]
    best = best_bounds(graph_bounds(read_graph(kernels / "mm222.json"), CONTEST), True, row["l0_rule"])
    assert {m: row[f"bound_{m}"] for m in best} == best
    assert all(row[m] >= b for m, b in best.items())
    assert {m: row[f"gap_{m}"] for m in best} == {m: (row[m] - b) / row[m] if row[m] else 0.0 for m, b in best.items()}


def test_batch_plans_as_dan_opt_whatever_the_jobs(kernels: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    assert batch("--pipeline", "dan", str(kernels), "-o", str(one), "-j", "1") == 1
    err1 = capsys.readouterr().err
    named = sorted(str(p) for p in kernels.iterdir() if p.suffix != ".txt")  # both halves of the CSV pair too
    p2 = cli("dan-batch", "--pipeline", "dan", *named, "-o", str(two), "-j", "2")
    assert p2.returncode == 1, p2.stderr
    for err, out in ((err1, one), (p2.stderr, two)):  # no terminal: a line per kernel, failures in one line
        assert "Traceback" not in err
        assert err.count("dan-batch: [") == 8
        assert "broken failed: 'broken.json': malformed JSON" in err
        assert err.endswith(f"1 of 8 kernels failed (see '{out / 'summary.csv'}')\n")
    assert plan_files(one) == plan_files(two) and len(plan_files(one)) == 21
    assert untimed(one) == untimed(two)
    rows = {row["input"]: row for row in untimed(one)}
    assert rows["ir"]["kernel"] == "ir_kernel"
    assert all(rows[k]["status"] == "ok" and rows[k]["valid"] for k in rows if k != "broken")
    ref = tmp_path / "ref"
    assert cli("dan-opt", "--pipeline", "dan", str(kernels / "pair_Nodes.csv"), "-t", "plan", "-o", str(ref)).returncode == 0
    assert {p.name: p.read_bytes() for p in ref.iterdir()} == {p.name: p.read_bytes() for p in (one / "pair").iterdir()
                                                                if p.name != "batch.json"}
    with (one / "summary.csv").open() as f:
        table = list(csv.DictReader(f))
    assert [r["input"] for r in table] == [r["input"] for r in untimed(one)]
    assert table[2]["makespan"] == str(rows["mm222"]["makespan"])


def test_resume_keeps_complete_outputs_and_replans_changed_ones(kernels: Path, tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    shutil.copytree(kernels, src)
    (src / "notes.txt").unlink()
    run = Serial()
    first = run_batch(discover([str(src)]), options(out), run, Progress("t", 8, quiet=True))
    stamp = (out / "rand0" / "rand0_schedule.txt").stat().st_mtime_ns
    (out / "rand1" / "rand1_memory.txt").unlink()  # incomplete outputs
    (src / "rand2.json").write_text((src / "rand3.json").read_text())  # a changed input
    again = run_batch(discover([str(src)]), options(out), run, Progress("t", 8, quiet=True), resume=True)
    resumed = {row["input"] for row in again if row["resumed"]}
    assert resumed == {"ir", "mm222", "pair", "rand0", "rand3"}
    assert (out / "rand0" / "rand0_schedule.txt").stat().st_mtime_ns == stamp
    strip = [{k: v for k, v in r.items() if k not in (*TIMING, "resumed")} for r in first if r["input"] != "rand2"]
    assert strip == [{k: v for k, v in r.items() if k not in (*TIMING, "resumed")} for r in again if r["input"] != "rand2"]
    order_only = run_batch(discover([str(src / "mm222.json")]), options(out, "mpas"), run,
                           Progress("t", 1, quiet=True), resume=True)
    assert not order_only[0]["resumed"]  # another pipeline: planned again, the old layout files removed
    assert sorted(p.name for p in (out / "mm222").iterdir()) == ["batch.json", "mm222_schedule.txt"]


def test_resume_replans_outputs_emptied_or_changed_after_the_run(kernels: Path, tmp_path: Path) -> None:
    """The manifest records each output's size and SHA-256: an output emptied, truncated
    or edited after the run is planned again (and restored), not trusted."""
    out = tmp_path / "out"
    tasks = discover([str(kernels / f"{name}.json") for name in ("mm222", "rand0", "rand1", "rand3")])
    run_batch(tasks, options(out), Serial(), Progress("t", 4, quiet=True))
    first = plan_files(out)
    record = json.loads((out / "mm222" / "batch.json").read_text())
    assert set(record["outputs"]) == {"mm222_schedule.txt", "mm222_memory.txt", "mm222_spill.txt"}
    assert record["outputs"]["mm222_memory.txt"]["bytes"] == len(first["mm222/mm222_memory.txt"])
    (out / "mm222" / "mm222_memory.txt").write_text("")  # emptied
    schedule = out / "rand0" / "rand0_schedule.txt"
    schedule.write_bytes(schedule.read_bytes()[:-3])  # truncated
    memory = out / "rand1" / "rand1_memory.txt"
    memory.write_bytes(memory.read_bytes().replace(b"0", b"1", 1))  # same size, other bytes
    again = run_batch(tasks, options(out), Serial(), Progress("t", 4, quiet=True), resume=True)
    assert {row["input"]: row["resumed"] for row in again} == {"mm222": False, "rand0": False, "rand1": False,
                                                               "rand3": True}
    assert all(row["status"] == "ok" and row["valid"] for row in again)
    assert plan_files(out) == first
    legacy = {k: v for k, v in json.loads((out / "rand3" / "batch.json").read_text()).items() if k != "outputs"}
    (out / "rand3" / "batch.json").write_text(json.dumps(legacy))  # a manifest without output digests
    assert not run_batch(tasks[-1:], options(out), Serial(), Progress("t", 1, quiet=True), resume=True)[0]["resumed"]


def test_mlir_output_replays_valid(kernels: Path, tmp_path: Path) -> None:
    rows = run_batch(discover([str(kernels / "ir.mlir"), str(kernels / "mm222.json")]), options(tmp_path, fmt="mlir"),
                     Serial(), Progress("t", 2, quiet=True))
    assert [r["status"] for r in rows] == ["ok", "ok"]
    for name, row in zip(("ir", "mm222"), rows):
        (k,) = load_kernels(str(tmp_path / name / f"{name}.mlir"), None)
        m = replay(k.graph, k.plan, k.target)
        assert m.valid and k.plan.offsets is not None and m.makespan == row["makespan"]


def test_shipped_inputs_plan_and_fail_as_read_in_place(kernels: Path, tmp_path: Path) -> None:
    (tmp_path / "bad_ir.mlir").write_text("dan.kernel @k {\n  %x = dan.nope\n}\n")
    tasks = discover([str(kernels / "broken.json"), str(kernels / "pair_Nodes.csv"), str(kernels / "ir.mlir"),
                      str(tmp_path / "bad_ir.mlir")])
    here = run_batch(tasks, options(tmp_path / "here"), Serial(), Progress("t", 4, quiet=True))
    sent = run_batch(tasks, options(tmp_path / "sent"), Serial(), Progress("t", 4, quiet=True), ship=True)
    assert plan_files(tmp_path / "here") == plan_files(tmp_path / "sent") and plan_files(tmp_path / "here")
    assert [{k: v for k, v in r.items() if k not in TIMING} for r in here] == \
        [{k: v for k, v in r.items() if k not in TIMING} for r in sent]
    assert [r["status"] for r in sent] == ["failed", "failed", "ok", "ok"]
    assert str(tmp_path / "bad_ir.mlir") in sent[0]["error"]  # IR names the user's path, not a copy's


def test_ray_gives_the_local_plans(kernels: Path, tmp_path: Path) -> None:
    pytest.importorskip("ray")
    from dan.passes.pipeline.executors import RayPool

    tasks = [t for t in discover([str(kernels)]) if t.name != "notes"]
    local = run_batch(tasks, options(tmp_path / "local"), LocalPool(2), Progress("t", 8, quiet=True))
    ray = RayPool(2, None)
    try:
        remote = run_batch(tasks, options(tmp_path / "ray"), ray, Progress("t", 8, quiet=True), ship=True)
    finally:
        ray.close()
    assert plan_files(tmp_path / "local") == plan_files(tmp_path / "ray")
    assert [{k: v for k, v in r.items() if k not in TIMING} for r in local] == \
        [{k: v for k, v in r.items() if k not in TIMING} for r in remote]


class _InterruptedAfterOne(Serial):
    def map_unordered(self, fn, items):  # type: ignore[no-untyped-def]
        yield 0, fn(items[0]), None
        raise KeyboardInterrupt


def test_an_interrupted_batch_keeps_what_finished(kernels: Path, tmp_path: Path) -> None:
    tasks = [KernelTask(name, str(kernels / f"{name}.json"), 1 << 20) for name in ("mm222", "rand0", "rand1")]
    with pytest.raises(BatchInterrupted) as stop:  # (big enough for a chunk each)
        run_batch(tasks, options(tmp_path), _InterruptedAfterOne(), Progress("t", 3, quiet=True))
    assert [(r["input"], r["status"]) for r in stop.value.rows] == [
        ("mm222", "ok"), ("rand0", "interrupted"), ("rand1", "interrupted")]
    assert (tmp_path / "mm222" / "batch.json").exists() and not (tmp_path / "rand0").exists()


def _square_or_fail(x: int) -> int:
    if x == 3:
        raise ValueError("three")
    if x == -1:
        os._exit(3)
    return x * x


def test_executors_report_each_items_error_and_go_on() -> None:
    for executor in (Serial(), LocalPool(2)):
        try:
            got = {i: (v, e) for i, v, e in executor.map_unordered(_square_or_fail, [1, 2, 3, 4])}
        finally:
            executor.close()
        assert {i: v for i, (v, _) in got.items()} == {0: 1, 1: 4, 2: None, 3: 16}
        assert str(got[2][1]) == "three"
    pool = LocalPool(2)  # a worker dies: the pool starts again, and only the item that killed it fails
    try:
        got = {i: (v, e) for i, v, e in pool.map_unordered(_square_or_fail, [1, -1, 2, 3, 4, 5])}
    finally:
        pool.close()
    assert {i: v for i, (v, _) in got.items()} == {0: 1, 1: None, 2: 4, 3: None, 4: 16, 5: 25}
    assert "terminated abruptly" in str(got[1][1]) and str(got[3][1]) == "three"
    with pytest.raises(ExecutorError, match="--jobs must be at least 1"):
        make_executor("local", 0)
    with pytest.raises(ExecutorError, match="unknown executor 'mpi'"):
        make_executor("mpi")


def test_ray_missing_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ExecutorError, match=r"needs Ray: pip install 'dan-scheduler\[ray\]'"):
        make_executor("ray", 2)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal_lines_otherwise_failures_always() -> None:
    lines, quiet, bar = io.StringIO(), io.StringIO(), _Terminal()
    for stream, q in ((lines, False), (quiet, True), (bar, False)):
        p = Progress("dan-batch", 2, q, stream)
        p.done("a", "ok", 0.5)
        p.done("b", "failed", 0.1, "bad input")
        p.close()
    assert lines.getvalue() == "dan-batch: [1/2] a ok 0.50 s\ndan-batch: [2/2] b failed: bad input\n"
    assert quiet.getvalue() == "dan-batch: [2/2] b failed: bad input\n"
    assert "2/2" in bar.getvalue() and "dan-batch: [2/2] b failed: bad input\n" in bar.getvalue()


@pytest.mark.parametrize(("args", "message"), [
    (["K", "-o", "O"], "no passes: name a pipeline"),
    (["K", "-o", "O", "--pipeline", "fast"], "unknown pipeline 'fast'"),
    (["K", "-o", "O", "-p", "mpas{policy=x}"], "policy"),
    (["absent.json", "-o", "O", "-p", "mpas"], "no such file or directory: 'absent.json'"),
    (["K", "-o", "O", "-p", "mpas", "--address", "ray://h:1"], "--address goes with --executor ray"),
    (["K", "-o", "O", "-p", "mpas", "-j", "0"], "--jobs must be at least 1"),
])
def test_cli_errors_are_one_line(kernels: Path, tmp_path: Path, args: list[str], message: str,
                                capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(kernels / "mm222.json") if a == "K" else str(tmp_path / "out") if a == "O" else a for a in args]
    assert batch(*args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("dan-batch: error: ") and message in err, err
    assert not (tmp_path / "out").exists()
