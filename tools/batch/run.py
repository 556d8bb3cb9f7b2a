"""A batch run: the inputs still to plan go to an executor in chunks, each result is
written as it arrives, and the rows come back sorted.

Big inputs start first and small ones are grouped into chunks of about `CHUNK_BYTES`,
so the workers finish together and tiny kernels do not pay a round trip each. The
plans do not depend on the executor, the number of jobs or the chunking: each kernel
is planned alone by the same function. With `resume`, a kernel whose directory holds
the outputs its manifest records (same sizes and SHA-256), made from the same input
with the same options, is not planned again; its rows come from its manifest, marked
`resumed`. Interrupted (Ctrl-C), it raises
`BatchInterrupted` with the rows of what finished and an `interrupted` row for the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from dan.tools.batch.kernel import BatchOptions, KernelResult, KernelTask, completed, plan_chunk, shipped
from dan.tools.batch.output import sorted_rows, write_kernel
from dan.passes.pipeline.executors import Executor
from dan.tools.progress import Progress

CHUNK_BYTES = 64 * 1024
"""Inputs smaller than this share a chunk with their neighbours, up to this many bytes."""


def chunks(tasks: list[KernelTask], chunk_bytes: int = CHUNK_BYTES) -> list[list[KernelTask]]:
    """The tasks biggest first (ties by name), small neighbours grouped up to `chunk_bytes`."""
    groups: list[list[KernelTask]] = []
    size = 0
    for t in sorted(tasks, key=lambda t: (-t.size, t.name)):
        if groups and size + t.size <= chunk_bytes:
            groups[-1].append(t)
            size += t.size
        else:
            groups.append([t])
            size = t.size
    return groups


def failed(task: KernelTask, message: str) -> KernelResult:
    return KernelResult(task.name, "failed", [{"input": task.name, "kernel": task.name, "status": "failed",
                                               "error": message}])


def run_batch(tasks: list[KernelTask], options: BatchOptions, executor: Executor, progress: Progress,
              resume: bool = False, ship: bool = False) -> list[dict[str, Any]]:
    """Plan every task (or take it from its outputs, with `resume`); write each kernel's
    files as it finishes; the summary rows, sorted. `ship`: send the inputs' bytes
    with the tasks (workers that may not see this file system)."""
    outdir = Path(options.outdir)
    rows: list[dict[str, Any]] = []
    todo: list[KernelTask] = []
    for t in tasks:
        done = completed(t, options, outdir / t.name) if resume else None
        if done is None:
            todo.append(t)
            continue
        rows += [{**row, "resumed": True} for row in done]
        progress.done(t.name, "resumed")
    groups = chunks(todo)
    work: Sequence[list[KernelTask]] = _Shipped(groups) if ship else groups
    finished: set[str] = set()
    try:
        for i, results, error in executor.map_unordered(partial(plan_chunk, options=options), work):
            if error is not None:
                results = [failed(t, f"worker failed: {options.describe(error)}") for t in groups[i]]
            for result in results:
                _write(outdir, result, options)
                rows += result.rows
                finished.add(result.name)
                first = result.rows[0] if result.rows else {}
                progress.done(result.name, result.status, first.get("seconds"), str(first.get("error") or ""))
    except KeyboardInterrupt:
        rows += [{"input": t.name, "kernel": t.name, "status": "interrupted", "error": "not planned: interrupted"}
                 for t in todo if t.name not in finished]
        raise BatchInterrupted(sorted_rows(rows)) from None
    return sorted_rows(rows)


class BatchInterrupted(Exception):
    """Ctrl-C during a batch: the rows so far, with the kernels not planned `interrupted`."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        super().__init__("interrupted")
        self.rows = rows


class _Shipped(Sequence[list[KernelTask]]):
    """Chunks whose inputs' bytes are read as an executor sends them (not all up front)."""

    def __init__(self, groups: list[list[KernelTask]]) -> None:
        self.groups = groups

    def __len__(self) -> int:
        return len(self.groups)

    def __getitem__(self, i: int) -> list[KernelTask]:  # type: ignore[override]
        return [shipped(t) for t in self.groups[i]]


def _write(outdir: Path, result: KernelResult, options: BatchOptions) -> None:
    """Write a result's files; a kernel whose files cannot be written has failed."""
    try:
        write_kernel(outdir, result)
    except OSError as e:
        result.status = "failed"
        for row in result.rows:
            row.update(status="failed", error=f"cannot write its outputs: {options.describe(e)}")
