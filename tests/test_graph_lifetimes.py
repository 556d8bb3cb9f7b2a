"""The lifetime check is exact: it agrees with a transitive-closure reference on
random kernels with edges removed, and reports the same first problem."""

from __future__ import annotations

import json
import random

import pytest

from dan.dialect.model.graph import ALLOC, FREE, OP, GraphError, topological_order
from dan.dialect.model.graph_lifetimes import check_lifetimes
from dan.lowering.gen.synthetic import random_kernel, tiled_matmul
from dan.lowering.io.graph_files import graph_to_json, parse_graph_json


def reference(graph) -> str | None:  # noqa: ANN001
    """The first problem by full reachability sets (quadratic; small graphs only)."""
    topo = topological_order(graph)
    below = [set() for _ in range(graph.n)]  # nodes reaching v
    for v in topo:
        for u in graph.preds[v]:
            below[v] |= below[u] | {u}
    ids, bids = graph.node_ids, graph.buf_ids
    for v in range(graph.n):
        for b in graph.node_bufs[v] if graph.kinds[v] != ALLOC else ():
            a = graph.buf_alloc[b]
            if a not in below[v]:
                if graph.kinds[v] == FREE:
                    return f"FREE node {ids[v]} of buffer {bids[b]} is not ordered after its ALLOC"
                return f"node {ids[v]} uses buffer {bids[b]} but the edges do not order it after ALLOC node {ids[a]}"
    for v in range(graph.n):
        for b in graph.node_bufs[v] if graph.kinds[v] == OP else ():
            f = graph.buf_free[b]
            if v not in below[f]:
                return f"node {ids[v]} uses buffer {bids[b]} but the edges do not order it before FREE node {ids[f]}"
    return None


def without_edges(graph, rng: random.Random, count: int):  # noqa: ANN001, ANN201
    """`graph` with `count` random edges dropped (lifetime checks left out)."""
    edges = list(graph.edges())
    for _ in range(count):
        edges.pop(rng.randrange(len(edges)))
    graph.preds = [[] for _ in range(graph.n)]
    graph.succs = [[] for _ in range(graph.n)]
    for u, v in edges:
        graph.preds[v].append(u)
        graph.succs[u].append(v)
    return graph


@pytest.mark.parametrize("seed", range(60))
def test_agrees_with_reference_on_damaged_kernels(seed: int) -> None:
    rng = random.Random(seed)
    graph = without_edges(random_kernel(seed, ops=30), rng, rng.choice([0, 1, 2, 5]))
    assert check_lifetimes(graph, topological_order(graph)) == reference(graph)


def test_valid_kernels_pass() -> None:
    graph = tiled_matmul(3, 2, 4)
    assert check_lifetimes(graph, topological_order(graph)) is None


def test_build_graph_raises_the_first_problem() -> None:
    graph = without_edges(tiled_matmul(2, 2, 2), random.Random(3), 4)
    expected = reference(graph)
    assert expected is not None
    with pytest.raises(GraphError) as e:
        parse_graph_json(json.dumps(graph_to_json(graph)), "k")
    assert str(e.value) == expected
