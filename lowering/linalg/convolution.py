"""Convolutions lowered as the conv family (`gen.conv`): a chain of convolutions of one
layout, each reading the previous one's output (used by nothing else but deallocs), is
one multi-layer kernel launched with (input, each filter, output).

Channels are cut into groups of at most the cube's edge `t` (`cube.cube_edge`); the
family keeps one channel count through its layers, so a layer changing it is counted
at the larger. The positions of the chain's largest map (batch x rows x
width, row-major) are cut into the fewest spatial blocks whose feature-map block
(`fmap`: a group's channels x the block's positions, in bytes) passes the family's
check; `halo` is the blocks a kernel window's rows reach beyond its own. The family keeps its traced weight
blocks (144 bytes, or less with many groups) and adds no residual or depth-to-space
step: linalg says neither here.
"""

from __future__ import annotations

import math

from xdsl.ir import Operation

from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.target import Core
from dan.lowering.gen.conv import ConvShape, conv
from dan.lowering.linalg.cube import cube_edge
from dan.lowering.linalg.elements import Lowered, NotLowered, memref_of

OPS = ("linalg.conv_2d_nchw_fchw", "linalg.conv_2d_nhwc_hwcf")


def chain(op: Operation) -> list[Operation]:
    """`op` and the convolutions of its layout that follow it, each reading the previous output."""
    ops = [op]
    cur = op.next_op
    while cur is not None:
        if cur.name.startswith("linalg."):
            out = ops[-1].operands[2]
            uses = {u.operation for u in out.uses} - {ops[-1], cur}
            if cur.name != op.name or cur.operands[0] is not out or any(u.name != "memref.dealloc" for u in uses):
                break
            ops.append(cur)
        cur = cur.next_op
    return ops


def lowered(op: Operation, core: Core) -> Lowered:
    """The chain starting at `op`, launched with (input, each filter, output)."""
    ops = chain(op)
    args = [ops[0].operands[0], *(o.operands[1] for o in ops), ops[-1].operands[2]]
    return Lowered("conv", ops, args, lambda name: lower_conv(ops, core, name))


def _dims(op: Operation) -> tuple[int, int, int, int, int, int, int]:
    """(N, C, H, W, F, KH, OH) of one convolution; NotLowered on strides or dilations."""
    x, _, e = memref_of(op.operands[0], "the input")
    w, _, _ = memref_of(op.operands[1], "the filter")
    y, _, _ = memref_of(op.operands[2], "the output")
    for what in ("strides", "dilations"):
        values = list(getattr(op, what).get_values())
        if any(v != 1 for v in values):
            raise NotLowered(f"{what} {values}: the conv family models unit ones")
    if op.name == "linalg.conv_2d_nchw_fchw":
        (n, c, h, wd), (f, _, kh, _), oh = x, w, y[2]
    else:
        (n, h, wd, c), (kh, _, _, f), oh = x, w, y[1]
    return n, c, h, wd, f, kh, oh


def lower_conv(ops: list[Operation], core: Core, name: str) -> KernelGraph:
    dims = [_dims(op) for op in ops]
    e = memref_of(ops[0].operands[0], "the input")[2]
    t = cube_edge(core, e)
    channels = max(max(c, f) for _, c, _, _, f, _, _ in dims)
    groups = math.ceil(channels / t)
    per_group = math.ceil(channels / groups)
    n, _, h, wd, _, _, _ = max(dims, key=lambda d: d[0] * d[2] * d[3])
    reach = max(d[5] for d in dims) // 2 * wd  # positions a window reaches beyond its own row
    positions = n * h * wd
    for blocks in range(1, positions + 1):
        size = math.ceil(positions / blocks)
        halo = 0 if blocks == 1 else math.ceil(reach / size)
        shape = ConvShape(len(ops), blocks, groups, halo, per_group * size * e, False, 0)
        try:
            shape.check()
        except ValueError:
            continue
        return conv(shape, name, core)
    raise NotLowered(f"no blocking of {channels} channels x {positions} positions fits L1 of the conv family")
