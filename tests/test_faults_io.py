"""Faults of reading and writing kernels, one test each: a buffer larger than its tier,
an explicitly chosen frontend, CPE without a layout, OR-Tools missing, the format tables."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from tests.test_cli import EXAMPLE, ROOT, assert_one_line_error, cli

TOO_BIG = {
    "Nodes": [
        {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 2048, "Type": "UB"},
        {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [0]},
        {"Id": 2, "Op": "FREE", "BufId": 0, "Size": 2048, "Type": "UB"},
    ],
    "Edges": [[0, 1], [1, 2]],
}
TOO_BIG_MESSAGE = "'k.json': node 0: buffer 0 of size 2048 exceeds UB capacity 1024 of target contest"


def test_buffer_larger_than_its_tier_is_refused_on_every_path(tmp_path: Path) -> None:
    k = tmp_path / "k.json"
    k.write_text(json.dumps(TOO_BIG))
    out = tmp_path / "out"
    for prog, *args in (
        ("dan-opt", str(k), "-o", str(out / "k.mlir")),
        ("dan-opt", str(k), "-t", "plan", "-o", str(out)),
        ("dan-opt", str(k), "-t", "graph", "-o", str(out / "g.json")),
        ("dan-replay", str(k)),
        ("dan-replay", str(k), "--json"),
        ("dan-export", str(k), "-o", str(out)),
    ):
        assert_one_line_error(cli(prog, *args), prog, TOO_BIG_MESSAGE)
    assert not out.exists()
    assert_one_line_error(cli("dan-opt", "-", stdin=json.dumps(TOO_BIG)), "dan-opt",
                          "standard input: node 0: buffer 0 of size 2048 exceeds UB capacity 1024")
    # Read for a core where it fits, it is a kernel like any other.
    assert cli("dan-opt", str(k), "--target", "ascend910b", "-o", str(tmp_path / "k.mlir")).returncode == 0


def test_ir_read_for_a_smaller_target_is_refused(tmp_path: Path) -> None:
    tiny = tmp_path / "tiny.json"
    tiny.write_text(json.dumps({"name": "tiny", "capacity": {t: 64 for t in ("L1", "UB", "L0A", "L0B", "L0C")}}))
    k = tmp_path / "k.mlir"
    assert cli("dan-opt", "--pipeline", "dan", str(EXAMPLE), "-o", str(k)).returncode == 0
    target = ("--target", str(tiny))
    assert_one_line_error(cli("dan-replay", str(k), *target), "dan-replay",
                          "kernel @matmul_4x4x4: node 0: buffer 0 of size 128 exceeds L1 capacity 64 of target tiny")
    assert_one_line_error(cli("dan-export", str(k), *target, "-o", str(tmp_path / "x")), "dan-export",
                          "exceeds L1 capacity 64 of target tiny")
    assert_one_line_error(cli("dan-opt", str(k), *target), "dan-opt", "of size 128 exceeds")
    assert not (tmp_path / "x").exists()


def test_replay_calls_no_order_only_plan_valid_when_a_buffer_cannot_fit() -> None:
    from dan.dialect.model.graph import NodeRecord, Plan, build_graph
    from dan.dialect.model.replay import replay
    from dan.dialect.model.target import CONTEST, load_target

    records = [NodeRecord(n["Id"], n["Op"], n.get("BufId", -1), n.get("Size", 0), n.get("Type", ""),
                          n.get("Pipe", ""), n.get("Cycles", 0), tuple(n.get("Bufs", ()))) for n in TOO_BIG["Nodes"]]
    big = load_target("ascend910b")
    graph = build_graph("k", records, [tuple(e) for e in TOO_BIG["Edges"]], big)
    assert replay(graph, Plan([0, 1, 2]), big).valid
    m = replay(graph, Plan([0, 1, 2]), CONTEST)
    assert not m.valid and m.violation is not None and m.violation.kind == "out-of-bounds"
    assert m.violation.message == "node 0: buffer 0 of size 2048 exceeds UB capacity 1024 of target contest"


def test_an_explicit_frontend_is_honoured_and_a_mismatch_is_one_line(tmp_path: Path) -> None:
    mlir = tmp_path / "k.mlir"
    assert cli("dan-opt", str(EXAMPLE), "-o", str(mlir)).returncode == 0
    cases = (
        (("-f", "csv", str(EXAMPLE)), f"'{EXAMPLE}': -f csv reads a graph as NAME_Nodes.csv beside NAME_Edges.csv, "
                                      "but this is graph JSON"),
        (("-f", "json", str(mlir)), f"'{mlir}': -f json reads graph JSON, but this is dan IR text"),
        (("-f", "mlir", str(EXAMPLE)), f"'{EXAMPLE}': -f mlir reads dan IR text, but this is graph JSON"),
        (("-f", "csv", str(mlir)), "but this is dan IR text"),
    )
    for args, message in cases:
        assert_one_line_error(cli("dan-opt", *args, "-o", str(tmp_path / "out.mlir")), "dan-opt", message)
    assert_one_line_error(cli("dan-opt", "-f", "json", "-", stdin=mlir.read_text()), "dan-opt",
                          "standard input: -f json reads graph JSON, but this is dan IR text")
    assert not (tmp_path / "out.mlir").exists()
    # The chosen frontend wins over the extension: graph JSON in a `.csv` file reads as JSON.
    odd = tmp_path / "odd.csv"
    odd.write_text(EXAMPLE.read_text())
    p = cli("dan-opt", "-f", "json", str(odd), "-t", "graph")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == json.loads(EXAMPLE.read_text())


def test_cpe_without_a_layout_is_refused_like_lower_sync(tmp_path: Path) -> None:
    out = tmp_path / "k.mlir"
    for spec, prog in (("mpas,cpe", "cpe"), ("mpas,lower-sync", "lower-sync")):
        p = cli("dan-opt", str(EXAMPLE), "-p", spec, "-o", str(out))
        assert_one_line_error(p, "dan-opt", f"{prog}: kernel @matmul_4x4x4: the plan has no layout "
                                            "(run a layout pass such as dlr first)")
    assert not out.exists()


def _without_ortools(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every import of OR-Tools fail, as on a machine without it."""
    from dan.passes.packing import cpsat

    for name in [m for m in sys.modules if m == "ortools" or m.startswith("ortools.")] + ["ortools"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setattr(cpsat, "_warned", False)


def test_missing_ortools_warns_once_naming_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    from dan.passes.packing.cpsat import MissingSolverWarning, available, warn_missing

    assert available()
    _without_ortools(monkeypatch)
    assert not available()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert not warn_missing("dlr{packing=offline} packs without CP-SAT")
        assert not warn_missing("dan-best lays out without CP-SAT")
    assert [str(w.message) for w in caught if w.category is MissingSolverWarning] == [
        "OR-Tools cannot be imported, so dlr{packing=offline} packs without CP-SAT; "
        "install it with 'pip install ortools'"
    ]


def test_missing_ortools_is_one_warning_line_from_the_commands(tmp_path: Path) -> None:
    kernel = tmp_path / "p.json"
    assert cli("dan-gen", "packing", "--seed", "1", "-o", str(kernel)).returncode == 0
    code = ("import sys; sys.modules['ortools'] = None\n"
            "from dan.tools.dan_opt import main; sys.argv[0] = 'dan-opt'; main()")
    for spec in ("dlr{packing=offline}", "dan-best{objective=traffic work=20000 jobs=1}"):
        p = subprocess.run([sys.executable, "-c", code, str(kernel), "-p", spec, "-o", str(tmp_path / "k.mlir")],
                           capture_output=True, text=True, cwd=ROOT)
        assert p.returncode == 0, p.stderr
        lines = p.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("dan-opt: warning: OR-Tools cannot be imported, so "), p.stderr
        assert lines[0].endswith("install it with 'pip install ortools'")
        assert spec.split("{")[0] in lines[0]


def test_one_table_of_formats_feeds_both_commands_and_their_help() -> None:
    from dan.lowering.io.formats import OUTPUT_FORMATS, formats_of
    from dan.lowering.io.frontends import FRONTENDS

    assert list(formats_of("dan-opt")) == ["mlir", "plan", "graph"]
    assert list(formats_of("dan-export")) == ["contest", "graph", "chrome-trace", "png", "svg"]
    assert OUTPUT_FORMATS["plan"].writer is OUTPUT_FORMATS["contest"].writer
    opt_help = " ".join(cli("dan-opt", "--help").stdout.split())
    export_help = " ".join(cli("dan-export", "--help").stdout.split())
    assert "{mlir,plan,graph}" in opt_help and "{json,csv,mlir}" in opt_help
    for name, fmt in formats_of("dan-export").items():
        assert f"{name}: {fmt.help}" in export_help
    for name, frontend in FRONTENDS.items():
        assert f"{name}: {frontend.reads}" in opt_help
    assert_one_line_error(cli("dan-export", "--format", "xml", str(EXAMPLE)), "dan-export",
                          "unknown format 'xml' (valid: contest, graph, chrome-trace, png, svg)")


def test_every_export_format_writes_what_the_writers_write(tmp_path: Path) -> None:
    """The command adds nothing to its writer: same files, same bytes."""
    from dan.lowering.io.formats import WriteRequest, formats_of
    from dan.lowering.io.frontends import load_kernels

    k = tmp_path / "k.mlir"
    assert cli("dan-opt", "--pipeline", "dan", str(EXAMPLE), "-o", str(k)).returncode == 0
    for name, fmt in formats_of("dan-export").items():
        if name in ("png", "svg"):
            continue  # pictures: tests/test_export_images.py
        out = tmp_path / name
        p = cli("dan-export", "--format", name, "-o", str(out), str(k))
        assert p.returncode == 0, p.stderr
        written = fmt.writer(load_kernels(str(k), None), WriteRequest(out))
        assert p.stdout.splitlines() == [str(path) for path in written.files]
        assert {path: path.read_bytes() for path in out.iterdir()} == {
            path: data.encode() if isinstance(data, str) else data for path, data in written.files.items()
        }


def test_missing_ortools_warns_when_the_planned_eviction_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """`dlr{policy=planned}` keeps its greedy eviction plan without OR-Tools, and says so."""
    from dan.lowering.gen.synthetic import random_kernel
    from dan.passes.dan.dlr.eviction_plan import eviction_plan
    from dan.passes.packing.cpsat import MissingSolverWarning
    from tests.test_dlr_layout import shrunk

    graph = random_kernel(3, ops=80)
    target, order, footprint = shrunk(graph), list(range(graph.n)), list(graph.buf_size)
    greedy = eviction_plan(graph, order, target, footprint, 0)
    _without_ortools(monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert eviction_plan(graph, order, target, footprint, 1.0) == greedy
    assert [str(w.message) for w in caught if w.category is MissingSolverWarning] == [
        "OR-Tools cannot be imported, so dlr{policy=planned} keeps its greedy eviction plan; "
        "install it with 'pip install ortools'"
    ]
