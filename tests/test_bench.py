"""dan-bench: every method valid, every table written, deterministic output."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from dan.dialect.model.target import CONTEST
from dan.lowering.io.atomic import atomic_write_all
from dan.lowering.io.graph_files import read_graph
from dan.tools.dan_bench import DAN, METHODS, METRICS, main, run_method
from tests.shared_data import CASES, workload

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "matmul_4x4x4.json"


def bench(tmp_path: Path, *args: str) -> int:
    with pytest.raises(SystemExit) as e:
        main([*args, "--out", str(tmp_path)])
    return int(e.value.code or 0)


QUICK = "original,hmcos,cosma,dan,dan-tune"
"""Every kind of method (baseline + lru layout, own layout, ours) without the slow portfolios."""
TABLES = ("table2.csv", "table3.csv", "table4.csv", "table5.csv", "table6.csv")


def test_bench_writes_all_tables_deterministically(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench(tmp_path / "a", str(EXAMPLE), "--methods", QUICK) == 0
    assert bench(tmp_path / "b", str(EXAMPLE), "--methods", QUICK) == 0
    names = {p.name for p in (tmp_path / "a").iterdir()}
    assert {"tables.md", "results.json", "times.md", "times.csv", *TABLES} <= names
    for name in ("tables.md", "results.json", *TABLES):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    md = (tmp_path / "a" / "tables.md").read_text()
    for title in ("Table 2", "Table 3", "Table 4", "Table 5", "Table 6"):
        assert title in md
    assert "dan vs best external" in md and "dan-tune vs best external" in md
    assert "matmul_4x4x4 (640 nodes)" in capsys.readouterr().err


def test_bounds_table_and_json_put_each_metric_beside_its_bound(tmp_path: Path) -> None:
    assert bench(tmp_path, str(EXAMPLE), "--methods", "original,dan") == 0
    results = json.loads((tmp_path / "results.json").read_text())["matmul_4x4x4"]
    head, *rows = list(csv.reader(io.StringIO((tmp_path / "table6.csv").read_text())))
    assert head[:5] == ["workload", "method", "peak_l1_ub", "peak_l1_ub bound", "peak_l1_ub / bound"]
    assert head[-2:] == ["busiest pipe with spills", "makespan / busiest pipe"]
    assert [r[1] for r in rows] == ["original", "dan"]
    for row in rows:
        got = results[row[1]]
        for metric in METRICS:
            i = head.index(f"{metric} bound")
            bound = got["bounds"][metric]["bound"]
            assert int(row[i].replace(",", "")) == bound <= got[metric]
            assert row[i + 1] == (f"{got[metric] / bound:.3f}" if bound else "1.000" if got[metric] == 0 else "inf")
        plan_pipe = got["bounds"]["makespan"]["plan_pipe_load"]
        assert row[-2].endswith(f"{plan_pipe:,}") and row[-1] == f"{got['makespan'] / plan_pipe:.3f}"
        assert got["packing"]["conflict_free"] is True
        assert all(t["max_live"] <= t["capacity"] for t in got["packing"]["tiers"].values())
    # Table 2 keeps its columns.
    head2 = next(csv.reader(io.StringIO((tmp_path / "table2.csv").read_text())))
    assert head2 == ["workload", "method", "valid", "L0 rule", *METRICS, *(f"{m} / original" for m in METRICS)]


def test_unknown_method_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench(tmp_path, str(EXAMPLE), "--methods", "dan,tvm") == 1
    assert capsys.readouterr().err == f"dan-bench: error: unknown method 'tvm' (valid: {', '.join(METHODS)})\n"


@pytest.mark.parametrize("case", CASES)
def test_every_method_is_valid_on_the_workloads(case: str) -> None:
    graph = read_graph(workload(case))
    for method in (m for m in METHODS if not m.startswith("dan-best")):  # dan-best: tests/test_best.py
        run = run_method(method, graph, CONTEST)
        assert run.metrics.valid, (method, run.metrics.violation)


def test_plots_are_written_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    old = {tmp_path / f"{m}.png": f"old {m}".encode() for m in ("a", "b", "c")}
    for path, data in old.items():
        path.write_bytes(data)
    real_mkstemp, calls = tempfile.mkstemp, []

    def interrupted(*args: object, **kwargs: object) -> tuple[int, str]:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_mkstemp(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(tempfile, "mkstemp", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_all({path: b"new" * 1000 for path in old})
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == old  # old images, no temporaries


def test_missing_matplotlib_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    assert bench(tmp_path, str(EXAMPLE), "--methods", "original,dan") == 0
    err = capsys.readouterr().err
    assert "dan-bench: matplotlib is not installed: no plots" in err
    assert (tmp_path / "tables.md").exists() and not list(tmp_path.glob("*.png"))


def test_a_bad_workload_is_named_and_the_others_are_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"Nodes": [')
    out = tmp_path / "out"
    assert bench(out, str(bad), str(EXAMPLE), str(EXAMPLE), "--methods", "original,dan") == 1
    err = capsys.readouterr().err
    assert f"dan-bench: error: workload '{bad}': " in err
    assert f"dan-bench: error: workload '{EXAMPLE}': another workload is named 'matmul_4x4x4'" in err
    assert "matmul_4x4x4 | dan |" in (out / "tables.md").read_text()
    assert bench(tmp_path / "none", str(bad), "--methods", "dan") == 1
    assert capsys.readouterr().err.endswith("dan-bench: error: no workload could be planned (1 failed)\n")
    assert not (tmp_path / "none").exists()


def test_methods_are_the_named_pipelines() -> None:
    from dan.passes.pipeline.named import PIPELINES

    assert METHODS == tuple(PIPELINES)
    assert DAN == tuple(m for m in PIPELINES if m.startswith("dan")) and {"dan", "dan-tune"} <= set(DAN)
    graph = read_graph(EXAMPLE)
    dan = run_method("dan", graph, CONTEST)
    assert list(dan.stages) == ["mpas", "dlr", "cpe"] and set(dan.extra) == {"mpas+dlr", "mpas+dlr-lru", "mpas+dlr+cpe-events"}
    assert list(run_method("original", graph, CONTEST).stages) == ["original", "dlr"]
