"""`convert-linalg-to-dan` beyond matmul: the attention pattern (FlashAttention_Case0),
chains of convolutions (Conv_Case0 within dan-gen's deviation), vector ops on ragged
shapes, what stays with a remark, and stock passes around the lowering."""

from __future__ import annotations

from pathlib import Path

import pytest

from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST, load_target
from dan.lowering.gen.presets import PRESETS
from dan.lowering.io.graph_files import read_graph
from dan.passes.dan.cpe.reorder import cpe
from dan.passes.dan.dlr.layout import dlr
from dan.passes.dan.mpas.search import mpas
from tests.linalg_cases import attention_text, canonical, conv_chain_text, conv_text, lower, matmul_text
from tests.shared_data import workload

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _valid(graph, target=CONTEST) -> bool:  # noqa: ANN001
    plan = cpe(graph, dlr(graph, mpas(graph, target), target), target)
    return replay(graph, plan, target).valid


@pytest.mark.parametrize("text", [(EXAMPLES / "linalg_attention.mlir").read_text(), attention_text(32, 32, 16, 16)])
def test_attention_is_flash_attention_case0(text: str) -> None:
    module, (graph,) = lower(text)
    assert canonical(graph) == canonical(read_graph(workload("FlashAttention_Case0")))
    assert not [o for o in module.walk() if o.name.startswith("linalg.")]


def test_conv_chain_is_within_the_preset_deviation_of_conv_case0() -> None:
    _, (graph,) = lower((EXAMPLES / "linalg_conv.mlir").read_text())
    traced = read_graph(workload("Conv_Case0"))
    for ours, theirs in ((graph.n, traced.n), (sum(map(len, graph.preds)), sum(map(len, traced.preds)))):
        assert abs(ours - theirs) <= 0.05 * theirs
    assert PRESETS["Conv_Case0"][0] == "conv"


@pytest.mark.parametrize("sq,skv,d,t", [(16, 40, 8, "f16"), (8, 8, 8, "f32")])
def test_other_attention_shapes_plan_valid(sq: int, skv: int, d: int, t: str) -> None:
    _, graphs = lower(attention_text(sq, skv, d, d, t))
    assert len(graphs) == 1 and _valid(graphs[0])


def test_attention_that_does_not_tile_lowers_op_by_op_with_a_remark(capsys: pytest.CaptureFixture[str]) -> None:
    module, graphs = lower(attention_text(20, 32, 16, 16))
    assert len(graphs) == 3 and all(_valid(g) for g in graphs)  # matmul, the fused softmax, matmul
    assert "do not divide" in capsys.readouterr().err
    assert not [o for o in module.walk() if o.name.startswith("linalg.")]


def test_elementwise_chain_fuses_into_one_kernel() -> None:
    module, (graph,) = lower((EXAMPLES / "linalg_elementwise.mlir").read_text())
    assert _valid(graph)
    (launch,) = [o for o in module.walk() if o.name == "dan.launch"]
    assert launch.lowered.data == "linalg.add+linalg.exp+linalg.reduce+linalg.generic"  # type: ignore[attr-defined]
    assert [str(a.name_hint) for a in launch.operands] == ["a", "b", "y"]
    rows = 20  # one row a tile: two loads, one store each, the rest in UB
    assert (graph.ops.count("COPY_IN"), graph.ops.count("COPY_OUT")) == (2 * rows, rows)
    assert {"ADD", "EXP", "ROWMAX", "COMPACT", "MUL", "SUB"} <= set(graph.ops)


def _chain(rows: int, cols: int, t: str) -> str:
    ty = f"memref<{rows}x{cols}x{t}>"
    return (f"func.func @f(%a: {ty}, %b: {ty}, %c: {ty}) {{\n  %s = memref.alloc() : {ty}\n"
            f"  linalg.mul ins(%a, %b : {ty}, {ty}) outs(%s : {ty})\n  linalg.exp ins(%s : {ty}) outs(%s : {ty})\n"
            f"  linalg.sub ins(%s, %a : {ty}, {ty}) outs(%c : {ty})\n  memref.dealloc %s : {ty}\n  return\n}}\n")


@pytest.mark.parametrize("rows,cols,t,kernels", [
    (7, 5, "f16", 1), (3, 10, "f32", 1), (3, 40, "f32", 1), (5, 300, "f16", 1), (1, 1, "f32", 1)])
def test_vector_shapes_plan_valid(rows: int, cols: int, t: str, kernels: int) -> None:
    """An elementwise chain fuses, in row chunks where a row does not fit a tile (40 f32, 300 f16)."""
    _, graphs = lower(_chain(rows, cols, t))
    assert len(graphs) == kernels and all(_valid(g) for g in graphs)


@pytest.mark.parametrize("layers,residual,used_after,kernels", [
    (4, {1, 3}, None, [(4, 4)]),  # residual on every odd layer: CONV_ADDs
    (3, set(), None, [(3, 0)]),
    (4, {1}, None, [(3, 2), (1, 0)]),  # layer 3 has no add: the chain stops before it
    (4, set(), 1, [(2, 0), (2, 0)]),  # layer 1's value is used after: the chain ends there
])
def test_conv_chains(layers: int, residual: set[int], used_after: int | None, kernels: list) -> None:
    """(layers, CONV_ADDs) of each kernel: 16 channels are two groups of one block, so a
    layer moves four weight tiles and a residual layer's two output groups end in CONV_ADD."""
    _, graphs = lower(conv_chain_text(layers, residual, used_after))
    assert [(g.ops.count("MOVE") // 4, g.ops.count("CONV_ADD")) for g in graphs] == kernels
    assert all(_valid(g) for g in graphs)


@pytest.mark.parametrize("dims", [(1, 3, 10, 10, 16, 3), (1, 20, 7, 5, 12, 3), (2, 64, 16, 16, 64, 3)])
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_other_conv_shapes_plan_valid(dims: tuple[int, ...], layout: str) -> None:
    _, (graph,) = lower(conv_text(*dims, layout=layout))
    assert _valid(graph)


def test_conv_on_another_target() -> None:
    _, (big,) = lower(conv_text(1, 16, 6, 6, 16, 3, "nhwc"), "ascend910b")
    assert _valid(big, load_target("ascend910b"))


@pytest.mark.parametrize("cols,kernels", [(16, 1), (300, 2)])
def test_a_statistic_read_in_a_run_needs_whole_rows(cols: int, kernels: int) -> None:
    """Row max then subtract: one kernel when a row fits a tile, else the subtraction
    starts a kernel of its own (a chunk cannot read its row's whole maximum)."""
    s, r = f"memref<4x{cols}xf16>", "memref<4xf16>"
    maps = ('{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, '
            'affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}')
    text = (f"func.func @f(%a: {s}, %m: {r}, %y: {s}) {{\n"
            f"  linalg.reduce ins(%a : {s}) outs(%m : {r}) dimensions = [1]\n"
            "    (%x: f16, %acc: f16) {\n      %v = arith.maximumf %x, %acc : f16\n      linalg.yield %v : f16\n    }\n"
            f"  linalg.generic {maps} ins(%a, %m : {s}, {r}) outs(%y : {s}) {{\n"
            "  ^bb0(%x: f16, %z: f16, %o: f16):\n    %v = arith.subf %x, %z : f16\n    linalg.yield %v : f16\n  }\n"
            "  return\n}\n")
    _, graphs = lower(text)
    assert len(graphs) == kernels and all(_valid(g) for g in graphs)


def test_unsupported_ops_stay_with_a_remark(capsys: pytest.CaptureFixture[str]) -> None:
    text = ("func.func @f(%a: memref<8x8xf16>, %b: memref<8x8xf16>) {\n"
            "  linalg.transpose ins(%a : memref<8x8xf16>) outs(%b : memref<8x8xf16>) permutation = [1, 0]\n"
            "  linalg.exp ins(%a : memref<8x8xf16>) outs(%b : memref<8x8xf16>)\n  return\n}\n")
    module, graphs = lower(text)
    assert len(graphs) == 1
    assert "unsupported op linalg.transpose" in capsys.readouterr().err
    (op,) = [o for o in module.walk() if o.name == "linalg.transpose"]
    assert "unsupported" in op.attributes["dan.not_lowered"].data


def test_stock_passes_run_before_and_after() -> None:
    from xdsl.transforms import get_all_passes

    from dan.lowering.io.ir_io import context

    module, graphs = lower((EXAMPLES / "linalg_elementwise.mlir").read_text())
    passes = get_all_passes()
    for name in ("canonicalize", "cse", "dce"):
        passes[name]()().apply(context(), module)
    module.verify()
    assert len([o for o in module.walk() if o.name == "dan.launch"]) == len(graphs) == 1
    assert len([o for o in module.walk() if o.name == "dan.kernel"]) == 1


def test_node_counts_come_before_building() -> None:
    """Each family counts its kernel's nodes from the shape: exactly for the matmul,
    attention and conv families, at most for a vector program."""
    from dan.lowering.io.ir_io import parse_module
    from dan.lowering.linalg import attention
    from dan.lowering.linalg.convert import FAMILIES

    cases = [(matmul_text(20, 12, 9), True), (attention_text(32, 32, 16, 16), True),
             (conv_chain_text(4, {1, 3}), True), ((EXAMPLES / "linalg_elementwise.mlir").read_text(), False)]
    for text, exact in cases:
        op = next(o for o in parse_module(text).walk() if o.name.startswith("linalg."))
        found = attention.match(op)
        low = attention.lowered(*found, CONTEST) if found else FAMILIES[op.name](op, CONTEST)
        n = low.build("k").n
        assert low.nodes == n if exact else low.nodes >= n


def test_a_kernel_over_max_nodes_stays(capsys: pytest.CaptureFixture[str]) -> None:
    from dan.lowering.io.ir_io import context, parse_module
    from dan.lowering.linalg.convert import ConvertLinalgToDanPass

    module = parse_module(matmul_text(100_000, 100_000, 100_000))
    ConvertLinalgToDanPass(max_nodes=10_000).apply(context(), module)
    assert "over max-nodes=10,000" in capsys.readouterr().err
    assert [o.name for o in module.walk() if o.name.startswith("dan.")] == []


def test_attention_whose_scores_outlive_it_lowers_op_by_op() -> None:
    """A function argument for S is seen after the function: the flash kernel, which
    never writes S, cannot stand for the pattern."""
    text = attention_text(32, 32, 16, 16).replace("%o: memref<32x16xf16>) {\n  %s = memref.alloc() : memref<32x32xf16>\n",
                                                   "%o: memref<32x16xf16>, %s: memref<32x32xf16>) {\n")
    _, graphs = lower(text)
    assert [g.name for g in graphs] == ["attention_matmul0", "attention_vector0", "attention_matmul1"]


@pytest.mark.parametrize("case,text", [
    ("Matmul_Case0", matmul_text(64, 64, 64)),
    ("FlashAttention_Case0", (EXAMPLES / "linalg_attention.mlir").read_text()),
])
def test_lowered_kernels_plan_like_the_traced_ones(case: str, text: str) -> None:
    """Node for node the traced graph (ids in program order), so MPAS, DLR and CPE give
    the traced graph's plan."""
    from dan.lowering.io.frontends import as_viewed

    _, (graph,) = lower(text)
    traced, _ = as_viewed(read_graph(workload(case)))
    plans = [cpe(g, dlr(g, mpas(g, CONTEST), CONTEST), CONTEST) for g in (graph, traced)]
    assert plans[0] == plans[1]


def test_a_run_launches_where_its_last_op_was() -> None:
    """An output allocated between the run's ops is defined before its launch."""
    t = "memref<4x8xf16>"
    text = (f"func.func @f(%a: {t}, %y: {t}) {{\n  %s = memref.alloc() : {t}\n"
            f"  linalg.add ins(%a, %a : {t}, {t}) outs(%s : {t})\n  %e = memref.alloc() : {t}\n"
            f"  linalg.exp ins(%s : {t}) outs(%e : {t})\n  \"memref.copy\"(%e, %y) : ({t}, {t}) -> ()\n"
            "  return\n}\n")
    module, (graph,) = lower(text)  # verified: %e dominates the launch
    (launch,) = [o for o in module.walk() if o.name == "dan.launch"]
    assert [str(a.name_hint) for a in launch.operands] == ["a", "e"]
    assert graph.ops.count("COPY_OUT") == 1


@pytest.mark.parametrize("case,text", [
    ("Matmul_Case1", matmul_text(128, 128, 128)),
    ("FlashAttention_Case0", attention_text(32, 32, 16, 16)),
    ("FlashAttention_Case1", attention_text(64, 64, 16, 16)),
])
def test_lowered_kernels_are_the_presets_node_for_node(case: str, text: str) -> None:
    from dan.lowering.gen.presets import like

    _, (graph,) = lower(text)
    gen = like(case)
    assert (graph.ops, graph.pipes, graph.cycles, graph.buf_size, graph.buf_tier) == (
        gen.ops, gen.pipes, gen.cycles, gen.buf_size, gen.buf_tier)
    assert [sorted(p) for p in graph.preds] == [sorted(p) for p in gen.preds]
