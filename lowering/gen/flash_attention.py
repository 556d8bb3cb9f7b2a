"""Flash-attention kernels in the shape of the traced `FlashAttention_Case0`.

Program order: key/value blocks outer, query blocks inner (as the trace issues it).
For each pair `(q, kv)` the query block attends to:
1. S = Q K^T on CUBE over `d_chunks` (Q and K blocks loaded into L1 on first use);
2. S to UB (COPY, FIXP), ROWMAX, COMPACT to the row max m, SUB, EXP, ROWSUM, COMPACT
   to the row sum l (VECTOR, in UB);
3. for a later pair of the same query block, the online-softmax merge of (m, l):
   MAX, SUB, EXP (alpha), SUB, EXP (beta), MUL, MUL, ADD;
4. P = exp(S - m) to L1 (COPY, MTE3), O_c = P V_c on CUBE for each of `v_chunks`,
   each O_c to UB (COPY, FIXP); on a later pair the running rescale
   O = alpha O_old + beta O_c (MUL, MUL, ADD);
5. after the query block's last pair: REC of l, O times 1/l, COPY_OUT of the output
   chunks, then of l and m (MTE3).
`flash_attention(FlashShape(4, 4))` is `FlashAttention_Case0` node for node.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.target import CONTEST, Core
from dan.lowering.gen.matmul import L1Blocks, cube_step
from dan.lowering.gen.trace import Trace


@dataclass(frozen=True)
class FlashShape:
    """`q_blocks` query blocks attending to `kv_blocks` key/value blocks (with `causal`, only
    to those up to the diagonal); score blocks of `block` bytes in UB, L1 blocks of
    `2 * block`, row statistics of `block // 64`."""

    q_blocks: int = field(default=4, metadata={"help": "query blocks"})
    kv_blocks: int = field(default=4, metadata={"help": "key/value blocks"})
    d_chunks: int = field(default=2, metadata={"help": "chunks of the head dimension (QK^T steps)"})
    v_chunks: int = field(default=2, metadata={"help": "column chunks of V and of the output"})
    block: int = field(default=128, metadata={"help": "bytes of a score block in UB"})
    causal: bool = field(default=False, metadata={"help": "attend only up to the diagonal"})

    def check(self) -> None:
        if min(self.q_blocks, self.kv_blocks, self.d_chunks, self.v_chunks) < 1:
            raise ValueError("flash-attention: block and chunk counts must be at least 1")
        if not 64 <= self.block <= 256:
            raise ValueError("flash-attention: block must be 64 to 256 bytes (L0C holds 512)")

    def pair_count(self) -> int:
        """`len(self.pairs())` without listing them: each query block's kv blocks are a
        prefix, those below `(q + 1) * ratio`, counted as `pairs` computes them for up to
        65,536 query blocks and 2^53 kv blocks; beyond, in exact arithmetic (where the
        float ratio of `pairs` may admit up to gcd(q_blocks, kv_blocks) - 1 pairs more)."""
        if not self.causal:
            return self.q_blocks * self.kv_blocks
        Q, K = self.q_blocks, self.kv_blocks
        if Q <= 1 << 16 and K <= 1 << 53:
            ratio = K / Q
            return sum(min(K, math.ceil((q + 1) * ratio)) for q in range(Q))
        g = math.gcd(K, Q)  # sum of ceil(jK/Q) for j = 1..Q, in exact arithmetic
        return ((K - 1) * (Q - 1) + g - 1) // 2 + K + Q - g

    def pairs(self) -> list[tuple[int, int]]:
        """The (q, kv) pairs in program order; causal keeps kv blocks up to the diagonal."""
        ratio = self.kv_blocks / self.q_blocks
        return [(q, kv) for kv in range(self.kv_blocks) for q in range(self.q_blocks)
                if not self.causal or kv < (q + 1) * ratio]


# VECTOR cycles: (on a row statistic of 2 bytes, on a 128-byte block) from the trace.
_VEC = {"MAX": (23, 0), "SUB": (24, 151), "EXP": (31, 218), "MUL": (25, 38), "ADD": (24, 37),
        "REC": (37, 0), "ROWMAX": (0, 310), "ROWSUM": (0, 342), "COMPACT": (0, 113)}


_ALIKE = {"MIN": "MAX", "ROWMIN": "ROWMAX"}
"""Ops without a traced cost of their own, costed as a traced op of the same class."""
_BLOCK_ALIKE = {"MAX": "ADD", "MIN": "ADD", "REC": "EXP"}
"""On a block, a compare costs as an add and a reciprocal as an exp (untraced)."""


def vector_cycles(name: str, size: int) -> int:
    """VECTOR cycles of `name` on a UB block of `size` bytes: the traced cost of a
    128-byte block, scaled to `size` (as the family scales its blocks)."""
    name = _ALIKE.get(name, name)
    return _VEC[_BLOCK_ALIKE.get(name, name)][1] * size // 128


def stat_cycles(name: str, size: int) -> int:
    """VECTOR cycles of `name` on a row statistic of `size` bytes (traced per 2 bytes)."""
    return _VEC[_ALIKE.get(name, name)][0] * max(size // 2, 1)


def ub_copy_out_cycles(size: int) -> int:
    """MTE3 cycles of copying a UB block of `size` bytes out to GM."""
    return size // 2 + 127


class _Kernel:
    def __init__(self, shape: FlashShape) -> None:
        self.s, self.trace = shape, Trace()
        self.l1 = L1Blocks(self.trace)
        self.stat = max(shape.block // 64, 1)

    def vec(self, name: str, bufs: list[int], row: bool = False) -> int:
        """A VECTOR op writing a fresh UB buffer (a row statistic when `row`)."""
        small, big = _VEC[name]
        cycles = small * self.stat // 2 if row else big * self.s.block // 128
        out = self.trace.alloc(self.stat if row else self.s.block, "UB")
        self.trace.op(name, "VECTOR", cycles, [out, *bufs])
        return out

    def fixp_copy(self, acc: int) -> int:
        out = self.trace.alloc(self.s.block, "UB")
        self.trace.op("COPY", "FIXP", self.s.block // 4 + 9, [out, acc])
        return out

    def copy_scaled(self, acc: int, factor: int) -> int:
        """An L0C result to UB and times a row factor (both UB buffers allocated first)."""
        out, scaled = self.trace.alloc(self.s.block, "UB"), self.trace.alloc(self.s.block, "UB")
        self.trace.op("COPY", "FIXP", self.s.block // 4 + 9, [out, acc])
        self.trace.op("MUL", "VECTOR", _VEC["MUL"][1] * self.s.block // 128, [scaled, out, factor])
        return scaled

    def compact(self, src: int) -> int:
        out, scratch = self.trace.alloc(self.stat, "UB"), self.trace.alloc(self.s.block // 8, "UB")
        self.trace.op("COMPACT", "VECTOR", _VEC["COMPACT"][1] * self.s.block // 128, [out, src, scratch])
        return out

    def scores(self, q: int, kv: int) -> tuple[int, int, int]:
        """S = Q K^T and its softmax pieces: (exp block, row max, row sum)."""
        sh, tr, l1 = self.s, self.trace, self.l1
        size = 2 * sh.block
        acc = tr.alloc(size, "L0C")
        for c in range(sh.d_chunks):
            a, b = l1.load([(("Q", q, c), size, l1.copy_in(size)), (("K", kv, c), size, l1.copy_in(size))])
            cube_step(tr, acc, a, b, sh.block, sh.block // 4 + 22)
        s_ub = tr.alloc(sh.block, "UB")
        rmax = tr.alloc(sh.block, "UB")
        tr.op("COPY", "FIXP", sh.block // 4 + 9, [s_ub, acc])
        tr.op("ROWMAX", "VECTOR", _VEC["ROWMAX"][1] * sh.block // 128, [rmax, s_ub])
        m = self.compact(rmax)
        e = self.vec("EXP", [self.vec("SUB", [s_ub, rmax])])
        rsum = tr.alloc(sh.block, "UB")
        tr.op("ROWSUM", "VECTOR", _VEC["ROWSUM"][1] * sh.block // 128, [rsum, e])
        return e, m, self.compact(rsum)

    def pv(self, kv: int, e: int) -> list[int]:
        """P = e to L1, O_c = P V_c for each chunk; the L0C results."""
        sh, tr, l1 = self.s, self.trace, self.l1
        size = 2 * sh.block
        to_l1 = lambda b: tr.op("COPY", "MTE3", 2 * sh.block + 15, [b, e])  # noqa: E731
        accs = []
        for c in range(sh.v_chunks):
            acc = tr.alloc(size, "L0C")
            p, v = l1.load([(("P", kv, e), size, to_l1), (("V", kv, c), size, l1.copy_in(size))])
            cube_step(tr, acc, p, v, sh.block, sh.block // 4 + 22)
            accs.append(acc)
        return accs

    def run(self, name: str, core: Core = CONTEST) -> KernelGraph:
        sh, tr = self.s, self.trace
        pairs = sh.pairs()
        last = {q: kv for q, kv in pairs}
        state: dict[int, tuple[int, int, list[int]]] = {}  # q -> (m, l, O chunks)
        for q, kv in pairs:
            e, m_cur, l_cur = self.scores(q, kv)
            if q in state:
                m_old, l_old, o_old = state[q]
                m = self.vec("MAX", [m_old, m_cur], row=True)
                alpha = self.vec("EXP", [self.vec("SUB", [m_old, m], row=True)], row=True)
                beta = self.vec("EXP", [self.vec("SUB", [m_cur, m], row=True)], row=True)
                lb = self.vec("MUL", [beta, l_cur], row=True)
                la = self.vec("MUL", [alpha, l_old], row=True)
                l_new = self.vec("ADD", [la, lb], row=True)
                scaled = [self.copy_scaled(acc, beta) for acc in self.pv(kv, e)]
                kept = [self.vec("MUL", [o, alpha]) for o in o_old]
                state[q] = (m, l_new, [self.vec("ADD", [k, s]) for k, s in zip(kept, scaled)])
            else:
                state[q] = (m_cur, l_cur, [self.fixp_copy(acc) for acc in self.pv(kv, e)])
            if last[q] == kv:
                m, l_sum, o = state[q]
                r = self.vec("REC", [l_sum], row=True)
                outs = [self.vec("MUL", [chunk, r]) for chunk in o]
                for b in outs:
                    tr.op("COPY_OUT", "MTE3", sh.block // 2 + 127, [b], writes=0)
                for b in (l_sum, m):
                    tr.op("COPY_OUT", "MTE3", 150 * max(self.stat // 2, 1), [b], writes=0)
        return tr.finish(name, core)


def flash_attention(shape: FlashShape, name: str | None = None, core: Core = CONTEST) -> KernelGraph:
    """The flash-attention kernel of `shape` on `core` (see the module docstring for the order)."""
    shape.check()
    return _Kernel(shape).run(name or f"flash_attention_{shape.q_blocks}x{shape.kv_blocks}", core)


def flash_attention_nodes(shape: FlashShape) -> int:
    """The node count of `flash_attention(shape)`, from the shape alone: per (q, kv)
    pair the scores and the P V products, per query block its first and last pair's
    extra work, on every other pair the online-softmax merge, each L1 block of Q, K and
    V loaded once; an ALLOC and a FREE per buffer, one node per operation."""
    pairs, q, kv, d, v = shape.pair_count(), shape.q_blocks, shape.kv_blocks, shape.d_chunks, shape.v_chunks
    loads = (q + kv) * d + kv * v  # L1 blocks: a buffer and a COPY_IN each
    merges = pairs - q  # pairs after a query block's first
    buffers = pairs * (11 + 2 * d + 3 * v) + q * (1 + 2 * v) + merges * (8 + 4 * v) + loads
    operations = pairs * (8 + 3 * d + 3 * v) + q * (3 + 3 * v) + merges * (8 + 4 * v) + loads
    return 2 * buffers + operations


def random_flash_shape(rng: random.Random) -> FlashShape:
    """A small flash-attention shape drawn from `rng` (about 100 to 2,500 nodes)."""
    return FlashShape(rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 2), rng.randint(1, 2),
                      rng.choice((64, 128, 128)), rng.random() < 0.3)
