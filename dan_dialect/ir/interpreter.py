"""A reference interpreter of the `dan` dialect (xDSL `Interpreter` functions).

It executes a verified kernel op by op in block order and derives what docs/MODEL.md says
the schedule costs, independently of `replay.py` (slow and literal, for
cross-checking):
- a token's value is its node's finish time; a buffer value is a `Placement`
  (tier, interval `[offset, offset + size)`, the finish time of the op that placed it);
- `start = max(finish of the `after` tokens, readiness of the node's buffers, free time
  of its pipe)`; `finish = start + cycles`. A node using a buffer waits for the op
  that placed it (its ALLOC, or the SPILL_IN that brought it back);
- a SPILL_OUT waits for every earlier node that touched its buffer (the spill edges);
- with a layout, a placement is checked against its tier's bounds and the buffers
  resident there, and waits for the release (FREE or SPILL_OUT) of the latest earlier
  occupant of each address it takes (the address-reuse edges). Each tier keeps a list
  of address segments stamped with the finish time of their latest release.
The first broken invariant makes the run invalid (makespan 0, as in the replay); the
order-only peaks are still counted over every ALLOC and FREE.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.utils.exceptions import InterpretationError

from dan.dialect.ir.attributes import BufType
from dan.dialect.ir.kernel.op import KernelOp
from dan.dialect.ir.node_op import NodeOp
from dan.dialect.ir.ops import AllocOp, ComputeOp, DmaOp, FreeOp, SpillInOp, SpillOutOp
from dan.dialect.model.replay import Metrics, PlanViolation
from dan.dialect.model.target import Core


@dataclass
class Placement:
    """The Python value of a `!dan.buf` SSA value: one placement of a buffer."""

    buf_id: int
    tier: int
    size: int
    offset: int | None
    """None when the kernel has no layout."""
    ready: int
    """Finish time of the op that made the buffer resident here."""
    resident: bool = True


class _Invalid(Exception):
    def __init__(self, kind: str, message: str) -> None:
        self.violation = PlanViolation(kind, message)


@dataclass
class KernelState:
    """Everything the run of one kernel accumulates."""

    target: Core
    layout: bool
    clean: set[int]
    """Buffer ids some COPY_IN touches (their SPILL_OUT is free)."""
    violation: PlanViolation | None = None
    pipe_free: dict[str, int] = field(default_factory=dict)
    touched: dict[int, int] = field(default_factory=dict)
    """Buffer id -> latest finish among the nodes that touched it so far."""
    residents: list[list[tuple[int, int, Placement]]] = field(init=False)
    """Per tier: (start, end, placement) of the buffers resident there."""
    history: list[list[tuple[int, int, int]]] = field(init=False)
    """Per tier: disjoint segments (start, end, finish of the latest release there)."""
    live: list[int] = field(init=False)
    count: list[int] = field(init=False)
    peaks: list[int] = field(init=False)
    peak_now: int = 0
    peak: int = 0
    l0_rule: bool = True
    spill_count: int = 0
    traffic: int = 0
    times: dict[int, tuple[int, int]] = field(default_factory=dict)
    """Node id -> (start, finish)."""

    def __post_init__(self) -> None:
        ntiers = len(self.target.tiers)
        self.residents = [[] for _ in range(ntiers)]
        self.history = [[] for _ in range(ntiers)]
        self.live, self.count, self.peaks = [0] * ntiers, [0] * ntiers, [0] * ntiers

    @property
    def timing(self) -> bool:
        return self.violation is None

    def finish(self, op: NodeOp, ready: int, cycles: int, pipe: str | None) -> int:
        """Time `op` (start no earlier than `ready`) and return its finish."""
        if not self.timing:
            return 0
        if pipe is not None:
            ready = max(ready, self.pipe_free.get(pipe, 0))
            self.pipe_free[pipe] = ready + cycles
        self.times[op.node_id] = (ready, ready + cycles)
        return ready + cycles

    def touch(self, buf_id: int, time: int) -> None:
        if time > self.touched.get(buf_id, 0):
            self.touched[buf_id] = time

    def place(self, p: Placement, what: str) -> int:
        """Make `p` resident; returns the finish of the releases it must wait for."""
        if not self.layout or not self.timing or p.offset is None:
            return 0
        off, end, cap = p.offset, p.offset + p.size, self.target.capacity[p.tier]
        tier = self.target.tiers[p.tier]
        if off < 0 or end > cap:
            raise _Invalid("out-of-bounds", f"{what}: buffer {p.buf_id} at [{off}, {end}) outside {tier} capacity {cap}")
        if p.size:
            for start, stop, q in self.residents[p.tier]:
                if start < stop and start < end and off < stop:
                    raise _Invalid(
                        "overlap",
                        f"{what}: buffer {p.buf_id} at [{off}, {end}) overlaps buffer {q.buf_id} "
                        f"at [{start}, {stop}) in {tier}",
                    )
        self.residents[p.tier].append((off, end, p))
        return max((f for s, e, f in self.history[p.tier] if s < end and off < e), default=0)

    def release(self, p: Placement, finish: int) -> None:
        """`p` leaves its tier at time `finish`: stamp its addresses."""
        p.resident = False
        if not self.layout or not self.timing or p.offset is None:
            return
        self.residents[p.tier] = [r for r in self.residents[p.tier] if r[2] is not p]
        off, end = p.offset, p.offset + p.size
        if off == end:
            return
        kept: list[tuple[int, int, int]] = []
        for s, e, f in self.history[p.tier]:
            if e <= off or s >= end:
                kept.append((s, e, f))
                continue
            if s < off:
                kept.append((s, off, f))
            if e > end:
                kept.append((end, e, f))
        kept.append((off, end, finish))
        kept.sort()
        self.history[p.tier] = kept

    def count_alloc(self, p: Placement) -> None:
        t = p.tier
        self.live[t] += p.size
        self.count[t] += 1
        self.peaks[t] = max(self.peaks[t], self.live[t])
        if t in self.target.peak_tiers:
            self.peak_now += p.size
            self.peak = max(self.peak, self.peak_now)
        if t in self.target.l0_tiers and self.count[t] > 1:
            self.l0_rule = False

    def count_free(self, p: Placement) -> None:
        self.live[p.tier] -= p.size
        self.count[p.tier] -= 1
        if p.tier in self.target.peak_tiers:
            self.peak_now -= p.size

    def metrics(self) -> Metrics:
        valid = self.violation is None
        makespan = max((f for _, f in self.times.values()), default=0) if valid else 0
        return Metrics(
            valid, self.violation, self.peak, dict(zip(self.target.tiers, self.peaks)), self.l0_rule,
            self.spill_count, self.traffic, makespan,
        )


@register_impls
class DanFunctions(InterpreterFunctions):
    """What each dan op does to a `KernelState` (stored on the interpreter)."""

    @staticmethod
    def state(interpreter: Interpreter) -> KernelState:
        return interpreter.get_data(DanFunctions, "state", _no_state)

    @impl(KernelOp)
    def run_kernel(self, interpreter: Interpreter, op: KernelOp, args: PythonValues) -> PythonValues:
        target = interpreter.get_data(DanFunctions, "target", lambda: None)
        interpreter.set_data(DanFunctions, "state", _initial_state(op, target))
        interpreter.run_ssacfg_region(op.body, (), op.sym_name.data)
        return ()

    @impl(AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: AllocOp, args: PythonValues) -> PythonValues:
        st = self.state(interpreter)
        t: BufType = op.buf_type
        p = Placement(op.buf_id, st.target.tier_index[t.tier], t.size, op.offset, 0)
        st.count_alloc(p)
        ready = max(args, default=0)
        done = _guard(st, lambda: st.finish(op, max(ready, st.place(p, op.describe())), 0, None))
        p.ready = done
        st.touch(p.buf_id, done)
        return p, done

    @impl(FreeOp)
    def run_free(self, interpreter: Interpreter, op: FreeOp, args: PythonValues) -> PythonValues:
        st = self.state(interpreter)
        p: Placement = args[0]
        st.count_free(p)

        def run() -> int:
            if not p.resident:
                raise _Invalid("not-resident", f"{op.describe()} frees buffer {p.buf_id} while it is not resident")
            done = st.finish(op, max((p.ready, *args[1:])), 0, None)
            st.release(p, done)
            return done

        return (_guard(st, run),)

    @impl(ComputeOp)
    def run_compute(self, interpreter: Interpreter, op: ComputeOp, args: PythonValues) -> PythonValues:
        return (self._work(interpreter, op, args),)

    @impl(DmaOp)
    def run_dma(self, interpreter: Interpreter, op: DmaOp, args: PythonValues) -> PythonValues:
        return (self._work(interpreter, op, args),)

    def _work(self, interpreter: Interpreter, op: ComputeOp | DmaOp, args: PythonValues) -> int:
        st = self.state(interpreter)
        nbufs = len(op.bufs)
        bufs: tuple[Placement, ...] = args[:nbufs]

        def run() -> int:
            ready = max(args[nbufs:], default=0)
            for p in bufs:
                if not p.resident:
                    raise _Invalid("not-resident", f"{op.describe()} uses buffer {p.buf_id} while it is not resident")
                ready = max(ready, p.ready)
            done = st.finish(op, ready, op.cycles, op.pipe)
            for p in bufs:
                st.touch(p.buf_id, done)
            return done

        return _guard(st, run)

    @impl(SpillOutOp)
    def run_spill_out(self, interpreter: Interpreter, op: SpillOutOp, args: PythonValues) -> PythonValues:
        st = self.state(interpreter)
        p: Placement = args[0]
        clean = p.buf_id in st.clean
        st.spill_count += 1
        st.traffic += p.size if clean else 2 * p.size

        def run() -> int:
            if not p.resident:
                raise _Invalid("bad-spill", f"{op.describe()}: buffer {p.buf_id} is not resident")
            ready = max((st.touched.get(p.buf_id, 0), *args[1:]))
            cycles = 0 if clean else st.target.spill_cycles(p.size)
            done = st.finish(op, ready, cycles, st.target.pipes[st.target.spill_out_pipe])
            st.release(p, done)
            st.touch(p.buf_id, done)
            return done

        return (_guard(st, run),)

    @impl(SpillInOp)
    def run_spill_in(self, interpreter: Interpreter, op: SpillInOp, args: PythonValues) -> PythonValues:
        st = self.state(interpreter)
        old: Placement = args[0]
        p = Placement(old.buf_id, old.tier, old.size, op.offset, 0)

        def run() -> int:
            if old.resident:
                raise _Invalid("bad-spill", f"{op.describe()}: buffer {p.buf_id} is already resident")
            ready = max(max(args[1:], default=0), st.place(p, op.describe()))
            done = st.finish(op, ready, st.target.spill_cycles(p.size), st.target.pipes[st.target.spill_in_pipe])
            st.touch(p.buf_id, done)
            return done

        p.ready = _guard(st, run)
        return p, p.ready


def _guard(st: KernelState, run: Callable[[], int]) -> int:
    """Run one op's timing; the first violation stops timing for the rest of the kernel."""
    if not st.timing:
        return 0
    try:
        return run()
    except _Invalid as e:
        st.violation = e.violation
        return 0


def _no_state() -> KernelState:
    raise InterpretationError("dan op interpreted outside a dan.kernel")


def _initial_state(kernel: KernelOp, target: Core | None) -> KernelState:
    """Pre-scan: the layout mode and the COPY_IN-backed buffers."""
    clean: set[int] = set()
    buf_of: dict[Any, int] = {}
    with_offset: list[int] = []
    without: list[int] = []
    spills = False
    for op in kernel.body.block.ops:
        if isinstance(op, AllocOp):
            buf_of[op.buffer] = op.buf_id
            (without if op.offset is None else with_offset).append(op.buf_id)
        elif isinstance(op, SpillInOp):
            buf_of[op.buffer] = buf_of[op.source]
            spills = True
        elif isinstance(op, ComputeOp | DmaOp) and op.op_name == "COPY_IN":
            clean.update(buf_of[b] for b in op.bufs)
    if with_offset and without:
        raise InterpretationError(
            f"kernel @{kernel.sym_name.data}: buffer {without[0]} has no offset but buffer {with_offset[0]} has one"
        )
    st = KernelState(target or kernel.target, bool(with_offset), clean)
    if spills and not st.layout:
        st.violation = PlanViolation("bad-spill", "spills given without a layout")
    return st


@dataclass
class Execution:
    """The result of interpreting one kernel."""

    metrics: Metrics
    times: dict[int, tuple[int, int]]
    """Node id -> (start, finish); empty when the run is invalid."""


def execute_kernel(kernel: KernelOp, target: Core | None = None) -> Execution:
    """Interpret a verified kernel (on `target`, default: the kernel's own)."""
    module = kernel.parent_op()
    interpreter = Interpreter(module if isinstance(module, ModuleOp) else ModuleOp([]))
    interpreter.register_implementations(DanFunctions())
    interpreter.set_data(DanFunctions, "target", target)
    interpreter.run_op(kernel, ())
    st = DanFunctions.state(interpreter)
    return Execution(st.metrics(), st.times if st.violation is None else {})
