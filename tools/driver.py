"""What `dan-opt` does between reading its input and writing its output: one crossing.

A graph input stays as arrays while the passes are planning passes (`PlanningPass`,
`plan(view) -> Plan`); IR is built once, from the checked arrays, only when a pass
that works on IR comes next or when IR is the output. An IR input is parsed and
verified once and viewed as arrays once per run of planning passes; a kernel no pass
changed keeps its ops as written. IR we built is not verified again unless
`verify_each` asks (then after every pass, as `xdsl-opt` does); IR changed by a
non-planning pass is verified once at the end. Plan files and graph JSON come straight
from the arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dan.dialect.model.graph import KernelView, Plan
from dan.dialect.model.target import Core
from dan.lowering.io.backends import OutputError
from dan.lowering.io.formats import DIRECTORY, WriteRequest, output_format
from dan.lowering.io.frontends import load_arrays, view_module

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.passes import ModulePass


@dataclass(frozen=True)
class OptRequest:
    """One run of dan-opt: input, passes, core, and what to write where."""

    input: str
    spec: str = ""
    """Pass pipeline in xDSL's syntax (`mpas,dlr{policy=lru},cpe`)."""
    core: Core | None = None
    """Hardware to plan for (None: the kernel's own, else contest)."""
    output_format: str = "mlir"
    output: str | None = None
    frontend: str | None = None
    verify_each: bool = False
    generic: bool = False
    text: str | None = None
    """The input's text when already read (a chunk of --split-input-file)."""


@dataclass
class Output:
    """What a run produced: text for a stream, or a set of files to write."""

    text: str | None = None
    files: dict[Path, str] | None = None
    stale: list[Path] | None = None
    notes: tuple[str, ...] = ()
    views: list[KernelView] | None = None
    """The output's kernels as arrays (None when the run ended on IR it never viewed as arrays)."""


def available_passes(names: Iterable[str] = ()) -> dict[str, Callable[[], type]]:
    """Every dan pass by pipeline name (classes load lazily): the planners, which run
    on arrays without xDSL's IR (`dan.passes.pipeline.planner`), and the other dan
    passes, which run on IR; xDSL's own passes too when `names` holds one that is none
    of these (loading xDSL's registry loads its IR)."""
    from dan.lowering.linalg.registry import LINALG_PASSES
    from dan.lowering.sync.registry import SYNC_PASSES
    from dan.passes.pipeline.registry import DAN_PASSES, PLANNERS

    ours = {**LINALG_PASSES, **DAN_PASSES, **SYNC_PASSES, **PLANNERS}
    if all(name in ours for name in names):
        return ours
    from xdsl.transforms import get_all_passes

    return {**get_all_passes(), **ours}


def parse_passes(spec: str) -> list[Any]:
    """The passes of a pipeline spec (planners for the planning passes, xDSL passes for
    the others); bad names and options are one-line errors."""
    if not spec:
        return []
    from xdsl.utils.arg_spec import parse_pipeline

    from dan.passes.pipeline.options import check_options

    try:
        specs = list(parse_pipeline(spec))
        passes = available_passes(s.name for s in specs)
        check_options(passes, spec)
        unknown = [s.name for s in specs if s.name not in passes]
        if unknown:
            raise ValueError(f"Unrecognized passes: {unknown}")
        return [passes[s.name]().from_spec(s) for s in specs]
    except ValueError as e:
        raise OutputError(f"bad pass pipeline '{spec}': {e}") from None


class _Run:
    """The kernels of one run, as arrays or as a module, crossing at most once each way."""

    def __init__(self, req: OptRequest, warn: Callable[[str], None]) -> None:
        """`changed[i]`: kernel i's plan was made in this run (its IR must be built)."""
        self.req = req
        self.warn = warn
        loaded = load_arrays(req.input, req.core, req.frontend, req.text, verify=req.core is None)
        self.kernels: list[KernelView] | None = loaded if isinstance(loaded, list) else None
        self.module: ModuleOp | None = None if isinstance(loaded, list) else loaded
        self.sources: list[Any] = []  # the KernelOp each array kernel was viewed from
        self.changed: list[bool] = [True] * len(self.kernels or [])
        self.ir_changed = False  # a non-planning pass rewrote IR: verify once at the end
        self.dropped: dict[str, str] = {}  # kernel name -> warning: a layout made here was dropped
        self.layout_by: dict[str, str] = {}  # kernel name -> the pass of this run that made its layout
        if self.module is not None and req.core is not None:
            from dan.dialect.ir.kernel.view import kernels, retarget

            for kernel in kernels(self.module):
                retarget(kernel, req.core)
            self.module.verify()  # capacities changed

    def arrays(self) -> list[KernelView]:
        """The kernels as arrays (an IR module is viewed once per run of planning passes)."""
        if self.kernels is None:
            from dan.dialect.ir.kernel.view import kernels

            assert self.module is not None
            self.sources = kernels(self.module)
            self.kernels = view_module(self.module, None)
            self.changed = [False] * len(self.kernels)
        return self.kernels

    def ir(self) -> ModuleOp:
        """The kernels as IR: kernels whose plan changed are built once, the rest kept."""
        if self.kernels is not None and (self.module is None or any(self.changed)):
            from dan.lowering.io.backends import build_module

            built = build_module([k for k, c in zip(self.kernels, self.changed) if c])
            if self.module is None:
                self.module = built
            else:
                from xdsl.rewriter import Rewriter

                new_ops = iter(list(built.ops))
                for source, c in zip(self.sources, self.changed):
                    if c:
                        op = next(new_ops)
                        op.detach()
                        Rewriter.replace_op(source, op)
            if self.req.verify_each:
                self.module.verify()
        self.kernels = None
        self.layout_by.clear()  # the layouts now belong to the IR
        assert self.module is not None
        return self.module

    def plan(self, p: Any) -> None:
        """Run one planning pass on every kernel's arrays."""
        from dan.passes.pipeline.planner import plan_arrays

        for i, k in enumerate(self.arrays()):
            new = plan_arrays(k, [p]).plan
            if new is not k.plan:
                self._note_layout(k, new, p.name)
                k.plan = new
                self.changed[i] = True

    def _note_layout(self, k: KernelView, new: Plan, name: str) -> None:
        """Remember a layout that an earlier pass of this run made and a later one dropped."""
        if new.offsets is not None:
            self.layout_by[k.graph.name] = name
            self.dropped.pop(k.graph.name, None)
        elif k.plan.offsets is not None and k.graph.name in self.layout_by:
            maker = self.layout_by.pop(k.graph.name)
            self.dropped[k.graph.name] = (
                f"kernel @{k.graph.name}: pass '{name}' drops the layout made by '{maker}'; "
                "run a layout pass (dlr) after it"
            )

    def apply(self, p: ModulePass, ctx: Any) -> None:
        module = self.ir()
        p.apply(ctx, module)
        self.ir_changed = True
        if self.req.verify_each:
            module.verify()


def run_opt(
    req: OptRequest, warn: Callable[[str], None], on_pass: Callable[[str, float], None] | None = None
) -> Output:
    """Run the request's passes across one crossing and produce its output;
    `on_pass(name, seconds)` hears of every pass as it ends."""
    from time import perf_counter

    from dan.lowering.io.backends import output_directory

    fmt = output_format("dan-opt", req.output_format)
    directory = fmt.commands["dan-opt"] == DIRECTORY
    passes = parse_passes(req.spec)
    if directory:
        output_directory(req.output, f"{req.output_format} files")
    run = _Run(req, warn)
    ctx = None
    for p in passes:
        started = perf_counter()
        if _is_planning(p):
            run.plan(p)
        else:
            if ctx is None:
                from dan.lowering.io.ir_io import context

                ctx = context()
            run.apply(p, ctx)
        if on_pass is not None:
            on_pass(p.name, perf_counter() - started)
    for message in run.dropped.values():
        warn(message)
    if fmt.ir:
        views = run.kernels
        module = run.ir()
        if run.ir_changed and not req.verify_each:
            module.verify()
        return Output(text=fmt.writer(module, WriteRequest(generic=req.generic)).text, views=views)
    kernels = run.arrays()
    where = output_directory(req.output, f"{req.output_format} files") if directory else None
    out = fmt.writer(kernels, WriteRequest(where, trusted=run.changed))
    if directory:
        return Output(files=out.files, stale=out.stale, notes=tuple(out.notes), views=kernels)
    return Output(text=out.text)


def _is_planning(p: Any) -> bool:
    from dan.passes.pipeline.planner import Planner

    return isinstance(p, Planner)
