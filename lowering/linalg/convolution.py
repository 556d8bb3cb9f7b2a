"""Convolutions lowered as the conv family (`gen.conv`): a chain of convolutions of one
layout (`chain`: each reads the previous layer's value; every second layer may add the
value two layers back, the family's residual CONV_ADD) is one multi-layer kernel
launched with (input, each filter, output).

Channels are cut into groups of at most the cube's edge `t` (`cube.cube_edge`); the
family keeps one channel count through its layers, so a layer changing it is counted
at the larger. The positions of the chain's largest map (batch x rows x
width, row-major) are cut into the fewest spatial blocks whose feature-map block
(`fmap`: a group's channels x the block's positions, in bytes) passes the family's
check; `halo` is the blocks a kernel window's rows reach beyond its own. The family keeps its traced weight
blocks (144 bytes, or less with many groups); depth-to-space has no linalg op here.
"""

from __future__ import annotations

import math

from xdsl.ir import Operation

from dan.dialect.model.target import Core
from dan.lowering.gen.conv import ConvShape, conv, conv_nodes
from dan.lowering.linalg.cube import cube_edge
from dan.lowering.linalg.elements import Lowered, NotLowered, memref_of

OPS = ("linalg.conv_2d_nchw_fchw", "linalg.conv_2d_nhwc_hwcf")


def _next_linalg(op: Operation) -> Operation | None:
    """The next linalg op after `op`, with only allocations and constants between."""
    cur = op.next_op
    while cur is not None and not cur.name.startswith("linalg."):
        if cur.name not in ("memref.alloc", "arith.constant"):
            return None
        cur = cur.next_op
    return cur


def chain(op: Operation) -> tuple[list[Operation], int, bool]:
    """The chain starting at `op`: its ops, its layer count and whether every second
    layer adds the value two layers back (`linalg.add`, the family's residual). Each
    convolution reads the previous layer's value; a residual add follows the
    convolution of every odd layer (0-based) or of none; an intermediate value is used
    by nothing outside the chain but deallocs."""
    ops, ends, flags = [op], [0], []  # ends[k]: index in ops of layer k's last op
    hist = [op.operands[0], op.operands[2]]  # the input, then each layer's value
    added = False
    cur = _next_linalg(op)
    while cur is not None:
        odd = len(ends) % 2 == 0  # the last layer's index is odd
        if cur.name == "linalg.add" and odd and not added and len(hist) >= 3 and \
                set(cur.operands[:2]) == {hist[-1], hist[-3]} and hist[-1] is not hist[-3]:
            hist[-1] = cur.operands[2]
            added = True
        elif cur.name == op.name and cur.operands[0] is hist[-1]:
            if odd:
                flags.append(added)
            hist.append(cur.operands[2])
            ends.append(len(ops))
            added = False
        else:
            break
        ops.append(cur)
        ends[-1] = len(ops) - 1
        cur = _next_linalg(cur)
    if len(ends) % 2 == 0:
        flags.append(added)
    layers = len(ends)
    if flags and any(f != flags[0] for f in flags):  # keep the layers before the first that differs
        layers = 2 * flags.index(not flags[0]) + 1
    inside = set(ops[: ends[layers - 1] + 1])
    for k in range(layers - 1):  # an intermediate used outside ends the chain at its layer
        values = {o.operands[2] for o in ops[ends[k - 1] + 1 if k else 0: ends[k] + 1]}
        if any(u.operation not in inside and u.operation.name != "memref.dealloc" for v in values for u in v.uses):
            layers = k + 1
            break
    kept = ops[: ends[layers - 1] + 1]
    return kept, layers, bool(flags) and flags[0] and layers > 1


def lowered(op: Operation, core: Core) -> Lowered:
    """The chain starting at `op`, launched with (input, each filter, output)."""
    ops, _, residual = chain(op)
    convs = [o for o in ops if o.name in OPS]
    args = [ops[0].operands[0], *(o.operands[1] for o in convs), ops[-1].operands[2]]
    shape = conv_shape(convs, residual, core)
    return Lowered("conv", ops, args, lambda name: conv(shape, name, core), conv_nodes(shape))


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


def conv_shape(ops: list[Operation], residual: bool, core: Core) -> ConvShape:
    """The conv family's shape of a chain's convolutions (module docstring)."""
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
        shape = ConvShape(len(ops), blocks, groups, halo, per_group * size * e, residual, 0)
        try:
            shape.check()
        except ValueError:
            continue
        return shape
    raise NotLowered(f"no blocking of {channels} channels x {positions} positions fits L1 of the conv family")
