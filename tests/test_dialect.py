"""The dan dialect: assembly round trips, one test per verifier diagnostic, and the
IR <-> array bridge (`build_kernel` / `view_kernel`)."""

from __future__ import annotations

import io

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.irdl import IRDLOperation, irdl_op_definition, result_def, var_operand_def
from xdsl.utils.exceptions import ParseError, VerifyException

from dan.dialect.ir.dialect import AllocOp, BufType, Dan, InKernel, KernelOp, TargetAttr, TokenType
from dan.dialect.model.graph import GraphError, KernelGraph, NodeRecord, Plan, build_graph
from dan.dialect.ir.kernel.view import build_kernel, kernels, retarget, view_kernel
from dan.dialect.model.target import ASCEND910B, CONTEST, Core
from dan.lowering.gen.synthetic import random_kernel
from dan.lowering.io.graph_files import read_graph
from dan.lowering.io.plan_files import read_plan
from tests.shared_data import CASES, golden_dir, workload


def parse(text: str) -> ModuleOp:
    ctx = Context(allow_unregistered=True)
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Dan)
    return Parser(ctx, text).parse_module()


def show(op: ModuleOp | KernelOp, generic: bool = False) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(op)
    return out.getvalue()


TINY = """\
builtin.module {
  dan.kernel @tiny attributes {target = #dan.target<contest>} {
    %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 128>
    %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%a) after(%ta) {id = 1}
    %c, %tc = dan.alloc after(%t1) {id = 2, buf = 1, offset = 0} : !dan.buf<UB, 64>
    %t3 = dan.compute "EXP" on VECTOR cycles(10) bufs(%a, %c) after(%t1, %tc) {id = 3}
    %so = dan.spill_out %c after(%t3) {id = 6}
    %c2, %si = dan.spill_in %c after(%so) {id = 7, offset = 512}
    %t4 = dan.free %a after(%t3) {id = 4}
    %t5 = dan.free %c2 after(%t3) {id = 5, note = "kept"}
  }
}"""


# ------------------------------------------------------------------ assembly


def test_custom_format_round_trips_exactly() -> None:
    module = parse(TINY)
    module.verify()
    assert show(module) == TINY
    assert show(parse(show(module))) == TINY


def test_names_and_attributes_that_need_the_slow_printer_round_trip() -> None:
    text = TINY.replace('"EXP"', '"EXP \\222\\22"').replace('note = "kept"', '"odd key" = [1 : i64, 2 : i64], note = "kept"')
    module = parse(text)
    module.verify()
    assert show(module) == text


def test_generic_format_round_trips() -> None:
    generic = show(parse(TINY), generic=True)
    assert '"dan.spill_in"' in generic and "operandSegmentSizes = array<i32: 2, 2>" in generic
    again = parse(generic)
    again.verify()
    assert show(again) == TINY


def test_kernel_accessors() -> None:
    (kernel,) = kernels(parse(TINY))
    assert kernel.kernel_name == "tiny"
    assert kernel.target == CONTEST
    retarget(kernel, ASCEND910B)
    assert kernel.target is ASCEND910B
    assert "#dan.target<ascend910b>" in show(kernel)
    bare = KernelOp("bare")
    assert bare.target == CONTEST and "target" not in bare.attributes


@pytest.mark.parametrize(
    "target",
    [
        CONTEST,
        ASCEND910B,
        Core("mychip", (1024, 512, 128, 128, 256)),
        Core("odd \"name\"", (1, 2, 3, 4, 5), (1,), 1e-05, 0),
        Core("contest", (4096, 1024, 256, 256, 1024)),  # a preset's name, other numbers
        Core("few-flags", (4096, 1024, 256, 256, 512), event_ids=2),  # `events = 2`
    ],
)
def test_target_attribute_round_trips(target: Core) -> None:
    kernel = KernelOp("k", target)
    text = show(ModuleOp([kernel]))
    (back,) = kernels(parse(text))
    assert back.target == target


def test_custom_target_prints_every_field() -> None:
    text = str(TargetAttr(Core("mychip", (1024, 512, 128, 128, 256))))
    assert text == (
        '#dan.target<"mychip", L1 = 1024, UB = 512, L0A = 128, L0B = 128, L0C = 256, '
        "peak = [L1, UB], rate = 0.5, startup = 150>"
    )
    assert str(TargetAttr(CONTEST)) == "#dan.target<contest>"
    assert str(TargetAttr(Core("mychip", (1024, 512, 128, 128, 256), event_ids=3))).endswith(", startup = 150, events = 3>")


def test_buffer_type() -> None:
    t = BufType("UB", 128)
    assert (t.tier, t.size) == ("UB", 128)
    assert str(t) == "!dan.buf<UB, 128>"
    assert BufType("L2", 16).tier == "L2"  # tier names belong to the target: the kernel verifier checks them
    with pytest.raises(VerifyException, match="buffer size must be non-negative, got -1"):
        BufType("L1", -1)


# ------------------------------------------------------------------ verifiers


def kernel_text(body: str, attrs: str = "") -> str:
    return f"dan.kernel @k {attrs}{{\n{body}\n}}"


ALLOC = "%b, %ta = dan.alloc {id = 0, buf = 3, offset = 0} : !dan.buf<UB, 128>"

INVALID = {
    "use after free": (
        (
            f"{ALLOC}\n%t1 = dan.free %b after(%ta) {{id = 9}}\n"
            '%t2 = dan.compute "EXP" on VECTOR cycles(4) bufs(%b) {id = 2}'
        ),
        "dan.compute (node 2): use of buffer 3 after its FREE (node 9)",
    ),
    "use after spill out": (
        (
            f"{ALLOC}\n%so = dan.spill_out %b {{id = 10}}\n%b2, %si = dan.spill_in %b after(%so) {{id = 11, offset = 0}}\n"
            '%t2 = dan.dma "MOVE" on MTE1 cycles(4) bufs(%b) {id = 2}\n%t3 = dan.free %b2 {id = 3}'
        ),
        "dan.dma (node 2): use of buffer 3 after its SPILL_OUT (node 10)",
    ),
    "free twice": (
        f"{ALLOC}\n%t1 = dan.free %b {{id = 1}}\n%t2 = dan.free %b {{id = 2}}",
        "dan.free (node 2): use of buffer 3 after its FREE (node 1)",
    ),
    "token before definition": (
        "%b, %ta = dan.alloc after(%t1) {id = 0, buf = 0} : !dan.buf<L1, 16>\n%t1 = dan.free %b {id = 1}",
        "dan.alloc (node 0): waits for the token of node 1 (dan.free), which is scheduled later",
    ),
    "duplicate id": (
        f"{ALLOC}\n%t1 = dan.free %b {{id = 0}}",
        "dan.free (node 0): duplicate node id 0 (also used by a dan.alloc)",
    ),
    "buffer allocated twice": (
        (
            f"{ALLOC}\n%c, %tc = dan.alloc {{id = 1, buf = 3, offset = 0}} : !dan.buf<UB, 128>\n"
            "%t2 = dan.free %b {id = 2}\n%t3 = dan.free %c {id = 3}"
        ),
        "dan.alloc (node 1): buffer 3 is allocated twice (first by node 0)",
    ),
    "too big": (
        "%b, %ta = dan.alloc {id = 0, buf = 2} : !dan.buf<UB, 2048>\n%t1 = dan.free %b {id = 1}",
        "dan.alloc (node 0): buffer 2 of size 2048 exceeds UB capacity 1024 of target contest",
    ),
    "never freed": (ALLOC, "dan.kernel @k: buffer 3 (ALLOC node 0) is never freed"),
    "compute on a dma pipe": (
        '%t = dan.compute "COPY_IN" on MTE2 cycles(4) {id = 0}',
        "dan.compute (node 0): pipe MTE2 is not a compute pipe (CUBE, VECTOR); data movement uses dan.dma",
    ),
    "dma on a compute pipe": (
        '%t = dan.dma "MATMUL" on CUBE cycles(4) {id = 0}',
        "dan.dma (node 0): pipe CUBE is not a data-movement pipe (MTE1, MTE2, MTE3, FIXP); computation uses dan.compute",
    ),
    "negative cycles": ('%t = dan.dma "X" on MTE2 cycles(-5) {id = 0}', "dan.dma (node 0): negative cycles -5"),
    "negative id": ('%t = dan.dma "X" on MTE2 cycles(5) {id = -1}', "dan.dma (node -1): node id must be non-negative"),
    "id of 2^63": ('%t = dan.dma "X" on MTE2 cycles(5) {id = 9223372036854775808}',
                   "dan.dma (node -9223372036854775808): node id must be non-negative (i64 values of 2^63 or more wrap to negative; ids, sizes and cycles stay below 2^62)"),
    "cycles of 2^63": ('%t = dan.dma "X" on MTE2 cycles(9223372036854775808) {id = 0}',
                       "dan.dma (node 0): negative cycles -9223372036854775808 (i64 values of 2^63 or more wrap to negative; ids, sizes and cycles stay below 2^62)"),
    "reserved name": (
        '%t = dan.compute "FREE" on CUBE cycles(1) {id = 0}',
        "dan.compute (node 0): operation name 'FREE' is reserved for dan.alloc, dan.free and dan.spill_*",
    ),
    "spill in of a resident buffer": (
        f"{ALLOC}\n%b2, %si = dan.spill_in %b {{id = 11, offset = 0}}\n%t1 = dan.free %b2 {{id = 1}}",
        "dan.spill_in (node 11): buffer 3 is not spilled out (no dan.spill_out of this value before it)",
    ),
    "spill in twice": (
        (
            f"{ALLOC}\n%so = dan.spill_out %b {{id = 10}}\n%b2, %si = dan.spill_in %b {{id = 11, offset = 0}}\n"
            "%b3, %sj = dan.spill_in %b {id = 12, offset = 0}\n%t1 = dan.free %b2 {id = 1}"
        ),
        "dan.spill_in (node 12): buffer 3 was already brought back by node 11",
    ),
    "spill in after free": (
        f"{ALLOC}\n%t1 = dan.free %b {{id = 1}}\n%b2, %si = dan.spill_in %b {{id = 11, offset = 0}}",
        "dan.spill_in (node 11): use of buffer 3 after its FREE (node 1)",
    ),
    "unknown tier": (
        "%b, %t = dan.alloc {id = 0, buf = 0} : !dan.buf<L2, 16>",
        "dan.alloc (node 0): unknown tier 'L2' (tiers: L1, UB, L0A, L0B, L0C)",
    ),
    "unknown pipe": (
        '%t = dan.compute "EXP" on GPU cycles(4) {id = 0}',
        "dan.compute (node 0): unknown pipe 'GPU' (pipes: MTE1, MTE2, MTE3, FIXP, CUBE, VECTOR)",
    ),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_verifier_diagnostic(case: str) -> None:
    body, message = INVALID[case]
    module = parse(kernel_text(body))
    with pytest.raises(VerifyException) as info:
        module.verify()
    assert str(info.value) == message


def test_capacity_comes_from_the_kernel_target() -> None:
    attrs = 'attributes {target = #dan.target<"tiny", L1 = 64, UB = 64, L0A = 64, L0B = 64, L0C = 64>} '
    module = parse(kernel_text("%b, %ta = dan.alloc {id = 0, buf = 2} : !dan.buf<L1, 128>\n%t = dan.free %b {id = 1}", attrs))
    with pytest.raises(VerifyException) as info:
        module.verify()
    assert str(info.value) == "dan.alloc (node 0): buffer 2 of size 128 exceeds L1 capacity 64 of target tiny"


def test_buffer_before_definition_in_generic_format() -> None:
    text = """"dan.kernel"() <{sym_name = "k"}> ({
      %t1 = "dan.free"(%b) <{id = 1 : i64}> : (!dan.buf<L1, 16>) -> !dan.token
      %b, %ta = "dan.alloc"() <{id = 0 : i64, buf = 5 : i64}> : () -> (!dan.buf<L1, 16>, !dan.token)
    }) : () -> ()"""
    with pytest.raises(VerifyException) as info:
        parse(text).verify()
    assert str(info.value) == "dan.free (node 1): uses buffer 5 before its ALLOC (node 0)"


def test_spill_in_type_mismatch_in_generic_format() -> None:
    text = """"dan.kernel"() <{sym_name = "k"}> ({
      %b, %ta = "dan.alloc"() <{id = 0 : i64, buf = 0 : i64, offset = 0 : i64}> : () -> (!dan.buf<UB, 16>, !dan.token)
      %so = "dan.spill_out"(%b) <{id = 1 : i64}> : (!dan.buf<UB, 16>) -> !dan.token
      %b2, %si = "dan.spill_in"(%b) <{id = 2 : i64, offset = 0 : i64}> : (!dan.buf<UB, 16>) -> (!dan.buf<UB, 32>, !dan.token)
      %t = "dan.free"(%b2) <{id = 3 : i64}> : (!dan.buf<UB, 32>) -> !dan.token
    }) : () -> ()"""
    with pytest.raises(VerifyException) as info:
        parse(text).verify()
    assert str(info.value) == "dan.spill_in (node 2): result type !dan.buf<UB, 32> differs from operand type !dan.buf<UB, 16>"


@pytest.mark.parametrize(
    "body, message",
    [
        ("%t1 = dan.free %b {id = 1}", "buffer %b used before its definition"),
        ("%b, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 16>\n%t = dan.free %ta {id = 1}", "%ta is not a buffer"),
    ],
)
def test_parse_diagnostic(body: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(kernel_text(body))
    assert message in str(info.value)


@pytest.mark.parametrize(
    "attr, message",
    [
        ("#dan.target<h100>", "unknown target preset 'h100' (presets: contest, ascend910b)"),
        ('#dan.target<"half", L1 = 64, UB = 64>', "target 'half': no capacity for tier L0A"),
        ('#dan.target<"x", L1 = 1, L1 = 2>', "target field 'L1' given twice"),
        ('#dan.target<"x", L9 = 1>', "unknown target field 'L9'"),
    ],
)
def test_target_parse_diagnostic(attr: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(kernel_text("", f"attributes {{target = {attr}}} "))
    assert message in str(info.value)


# ------------------------------------------------------------ IR <-> arrays


def small_graph() -> KernelGraph:
    """Two L1 tiles multiplied into L0C, ids deliberately not in creation order."""
    records = [
        NodeRecord(10, "ALLOC", buf=1, size=128, tier="L1"),
        NodeRecord(11, "COPY_IN", pipe="MTE2", cycles=100, bufs=(1,)),
        NodeRecord(12, "ALLOC", buf=2, size=256, tier="L0C"),
        NodeRecord(13, "MATMUL", pipe="CUBE", cycles=64, bufs=(1, 2)),
        NodeRecord(14, "FREE", buf=1, size=128, tier="L1"),
        NodeRecord(15, "COPY_OUT", pipe="FIXP", cycles=20, bufs=(2,)),
        NodeRecord(16, "FREE", buf=2, size=256, tier="L0C"),
    ]
    edges = [(10, 11), (11, 13), (12, 13), (13, 14), (13, 15), (15, 16)]
    return build_graph("small", records, edges)


def assert_same_graph(a: KernelGraph, b: KernelGraph) -> None:
    for name in ("name", "node_ids", "kinds", "ops", "pipes", "cycles", "node_bufs", "preds", "buf_ids",
                 "buf_size", "buf_tier", "buf_alloc", "buf_free", "buf_clean", "buf_uses"):
        assert getattr(a, name) == getattr(b, name), name
    assert [sorted(s) for s in a.succs] == [sorted(s) for s in b.succs]


def test_build_and_view_round_trip_with_spill() -> None:
    g = small_graph()
    # node indices: 0 ALLOC1, 1 COPY_IN, 2 ALLOC2, 3 MATMUL, 4 FREE1, 5 COPY_OUT, 6 FREE2; spill of buffer index 1 (L0C)
    plan = Plan([0, 1, 2, 3, 4, 7, 8, 5, 6], offsets=[0, 0], spills=[(1, 256)])
    kernel = build_kernel(g, plan, CONTEST)
    ModuleOp([kernel]).verify()
    text = show(kernel)
    assert "%t17 = dan.spill_out %b2 after(%t12, %t13) {id = 17}" in text
    assert "%b2_1, %t18 = dan.spill_in %b2 after(%t17) {id = 18, offset = 256}" in text
    assert '%t15 = dan.dma "COPY_OUT" on FIXP cycles(20) bufs(%b2_1) after(%t13) {id = 15}' in text
    view = view_kernel(kernel)
    assert_same_graph(view.graph, g)
    assert view.plan == plan
    assert view.target == CONTEST
    assert [op.node_id for op in view.ops] == [10, 11, 12, 13, 14, 15, 16, 17, 18]


def test_view_sorts_nodes_by_id_and_keeps_block_order() -> None:
    (kernel,) = kernels(parse(TINY))
    view = view_kernel(kernel)
    assert view.graph.node_ids == [0, 1, 2, 3, 4, 5]
    assert view.plan.order == [0, 1, 2, 3, 6, 7, 4, 5]
    assert view.plan.offsets == [0, 0]
    assert view.plan.spills == [(1, 512)]
    assert view.graph.buf_clean == [True, False]


def test_view_rejects_partial_layout() -> None:
    text = kernel_text(
        "%a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 16>\n"
        "%b, %tb = dan.alloc {id = 1, buf = 1} : !dan.buf<L1, 16>\n"
        "%t2 = dan.free %a after(%ta) {id = 2}\n%t3 = dan.free %b after(%tb) {id = 3}"
    )
    (kernel,) = kernels(parse(text))
    with pytest.raises(GraphError, match="buffer 1 has no offset but buffer 0 has one"):
        view_kernel(kernel)


def test_view_rejects_edges_the_graph_cannot_hold() -> None:
    text = kernel_text(
        "%a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 16>\n"
        "%so = dan.spill_out %a after(%ta) {id = 5}\n%a2, %si = dan.spill_in %a after(%so) {id = 6, offset = 0}\n"
        '%t1 = dan.dma "COPY_IN" on MTE2 cycles(1) after(%si) {id = 1}\n%t2 = dan.free %a2 after(%ta) {id = 2}'
    )
    (kernel,) = kernels(parse(text))
    with pytest.raises(GraphError, match=r"dan.dma \(node 1\): waits for dan.spill_in \(node 6\) of buffer 0"):
        view_kernel(kernel)


@pytest.mark.parametrize(
    "plan, message",
    [
        (Plan([0, 1, 2, 3, 4, 5]), "the plan orders 6 nodes, expected 7"),
        (Plan([1, 0, 2, 3, 4, 5, 6]), "the plan puts COPY_IN node 11 before its predecessor ALLOC node 10"),
        (Plan([0, 1, 2, 3, 4, 7, 5, 8, 6], [0, 0], [(1, 0)]), "COPY_OUT node 15 uses buffer 2 while it is not resident"),
        (Plan([0, 1, 2, 3, 4, 8, 7, 5, 6], [0, 0], [(1, 0)]), "SPILL_IN node 18 of buffer 2 comes before its SPILL_OUT"),
    ],
)
def test_build_rejects_plans_the_ir_cannot_express(plan: Plan, message: str) -> None:
    with pytest.raises(GraphError) as info:
        build_kernel(small_graph(), plan, CONTEST)
    assert str(info.value) == message


@pytest.mark.parametrize("seed", range(5))
def test_random_kernels_round_trip_through_text(seed: int) -> None:
    g = random_kernel(seed, ops=60)
    plan = Plan(list(range(g.n)))
    module = ModuleOp([build_kernel(g, plan, CONTEST)])
    module.verify()
    (kernel,) = kernels(parse(show(module)))
    view = view_kernel(kernel)
    assert_same_graph(view.graph, g)
    assert view.plan == plan


@pytest.mark.parametrize("case", CASES)
def test_golden_plans_round_trip(case: str) -> None:
    g = read_graph(workload(case))
    plan = read_plan(g, golden_dir(case))
    kernel = build_kernel(g, plan, CONTEST)
    ModuleOp([kernel]).verify()
    view = view_kernel(kernel)
    assert_same_graph(view.graph, g)
    assert view.plan == plan


# ------------------------------------------------- other cores, non-node ops

TWO_VECTORS = Core(
    "twovec", (4096, 1024, 256, 256, 512, 2048), tiers=("L1", "UB", "L0A", "L0B", "L0C", "UB2"),
    pipes=("MTE1", "MTE2", "MTE3", "FIXP", "CUBE", "VECTOR", "VECTOR2"),
)
"""A core with a second vector unit and a second unified buffer (target file defaults
for L0 tiers, data-movement and spill pipes)."""


def test_core_with_other_tiers_and_pipes_round_trips() -> None:
    text = str(TargetAttr(TWO_VECTORS))
    assert text == (
        '#dan.target<"twovec", tiers = [L1, UB, L0A, L0B, L0C, UB2], l0 = [L0A, L0B, L0C], L1 = 4096, UB = 1024, '
        "L0A = 256, L0B = 256, L0C = 512, UB2 = 2048, peak = [L1, UB], "
        "pipes = [MTE1, MTE2, MTE3, FIXP, CUBE, VECTOR, VECTOR2], dma = [MTE1, MTE2, MTE3, FIXP], "
        "spill_out = MTE3, spill_in = MTE2, rate = 0.5, startup = 150>"
    )
    (back,) = kernels(parse(show(ModuleOp([KernelOp("k", TWO_VECTORS)]))))
    assert back.target == TWO_VECTORS
    odd = Core("odd", (8, 8), (1,), tiers=("A", "B"), l0_tiers=(0,), pipes=("LOAD", "ALU"),
               dma_pipes=frozenset({"LOAD"}), spill_out_pipe=0, spill_in_pipe=0)
    (back,) = kernels(parse(show(ModuleOp([KernelOp("k", odd)]))))
    assert back.target == odd


def test_fields_may_come_in_any_order_and_default_like_a_target_file() -> None:
    attr = (
        '#dan.target<"v2", pipes = [MTE1, MTE2, MTE3, FIXP, CUBE, VECTOR, VECTOR2], '
        "L1 = 1, UB = 1, L0A = 1, L0B = 1, L0C = 1>"
    )
    (kernel,) = kernels(parse(kernel_text("", f"attributes {{target = {attr}}} ")))
    t = kernel.target
    assert t.pipes[-1] == "VECTOR2" and t.dma_pipes == CONTEST.dma_pipes and t.spill_out_pipe == CONTEST.spill_out_pipe


def test_kernel_names_are_checked_against_its_own_core() -> None:
    attrs = f"attributes {{target = {TargetAttr(TWO_VECTORS)}}} "
    body = (
        "%b, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<UB2, 2048>\n"
        '%t1 = dan.compute "EXP" on VECTOR2 cycles(4) bufs(%b) after(%ta) {id = 1}\n'
        "%t2 = dan.free %b after(%t1) {id = 2}"
    )
    module = parse(kernel_text(body, attrs))
    module.verify()
    (kernel,) = kernels(module)
    view = view_kernel(kernel)
    assert view.graph.buf_tier == [5] and view.graph.pipes[1] == 6
    rebuilt = build_kernel(view.graph, view.plan, TWO_VECTORS)
    ModuleOp([rebuilt]).verify()
    assert '%t1 = dan.compute "EXP" on VECTOR2 cycles(4) bufs(%b0) after(%t0) {id = 1}' in show(rebuilt)
    assert view_kernel(rebuilt).plan == view.plan
    for body, message in [
        (
            body.replace("UB2, 2048", "UB2, 4096"),
            "dan.alloc (node 0): buffer 0 of size 4096 exceeds UB2 capacity 2048 of target twovec",
        ),
        (
            body.replace("VECTOR2", "MTE2"),
            "dan.compute (node 1): pipe MTE2 is not a compute pipe (CUBE, VECTOR, VECTOR2); data movement uses dan.dma",
        ),
    ]:
        with pytest.raises(VerifyException) as info:
            parse(kernel_text(body, attrs)).verify()
        assert str(info.value) == message
    with pytest.raises(VerifyException) as info:
        parse(kernel_text(body)).verify()  # the contest core has neither
    assert str(info.value) == "dan.alloc (node 0): unknown tier 'UB2' (tiers: L1, UB, L0A, L0B, L0C)"


@irdl_op_definition
class WaitFlagOp(IRDLOperation):
    """A test-only op that is not a graph node (as a lowering's sync flag would be)."""

    name = "dan_test.wait_flag"
    after = var_operand_def(TokenType)
    done = result_def(TokenType)
    assembly_format = "(`after` `(` $after^ `)`)? attr-dict"


def parse_with_test_ops(text: str) -> ModuleOp:
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Dan)
    ctx.load_op(WaitFlagOp)
    return Parser(ctx, text).parse_module()


def test_non_node_ops_are_left_alone_by_the_verifier_and_the_view() -> None:
    body = (
        "%b, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 64>\n"
        "%f = dan_test.wait_flag after(%ta)\n"
        '%t1 = dan.compute "EXP" on VECTOR cycles(4) bufs(%b) after(%ta, %f) {id = 1}\n'
        "%g = dan_test.wait_flag\n"
        "%t2 = dan.free %b after(%t1) {id = 2}"
    )
    module = parse_with_test_ops(kernel_text(body))
    module.verify()
    (kernel,) = kernels(module)
    view = view_kernel(kernel)
    assert view.graph.node_ids == [0, 1, 2]
    assert view.plan.order == [0, 1, 2]
    assert view.graph.preds[1] == [0]  # the flag's token is not a graph edge
    assert [op.node_id for op in view.ops] == [0, 1, 2]
    bad = parse_with_test_ops(kernel_text(body.replace("after(%t1) {id = 2}", "after(%t1) {id = 1}")))
    with pytest.raises(VerifyException, match=r"^dan.free \(node 1\): duplicate node id 1"):
        bad.verify()


def test_node_ops_must_sit_in_a_kernel() -> None:
    module = parse("%b, %t = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 8>")
    with pytest.raises(VerifyException, match=r"^dan.alloc \(node 0\): must be inside a dan.kernel\n"):
        module.verify()
    assert any(isinstance(t, InKernel) for t in AllocOp.traits)
