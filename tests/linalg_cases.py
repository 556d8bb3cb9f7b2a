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


def attention_text(sq: int, skv: int, d: int, dv: int, t: str = "f16") -> str:
    """O = softmax(Q KT) V in linalg on memrefs (rows: max, subtract, exp, sum, divide)."""
    q, kt, v, o, s, r = (f"memref<{sq}x{d}x{t}>", f"memref<{d}x{skv}x{t}>", f"memref<{skv}x{dv}x{t}>",
                         f"memref<{sq}x{dv}x{t}>", f"memref<{sq}x{skv}x{t}>", f"memref<{sq}x{t}>")
    maps = ('{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, '
            'affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}')

    def reduce(src: str, dst: str, op: str) -> str:
        return (f"  linalg.reduce ins({src} : {s}) outs({dst} : {r}) dimensions = [1]\n"
                f"    (%x: {t}, %acc: {t}) {{\n      %y = arith.{op} %x, %acc : {t}\n      linalg.yield %y : {t}\n    }}\n")

    def rows(src: str, stat: str, op: str) -> str:
        return (f"  linalg.generic {maps} ins({src}, {stat} : {s}, {r}) outs(%p : {s}) {{\n"
                f"  ^bb0(%x: {t}, %z: {t}, %out: {t}):\n    %y = arith.{op} %x, %z : {t}\n    linalg.yield %y : {t}\n  }}\n")

    return (f"func.func @attention(%q: {q}, %kt: {kt}, %v: {v}, %o: {o}) {{\n"
            f"  %s = memref.alloc() : {s}\n  %p = memref.alloc() : {s}\n"
            f"  %m = memref.alloc() : {r}\n  %l = memref.alloc() : {r}\n"
            f"  linalg.matmul ins(%q, %kt : {q}, {kt}) outs(%s : {s})\n" + reduce("%s", "%m", "maximumf")
            + rows("%s", "%m", "subf") + f"  linalg.exp ins(%p : {s}) outs(%p : {s})\n" + reduce("%p", "%l", "addf")
            + rows("%p", "%l", "divf") + f"  linalg.matmul ins(%p, %v : {s}, {v}) outs(%o : {o})\n  return\n}}\n")


def conv_text(n: int, c: int, h: int, w: int, f: int, k: int, layout: str = "nchw") -> str:
    """One unit-stride convolution without padding of a `k x k` filter, in `layout`."""
    oh, ow = h - k + 1, w - k + 1
    if layout == "nchw":
        x, wt, y = f"memref<{n}x{c}x{h}x{w}xf16>", f"memref<{f}x{c}x{k}x{k}xf16>", f"memref<{n}x{f}x{oh}x{ow}xf16>"
    else:
        x, wt, y = f"memref<{n}x{h}x{w}x{c}xf16>", f"memref<{k}x{k}x{c}x{f}xf16>", f"memref<{n}x{oh}x{ow}x{f}xf16>"
    op = "linalg.conv_2d_nchw_fchw" if layout == "nchw" else "linalg.conv_2d_nhwc_hwcf"
    return (f"func.func @c(%x: {x}, %w: {wt}, %y: {y}) {{\n  {op} {{dilations = dense<1> : tensor<2xi64>, "
            f"strides = dense<1> : tensor<2xi64>}} ins(%x, %w : {x}, {wt}) outs(%y : {y})\n  return\n}}\n")


def conv_chain_text(layers: int, residual: set[int], used_after: int | None = None) -> str:
    """`layers` 1x1 convolutions over 16 channels of a 4x4 map; after layer i in
    `residual` a `linalg.add` of the value two layers back; with `used_after`, that
    layer's value is also copied out by a `memref.copy` after the chain."""
    t, w = "memref<1x16x4x4xf16>", "memref<16x16x1x1xf16>"
    conv = ("  linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}"
            " ins({x}, %w : {t}, {w}) outs({y} : {t})\n")
    body, hist = [], ["%x"]
    for i in range(layers):
        body.append(f"  %c{i} = memref.alloc() : {t}\n" + conv.format(x=hist[-1], y=f"%c{i}", t=t, w=w))
        hist.append(f"%c{i}")
        if i in residual:
            body.append(f"  %r{i} = memref.alloc() : {t}\n  linalg.add ins(%c{i}, {hist[-3]} : {t}, {t}) outs(%r{i} : {t})\n")
            hist[-1] = f"%r{i}"
    tail = f'  "memref.copy"({hist[used_after + 1]}, %y) : ({t}, {t}) -> ()\n' if used_after is not None else ""
    return f"func.func @f(%x: {t}, %w: {w}, %y: {t}) {{\n" + "".join(body) + tail + "  return\n}\n"
