"""The relaxed schedule's deadlines (`dan.passes.search.pipeline.deadlines`): the busiest
pipe's deadlines are its relaxed starts, and every node's deadline leaves room for its
successors on that pipe."""

from __future__ import annotations

import pytest

from dan.dialect.model.graph import OP, KernelGraph
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.flash_attention import FlashShape, flash_attention
from dan.passes.dan.mpas.options import MpasOptions
from dan.passes.dan.mpas.search import mpas
from dan.passes.search.pipeline.deadlines import busiest_pipe, latest_starts, relaxed_targets

KERNELS = [flash_attention(FlashShape(2, 3)), flash_attention(FlashShape(3, 3, causal=True))]


def _base(graph: KernelGraph) -> list[int]:
    return mpas(graph, CONTEST, MpasOptions("memory-first"))


@pytest.mark.parametrize("graph", KERNELS[:2], ids=lambda g: g.name)
def test_deadlines_of_the_busiest_pipe_are_its_targets(graph: KernelGraph) -> None:
    pipe = busiest_pipe(graph)
    assert pipe == max(range(len(CONTEST.pipes)), key=lambda p: sum(c for c, q, k in zip(graph.cycles, graph.pipes, graph.kinds) if q == p and k == OP))
    targets = relaxed_targets(graph, _base(graph))
    due = latest_starts(graph, targets, pipe)
    for v in range(graph.n):
        if graph.kinds[v] == OP and graph.pipes[v] == pipe:
            assert due[v] == targets[v]
        for s in graph.succs[v]:
            if graph.kinds[s] == OP and graph.pipes[s] == pipe:
                assert due[v] + graph.cycles[v] <= due[s]
