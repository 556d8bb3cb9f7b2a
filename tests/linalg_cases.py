"""Helpers of the linalg lowering's tests: lower a module's text, and a canonical form
of a kernel graph that does not depend on its node numbering."""

from __future__ import annotations

from collections import Counter

from dan.dialect.ir.kernel.view import kernels, view_kernel
from dan.dialect.model.graph import ALLOC, FREE, KernelGraph
from dan.lowering.io.ir_io import context, parse_module


def lower(text: str, target: str = "contest"):  # noqa: ANN201
    """The module of `text` after `convert-linalg-to-dan{target=...}`, and its kernels as arrays."""
    from dan.lowering.linalg.convert import ConvertLinalgToDanPass

    module = parse_module(text)
    ConvertLinalgToDanPass(target=target).apply(context(), module)
    module.verify()
    return module, [view_kernel(k).graph for k in kernels(module)]


def canonical(graph: KernelGraph, rounds: int = 6) -> tuple[Counter, Counter]:
    """Node labels (op, pipe, cycles; buffer size and tier for ALLOC/FREE) refined by
    their predecessors' and successors' labels (Weisfeiler-Lehman), as multisets of
    nodes and of edges: equal for isomorphic graphs, whatever their numbering."""
    label: list[object] = []
    for v in range(graph.n):
        if graph.kinds[v] in (ALLOC, FREE):
            b = graph.node_bufs[v][0]
            label.append((graph.ops[v], graph.buf_size[b], graph.buf_tier[b]))
        else:
            label.append((graph.ops[v], graph.pipes[v], graph.cycles[v]))
    rank = {x: i for i, x in enumerate(sorted(set(label)))}  # type: ignore[type-var]
    ids = [rank[x] for x in label]
    for _ in range(rounds):
        sig = [(ids[v], tuple(sorted(ids[u] for u in graph.preds[v])), tuple(sorted(ids[w] for w in graph.succs[v])))
               for v in range(graph.n)]
        order = {s: i for i, s in enumerate(sorted(set(sig)))}
        ids = [order[s] for s in sig]
    nodes = Counter(ids)
    edges = Counter((ids[u], ids[v]) for v in range(graph.n) for u in graph.preds[v])
    return nodes, edges


def matmul_text(m: int, k: int, n: int, t: str = "f16", out: str | None = None) -> str:
    out = out or t
    return (f"func.func @mm(%a: memref<{m}x{k}x{t}>, %b: memref<{k}x{n}x{t}>, %c: memref<{m}x{n}x{out}>) {{\n"
            f"  linalg.matmul ins(%a, %b : memref<{m}x{k}x{t}>, memref<{k}x{n}x{t}>) outs(%c : memref<{m}x{n}x{out}>)\n"
            "  return\n}\n")
