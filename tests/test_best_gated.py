"""dan-best's gated band orders (`dan.passes.search.pipeline`): on attention they overlap
the query rows' blocks across the pipes, so they win the makespan objective over the
sequential reuse orders that lead the portfolio."""

from __future__ import annotations

from dan.dialect.model.graph import OP
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.flash_attention import FlashShape, flash_attention
from dan.passes.search.best.options import BestOptions
from dan.passes.search.best.portfolio import GATED, orders
from dan.passes.search.best.search import best


def test_gated_orders_follow_the_reuse_orders_for_the_makespan_objective_only() -> None:
    makespan = orders("makespan", CONTEST)
    first = makespan.index(GATED[0])
    assert makespan[first : first + len(GATED)] == list(GATED)
    assert all(spec.gated is None for spec in makespan[:first])
    assert not any(spec.gated is not None for objective in ("peak", "traffic") for spec in orders(objective, CONTEST))


def test_a_gated_order_overlaps_attention_blocks() -> None:
    graph = flash_attention(FlashShape(3, 4))
    vector = CONTEST.pipes.index("VECTOR")
    busy = sum(graph.cycles[v] for v in range(graph.n) if graph.kinds[v] == OP and graph.pipes[v] == vector)
    leading = orders("makespan", CONTEST).index(GATED[0])
    sequential = best(graph, CONTEST, BestOptions(objective="makespan", jobs=1, work=leading * 4 * graph.n))
    pipelined = best(graph, CONTEST, BestOptions(objective="makespan", jobs=1, work=(leading + len(GATED)) * 4 * graph.n))
    assert pipelined.metrics.valid and pipelined.order.gated is not None
    assert pipelined.metrics.makespan <= 1.25 * busy < sequential.metrics.makespan
