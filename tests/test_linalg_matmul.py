"""`convert-linalg-to-dan` on `linalg.matmul`: the traced Matmul_Case0 from a 64x64x64
f16 matmul, ragged shapes, element types, and what stays with a remark."""

from __future__ import annotations

import pytest

from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.matmul import MatmulShape, matmul
from dan.lowering.io.graph_files import read_graph
from dan.passes.dan.cpe.reorder import cpe
from dan.passes.dan.dlr.layout import dlr
from dan.passes.dan.mpas.search import mpas
from tests.linalg_cases import canonical, lower, matmul_text
from tests.shared_data import workload


def test_matmul_64_is_matmul_case0() -> None:
    """Same ops, pipes, cycles, buffer sizes and tiers, and the same edges up to numbering."""
    _, (graph,) = lower(matmul_text(64, 64, 64))
    traced = read_graph(workload("Matmul_Case0"))
    assert (graph.n, sum(map(len, graph.preds))) == (4160, 7104)
    assert canonical(graph) == canonical(traced)


def test_matmul_64_is_the_generated_case0_node_for_node() -> None:
    _, (graph,) = lower(matmul_text(64, 64, 64))
    gen = matmul(MatmulShape(8, 8, 8))
    assert (graph.ops, graph.cycles, graph.buf_size, graph.buf_tier) == (gen.ops, gen.cycles, gen.buf_size, gen.buf_tier)
    assert [sorted(p) for p in graph.preds] == [sorted(p) for p in gen.preds]


def test_canonical_form_sees_a_changed_edge() -> None:
    a, b = matmul(MatmulShape(2, 2, 2)), matmul(MatmulShape(2, 2, 2))
    v = next(v for v in range(b.n) if len(b.preds[v]) > 1)
    b.preds[v] = b.preds[v][:-1]
    assert canonical(a) != canonical(b)


@pytest.mark.parametrize("m,k,n,t", [(20, 12, 9, "f16"), (8, 8, 8, "f32"), (17, 33, 5, "i8"), (1, 1, 1, "bf16")])
def test_ragged_shapes_lower_and_plan_valid(m: int, k: int, n: int, t: str) -> None:
    _, (graph,) = lower(matmul_text(m, k, n, t))
    order = mpas(graph, CONTEST)
    plan = cpe(graph, dlr(graph, order, CONTEST), CONTEST)
    assert replay(graph, plan, CONTEST).valid


def test_tiles_follow_the_target() -> None:
    _, (small,) = lower(matmul_text(64, 64, 64))
    _, (big,) = lower(matmul_text(64, 64, 64), "ascend910b")
    assert small.n > big.n and max(big.buf_size) > max(small.buf_size)


@pytest.mark.parametrize("text,why", [
    (matmul_text(8, 8, 8, "f64"), "element type f64"),
    ("func.func @f(%a: memref<?x8xf16>, %b: memref<8x8xf16>, %c: memref<?x8xf16>) {\n"
     "  linalg.matmul ins(%a, %b : memref<?x8xf16>, memref<8x8xf16>) outs(%c : memref<?x8xf16>)\n  return\n}\n",
     "dynamic shape"),
])
def test_what_stays_has_a_remark(text: str, why: str, capsys: pytest.CaptureFixture[str]) -> None:
    module, graphs = lower(text)
    assert graphs == []
    (op,) = [o for o in module.walk() if o.name == "linalg.matmul"]
    assert why in op.attributes["dan.not_lowered"].data
    assert why in capsys.readouterr().err


def _generic_matmul(batch: tuple[int, ...], m: int, k: int, n: int) -> str:
    dims = [f"d{i}" for i in range(len(batch) + 3)]
    b, (dm, dn, dk) = dims[: len(batch)], dims[len(batch):]
    amap = lambda *r: f"affine_map<({', '.join(dims)}) -> ({', '.join([*b, *r])})>"  # noqa: E731
    pre = "".join(f"{x}x" for x in batch)
    ta, tb, tc = f"memref<{pre}{m}x{k}xf16>", f"memref<{pre}{k}x{n}xf16>", f"memref<{pre}{m}x{n}xf16>"
    iters = ", ".join(['"parallel"'] * (len(dims) - 1) + ['"reduction"'])
    return (f"func.func @mm(%a: {ta}, %b: {tb}, %c: {tc}) {{\n"
            f"  linalg.generic {{indexing_maps = [{amap(dm, dk)}, {amap(dk, dn)}, {amap(dm, dn)}], iterator_types = [{iters}]}}"
            f" ins(%a, %b : {ta}, {tb}) outs(%c : {tc}) {{\n  ^bb0(%x: f16, %y: f16, %z: f16):\n"
            "    %p = arith.mulf %x, %y : f16\n    %s = arith.addf %z, %p : f16\n    linalg.yield %s : f16\n  }\n"
            "  return\n}\n")


def test_a_matmul_generic_is_the_matmul() -> None:
    _, (named,) = lower(matmul_text(20, 12, 9))
    _, (generic,) = lower(_generic_matmul((), 20, 12, 9))
    assert (named.ops, named.cycles, named.buf_size, named.preds) == (generic.ops, generic.cycles, generic.buf_size,
                                                                      generic.preds)


def test_a_batched_matmul_runs_its_matmuls_in_turn() -> None:
    _, (one,) = lower(matmul_text(16, 24, 8))
    module, (batched,) = lower(_generic_matmul((2, 3), 16, 24, 8))
    assert batched.n == 6 * one.n and batched.ops.count("MATMUL") == 6 * one.ops.count("MATMUL")
    assert [o.name for o in module.walk() if o.name.startswith("linalg.")] == []
    plan = cpe(batched, dlr(batched, mpas(batched, CONTEST), CONTEST), CONTEST)
    assert replay(batched, plan, CONTEST).valid


def test_a_zero_fill_before_the_matmul_lowers_with_it(capsys: pytest.CaptureFixture[str]) -> None:
    """The fill initialises the L0C accumulators, which the family starts without a
    load: the kernel is Matmul_Case0's; a fill of anything else stays with a remark."""
    text = matmul_text(64, 64, 64).replace(
        "  linalg.matmul", "  %z = arith.constant 0.0 : f16\n  linalg.fill ins(%z : f16) outs(%c : memref<64x64xf16>)\n"
        "  linalg.fill ins(%z : f16) outs(%a : memref<64x64xf16>)\n  linalg.fill ins(%z : f16) outs(%c : memref<64x64xf16>)\n"
        "  linalg.matmul")
    module, (graph,) = lower(text)
    assert canonical(graph) == canonical(read_graph(workload("Matmul_Case0")))
    (launch,) = [o for o in module.walk() if o.name == "dan.launch"]
    assert launch.lowered.data == "linalg.fill+linalg.matmul"  # type: ignore[attr-defined]
    assert len([o for o in module.walk() if o.name == "linalg.fill"]) == 2
    assert capsys.readouterr().err.count("a fill lowers only with") == 2


def test_launch_prints_generic_and_back_and_names_a_kernel() -> None:
    from xdsl.utils.exceptions import VerifyException

    from dan.lowering.io.ir_io import parse_module, print_module

    module, _ = lower(matmul_text(8, 16, 8))
    again = parse_module(print_module(module, generic=True))
    assert print_module(again) == print_module(module)
    with pytest.raises(VerifyException, match="dan.launch: no kernel named @nowhere"):
        parse_module("func.func @f(%a: memref<4xf16>) {\n  dan.launch @nowhere(%a) : memref<4xf16>\n  return\n}\n")
