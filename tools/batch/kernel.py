"""One kernel of a batch: an input file in, its output files and summary rows out.

`plan_kernel` is the task every executor runs (in-process, in a process pool or on
Ray): it plans one input through the dan-opt driver (`run_opt`, unchanged) and returns
the files to write as names relative to the kernel's own directory, plus one summary
row per kernel of the input with the replay's metrics. It writes nothing itself, so a
worker on another machine needs no shared file system, and the driver writes each
kernel's files as one set. A kernel that fails gives a row with status `failed` and a
one-line error; it never stops the others. Everything but the timing columns is a
function of the input bytes, the pipeline, the target and the output format.
"""

from __future__ import annotations

import gc
import hashlib
import json
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from time import perf_counter
from typing import Any

from dan.dialect.model.target import CONTEST, Core
from dan.lowering.io.frontends import FRONTENDS, GRAPH_FRONTENDS

BATCH_FORMATS: tuple[str, ...] = ("plan", "mlir")
"""What a batch writes per kernel: the plan files, or dan IR (`NAME.mlir`)."""
MANIFEST = "batch.json"
"""The file, written with a kernel's outputs, that records them, each with its size and
SHA-256 (for `--resume`)."""


class BatchError(ValueError):
    """A batch that cannot start (no inputs, two kernels with one name)."""


@dataclass(frozen=True)
class BatchOptions:
    """What every kernel of a batch is planned with."""

    spec: str
    """Pass pipeline in xDSL's syntax (a named pipeline already expanded)."""
    outdir: str = "."
    """The batch's output directory; kernel NAME's files go to `outdir/NAME/`."""
    core: Core | None = None  # None: each kernel's own target, else contest
    output_format: str = "plan"
    """One of `BATCH_FORMATS`."""
    describe: Callable[[BaseException], str] = str
    """One line for an error (module-level, so it pickles by name)."""
    user_errors: tuple[type[BaseException], ...] = ()
    """Errors that are the input's fault; any other is reported as an internal error."""
    bounds: bool = False
    """Add each metric's best lower bound (`dan.dialect.model.bounds.report`; about 7 ms per 1,000 nodes)."""

    def key(self) -> str:
        """What the outputs depend on besides the input (compared by `--resume`)."""
        core = self.core or CONTEST
        target = {f.name: getattr(core, f.name) for f in fields(core)}
        target = {name: sorted(v) if isinstance(v, frozenset) else v for name, v in target.items()}
        return json.dumps({"spec": self.spec, "format": self.output_format, "target": target,
                           "own_target": self.core is None, "bounds": self.bounds}, sort_keys=True)


@dataclass(frozen=True)
class KernelTask:
    """One input of a batch; `name` names its output directory."""

    name: str
    path: str
    size: int = 0
    """Bytes of the input (for scheduling big kernels first)."""
    data: dict[str, bytes] | None = None
    """The input's files by name, when shipped to a worker that may not see `path`."""


@dataclass
class KernelResult:
    """What planning one input gave: rows (one per kernel) and files to write."""

    name: str
    status: str
    rows: list[dict[str, Any]]
    files: dict[str, str] = field(default_factory=dict)
    """File name (inside the kernel's directory) -> text; empty when it failed."""
    stale: list[str] = field(default_factory=list)
    """Files of an earlier plan in the kernel's directory that the new set replaces."""


def input_kind(path: Path) -> str | None:
    """`json`, `csv` (the `_Nodes.csv` of a pair) or `mlir`; None for other files."""
    suffix = path.suffix.lstrip(".")
    if suffix == "csv":
        return "csv" if path.stem.endswith("_Nodes") else None
    return suffix if suffix in FRONTENDS else None


def discover(paths: Iterable[str]) -> list[KernelTask]:
    """The inputs named (files, or directories searched one level deep), by name.

    A file named explicitly is taken whatever its extension (its frontend decides;
    either half of a CSV pair names the pair); in a directory, graph JSON,
    `NAME_Nodes.csv` and `.mlir` files. Two inputs with one
    name would write the same directory: a one-line error.
    """
    from dan.lowering.io.graph_files import graph_name

    found: dict[str, KernelTask] = {}
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise BatchError(f"no such file or directory: '{p}'")
        files = sorted(f for f in path.iterdir() if f.is_file() and input_kind(f)) if path.is_dir() else [path]
        for f in files:
            name = graph_name(f)
            if f.suffix == ".csv":
                f = f.with_name(f"{name}_Nodes.csv")  # either half names the pair
            if name in found and Path(found[name].path) != f:
                raise BatchError(f"two inputs are named '{name}' ('{found[name].path}' and '{f}'); "
                                 "their outputs would collide")
            found[name] = KernelTask(name, str(f), f.stat().st_size)
    if not found:
        raise BatchError("no kernels found (graph .json, NAME_Nodes.csv or .mlir files)")
    return [found[name] for name in sorted(found)]


def input_files(task: KernelTask) -> list[Path]:
    """The files an input is read from (both halves of a CSV pair)."""
    path = Path(task.path)
    if input_kind(path) == "csv":
        return [path, path.with_name(f"{task.name}_Edges.csv")]
    return [path]


def shipped(task: KernelTask) -> KernelTask:
    """The task with its input's bytes inside (for a worker on another machine)."""
    data = {f.name: f.read_bytes() for f in input_files(task) if f.exists()}
    return KernelTask(task.name, task.path, task.size, data)


def input_digest(task: KernelTask) -> str:
    """SHA-256 of the input's files (by name and bytes; a missing file is left out)."""
    h = hashlib.sha256()
    if task.data is not None:
        for name in sorted(task.data):
            h.update(name.encode() + b"\0" + task.data[name])
        return h.hexdigest()
    return input_digest(shipped(task))


def plan_chunk(tasks: list[KernelTask], options: BatchOptions) -> list[KernelResult]:
    """Plan several inputs one after another (a worker's unit of work)."""
    return [plan_kernel(t, options) for t in tasks]


def plan_kernel(task: KernelTask, options: BatchOptions) -> KernelResult:
    """Plan one input; never raises for a bad input or a failing pass."""
    started = perf_counter()
    pass_seconds = [0.0]

    def on_pass(_: str, seconds: float) -> None:
        pass_seconds[0] += seconds

    warnings: list[str] = []
    try:
        if task.data is None:
            result = _plan(task, task.path, options, on_pass, warnings)
        else:
            with tempfile.TemporaryDirectory(prefix="dan-batch-") as tmp:
                for name, data in task.data.items():
                    (Path(tmp) / name).write_bytes(data)
                result = _plan(task, str(Path(tmp) / Path(task.path).name), options, on_pass, warnings)
    except Exception as e:  # noqa: BLE001 - a kernel's failure is its row, the batch goes on
        message = options.describe(e)
        if not isinstance(e, options.user_errors):
            message = f"internal error ({type(e).__name__}): {message}"
        result = KernelResult(task.name, "failed", [{"kernel": task.name, "error": message}])
    seconds = perf_counter() - started
    for row in result.rows:
        row.update(input=task.name, status=result.status, resumed=False, warnings="; ".join(warnings))
        row.update(seconds=round(seconds, 4), pass_seconds=round(pass_seconds[0], 4))
    if result.status == "ok":
        result.files[MANIFEST] = manifest_text(task, options, result)
    gc.collect()  # IR holds reference cycles and the commands run with the collector off (cheap after gc.freeze)
    return result


def _plan(task: KernelTask, path: str, options: BatchOptions, on_pass: Callable[[str, float], None],
          warnings: list[str]) -> KernelResult:
    from dan.tools.driver import OptRequest, run_opt

    here = Path(options.outdir) / task.name
    text = None
    if task.data is not None and input_kind(Path(path)) not in GRAPH_FRONTENDS:
        text = Path(path).read_text()
        path = task.path  # IR names its input in its messages: the user's path
    request = OptRequest(path, options.spec, options.core, options.output_format, str(here), text=text)
    out = run_opt(request, warnings.append, on_pass)
    warnings.extend(out.notes)
    if options.output_format == "plan":
        files = {p.name: t for p, t in (out.files or {}).items()}
    else:
        files = {f"{task.name}.mlir": out.text or ""}
    views = out.views if out.views is not None else _view_text(out.text or "")
    rows = [_metrics_row(k, options.bounds) for k in views]
    if any(row["error"] for row in rows):
        return KernelResult(task.name, "failed", rows)
    return KernelResult(task.name, "ok", rows, files, [p.name for p in out.stale or []])


def _view_text(text: str) -> list[Any]:
    from dan.lowering.io.frontends import view_module
    from dan.lowering.io.ir_io import parse_module

    return view_module(parse_module(text), None)


def _metrics_row(kernel: Any, bounds: bool) -> dict[str, Any]:
    """The replay's metrics of one planned kernel (`KernelView`), and with `bounds`
    the best lower bound of each (`bound_METRIC`) and its gap (`gap_METRIC`, `bounds.gaps`)."""
    from dan.dialect.model.replay import replay

    g = kernel.graph
    m = replay(g, kernel.plan, kernel.target)
    error = "" if m.violation is None else f"invalid plan ({m.violation.kind}): {m.violation.message}"
    row = {"kernel": g.name, "nodes": g.n, "edges": g.num_edges, "target": kernel.target.name, "error": error,
           "valid": m.valid, "peak_l1_ub": m.peak_l1_ub, "tier_peaks": dict(m.tier_peaks), "l0_rule": m.l0_rule,
           "spill_count": m.spill_count, "extra_traffic": m.extra_traffic, "makespan": m.makespan}
    if bounds:
        from dan.dialect.model.bounds.report import best_bounds, graph_bounds

        from dan.dialect.model.bounds.gaps import metric_gaps

        best = best_bounds(graph_bounds(g, kernel.target), kernel.plan.offsets is not None, m.l0_rule)
        row.update({f"bound_{metric}": value for metric, value in best.items()})
        row.update({f"gap_{metric}": value for metric, value in metric_gaps(m, best).items()})
    return row


def output_bytes(text: str) -> bytes:
    """The bytes an output file holds for `text` (what the batch writes and the manifest digests)."""
    return text.encode("utf-8")


def _facts(data: bytes) -> dict[str, Any]:
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def manifest_text(task: KernelTask, options: BatchOptions, result: KernelResult) -> str:
    """The record of a kernel's complete outputs: what made them (input digest, options),
    each output file's size and SHA-256 (`outputs`), and their rows."""
    outputs = {name: _facts(output_bytes(text)) for name, text in result.files.items() if name != MANIFEST}
    record = {"input": input_digest(task), "key": options.key(), "files": sorted(result.files),
              "outputs": outputs, "rows": result.rows}
    return json.dumps(record, indent=1, sort_keys=True) + "\n"


def _unchanged(directory: Path, outputs: dict[str, Any]) -> bool:
    """Every recorded output is in `directory` with its recorded size and SHA-256."""
    for name, facts in outputs.items():
        path = directory / name
        if Path(name).name != name or not path.is_file() or path.stat().st_size != facts["bytes"]:
            return False
        if _facts(path.read_bytes()) != facts:
            return False
    return True


def completed(task: KernelTask, options: BatchOptions, directory: Path) -> list[dict[str, Any]] | None:
    """The rows of a kernel whose outputs in `directory` are the ones its manifest
    records (present, same size and SHA-256) and were made from this input with these
    options; None when it must be planned (again), as for a manifest without `outputs`."""
    try:
        record = json.loads((directory / MANIFEST).read_text())
        if record["input"] != input_digest(task) or record["key"] != options.key():
            return None
        outputs = record["outputs"]
        if set(outputs) != {name for name in record["files"] if name != MANIFEST} or not _unchanged(directory, outputs):
            return None
        return list(record["rows"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
