"""Passes keep what they do not own (`dan.dialect.ir.kernel.foreign`): the kernel's and
each node op's discardable attributes and the SSA names survive the IR <-> arrays
bridge, every planning pass and `lower-sync`; the plans are the same as without them."""

from __future__ import annotations

import dataclasses
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, IntegerAttr, ModuleOp, StringAttr, i32
from xdsl.ir import Attribute
from xdsl.parser import Parser
from xdsl.printer import Printer

from dan.dialect.ir.dialect import Dan
from dan.dialect.ir.kernel.op import KernelOp
from dan.dialect.ir.kernel.view import build_kernel, kernels, view_kernel
from dan.dialect.ir.node_op import NodeOp
from dan.dialect.ir.ops import SpillInOp, SpillOutOp
from dan.dialect.ir.sync_ops import DanSync, ExecOp
from dan.dialect.model.graph import KernelGraph, KernelView, Plan
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.presets import FAMILIES, make_shape
from dan.lowering.sync.passes import LowerSyncPass
from dan.passes.pipeline.kernel_rewrite import PlanningPass, replan
from dan.passes.pipeline.planner import plan_arrays
from dan.passes.pipeline.registry import DAN_PASSES
from dan.tools.driver import parse_passes


def module_passes(spec: str) -> list[PlanningPass]:
    """The xDSL passes of `spec`, as xdsl-opt builds them."""
    from xdsl.passes import PassPipeline

    return list(PassPipeline.parse_spec(DAN_PASSES, spec).passes)  # type: ignore[arg-type]
from tests.strategies import random_kernels

SPILLED = """\
builtin.module {
  dan.kernel @spilled attributes {target = #dan.target<"tiny", L1 = 256, UB = 128, L0A = 128, L0B = 128, L0C = 256>, origin = "frontend"} {
    %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 128>
    %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%a) after(%ta) {id = 1}
    %b, %tb = dan.alloc {id = 2, buf = 1, offset = 128, note = "b"} : !dan.buf<L1, 128>
    %t3 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b) after(%tb) {id = 3}
    %out_b = dan.spill_out %b after(%tb, %t3) {id = 14, note = "spill-b"}
    %c, %tc = dan.alloc {id = 4, buf = 2, offset = 128} : !dan.buf<L1, 128>
    %t5 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%c) after(%tc) {id = 5}
    %l, %tl = dan.alloc {id = 6, buf = 3, offset = 0} : !dan.buf<L0A, 128>
    %t7 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%l, %a) after(%t1, %tl) {id = 7}
    %out_a = dan.spill_out %a after(%ta, %t1, %t7) {id = 16}
    %b_back, %in_b = dan.spill_in %b after(%out_b) {id = 15, offset = 0, note = "reload-b"}
    %t8 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%l, %b_back) after(%t3, %t7) {id = 8, group = 3 : i32}
    %t9 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%l, %c) after(%t5, %t8) {id = 9}
    %out_b2 = dan.spill_out %b_back after(%in_b, %t8) {id = 18}
    %a_back, %in_a = dan.spill_in %a after(%out_a) {id = 17, offset = 0}
    %t10 = dan.free %a_back after(%t7) {id = 10}
    %b_again, %in_b2 = dan.spill_in %b_back after(%out_b2) {id = 19, offset = 0}
    %t11 = dan.free %b_again after(%t8) {id = 11}
    %t12 = dan.free %c after(%t9) {id = 12}
    %t13 = dan.free %l after(%t9) {id = 13}
  }
}"""


def parse(text: str) -> ModuleOp:
    ctx = Context()
    for dialect in (Builtin, Dan, DanSync):
        ctx.load_dialect(dialect)
    return Parser(ctx, text).parse_module()


def show(op: ModuleOp) -> str:
    out = io.StringIO()
    Printer(stream=out).print_op(op)
    return out.getvalue()


Foreign = tuple[dict[str, Attribute], tuple[str | None, ...]]


def annotate(kernel: KernelOp, picked: set[int]) -> dict[int, Foreign]:
    """Give the node ops whose id is in `picked` a `note` and their results names, the
    kernel an `origin`; what each node op then carries, by node id."""
    kernel.attributes["origin"] = StringAttr("test")
    for op in kernel.body.block.ops:
        assert isinstance(op, NodeOp)
        if op.node_id in picked:
            op.attributes["note"] = StringAttr(f"n{op.node_id}")
            op.attributes["group"] = IntegerAttr(op.node_id % 3, i32)
            for r, result in enumerate(op.results):
                result.name_hint = f"v{op.node_id}_{r}x"
    return foreign(kernel)


def foreign(kernel: KernelOp) -> dict[int, Foreign]:
    """The discardable attributes and result names of each non-spill node op, by id."""
    return {
        op.node_id: (dict(op.attributes), tuple(r.name_hint for r in op.results))
        for op in kernel.body.block.ops
        if isinstance(op, NodeOp) and not isinstance(op, (SpillOutOp, SpillInOp))
    }


def small_kernel(family: str = "matmul", seed: int = 3) -> KernelGraph:
    return FAMILIES[family].build(make_shape(family, {}, seed), None)


# ------------------------------------------------------------------ the bridge


def test_view_then_build_gives_back_the_text() -> None:
    module = parse(SPILLED)
    (kernel,) = kernels(module)
    view = view_kernel(kernel)
    rebuilt = build_kernel(view.graph, view.plan, view.target, view.ops)
    assert show(ModuleOp([rebuilt])) == show(module)


def test_build_without_source_names_values_after_ids() -> None:
    (kernel,) = kernels(parse(SPILLED))
    view = view_kernel(kernel)
    text = show(ModuleOp([build_kernel(view.graph, view.plan, view.target)]))
    assert "note" not in text and "origin" not in text and "group" not in text
    assert "%b1, %t2 = dan.alloc {id = 2, buf = 1, offset = 128}" in text
    assert "%b1_1, %t15 = dan.spill_in %b1 after(%t14) {id = 15, offset = 0}" in text


def test_target_is_owned_by_the_view() -> None:
    (kernel,) = kernels(parse(SPILLED))
    view = view_kernel(kernel)
    rebuilt = build_kernel(view.graph, view.plan, CONTEST, view.ops)
    assert list(rebuilt.attributes) == ["target", "origin"]
    assert rebuilt.target == CONTEST


def test_a_spill_set_the_plan_changes_keeps_no_foreign_attributes() -> None:
    (kernel,) = kernels(parse(SPILLED))
    view = view_kernel(kernel)
    n = view.graph.n
    # drop the last spill pair (buffer b's second spill): FREE b then uses the first reload
    order = [v for v in view.plan.order if v < n + 4]
    rebuilt = build_kernel(view.graph, Plan(order, view.plan.offsets, view.plan.spills[:2]), view.target, view.ops)
    text = show(ModuleOp([rebuilt]))
    assert "spill-b" not in text and "reload-b" not in text
    assert "%b_1, %t15 = dan.spill_in %b after(%t14) {id = 15, offset = 0}" in text
    assert '{id = 2, buf = 1, offset = 128, note = "b"}' in text


# ------------------------------------------------------- every planning pass


SPECS = [
    "mpas", "dlr", "dlr,cpe", "mpas,dlr,cpe", "prefetch", "tune", "reuse-order", "dan-best{jobs=1}",
    "original", "hmcos", "magis", "eda", "cosma",
]


@pytest.mark.parametrize("spec", SPECS)
def test_every_planning_pass_keeps_foreign_attributes_and_names(spec: str) -> None:
    graph = small_kernel()
    passes = module_passes(spec)
    assert all(isinstance(p, PlanningPass) for p in passes)
    planners = parse_passes(spec)  # what dan-opt runs on arrays: each xDSL pass is its planner
    assert len(planners) == len(passes) and all(isinstance(p, type(q)) and dataclasses.asdict(p) == dataclasses.asdict(q) for p, q in zip(passes, planners))
    plain = plan_arrays(KernelView(graph, Plan(list(range(graph.n))), CONTEST), passes).plan
    module = ModuleOp([build_kernel(graph, Plan(list(range(graph.n))), CONTEST)])
    (kernel,) = kernels(module)
    expected = annotate(kernel, set(graph.node_ids[::2]))
    replan(module, passes)
    (after,) = kernels(module)
    assert after is not kernel  # rebuilt
    assert foreign(after) == expected
    assert after.attributes["origin"] == StringAttr("test")
    assert view_kernel(after).plan == plain  # the plan does not depend on what it carries


@given(random_kernels(max_layers=5, max_width=4), st.data())
@settings(max_examples=25, deadline=None)
def test_random_kernels_keep_what_they_carry_through_planning_and_lower_sync(graph: KernelGraph, data: st.DataObject) -> None:
    picked = set(data.draw(st.lists(st.sampled_from(graph.node_ids), max_size=graph.n)))
    module = ModuleOp([build_kernel(graph, Plan(list(range(graph.n))), CONTEST)])
    (kernel,) = kernels(module)
    expected = annotate(kernel, picked)
    replan(module, module_passes(data.draw(st.sampled_from(["mpas,dlr", "mpas,dlr,cpe", "dlr"]))))
    (after,) = kernels(module)
    assert foreign(after) == expected
    assert foreign(kernels(parse(show(module)))[0]) == expected  # and through text
    LowerSyncPass().apply(Context(), module)
    program = module.body.block.first_op
    assert program is not None and program.attributes["origin"] == StringAttr("test")
    for op in program.walk():
        if isinstance(op, ExecOp) and op.node_id.value.data in expected:
            assert dict(op.attributes) == expected[op.node_id.value.data][0]


# ------------------------------------------------------------------ dan_sync


def test_exec_attributes_round_trip_through_text() -> None:
    module = parse(SPILLED)
    LowerSyncPass().apply(Context(), module)
    text = show(module)
    assert 'attributes {target = #dan.target<"tiny"' in text and ', origin = "frontend"} {' in text
    assert '(L1[128, 256) buf 1) {note = "spill-b"}' in text
    assert '(L1[0, 128) buf 1) {note = "reload-b"}' in text
    assert "buf 1) {group = 3 : i32}" in text
    assert show(parse(text)) == text
