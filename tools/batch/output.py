"""A batch's files: each kernel's outputs as one set, and one summary (CSV and JSON).

A kernel's directory `OUTDIR/NAME/` receives its outputs (UTF-8) and the manifest that
records them (names, sizes, SHA-256) in one `atomic_write_all` set, which also removes
what an earlier plan left there and the new one does not replace; so the manifest
exists only beside complete outputs. The summary holds one row per kernel, sorted by
input and kernel name, and does not depend on the executor, the number of jobs or the
order kernels finished in (only its timing columns vary from run to run).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dan.tools.batch.kernel import MANIFEST, BatchOptions, KernelResult, output_bytes

SUMMARY_COLUMNS: tuple[str, ...] = (
    "input", "kernel", "status", "error", "target", "nodes", "edges", "valid", "peak_l1_ub", "tier_peaks",
    "l0_rule", "spill_count", "extra_traffic", "makespan", "bound_peak_l1_ub", "bound_extra_traffic",
    "bound_spill_count", "bound_makespan", "gap_peak_l1_ub", "gap_extra_traffic", "gap_spill_count", "gap_makespan",
    "seconds", "pass_seconds", "resumed", "warnings",
)
"""The summary's columns: the replay's metrics (docs/MODEL.md) and, when asked for, their
lower bounds (`dan.dialect.model.bounds.report`) and gaps (`dan.dialect.model.bounds.gaps`;
empty otherwise), then the run's own facts.

`seconds` is the kernel's whole time in its worker (reading, passes, replay, output
text); `pass_seconds` the passes' own share of it."""


def _listed(directory: Path) -> list[str]:
    """The files an earlier manifest in `directory` recorded (none when unreadable)."""
    try:
        return [str(name) for name in json.loads((directory / MANIFEST).read_text())["files"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def write_kernel(outdir: Path, result: KernelResult) -> None:
    """Write one kernel's files as a set in `outdir/NAME/` (nothing when it failed)."""
    if result.status != "ok":
        return
    from dan.lowering.io.atomic import atomic_write_all

    directory = outdir / result.name
    directory.mkdir(parents=True, exist_ok=True)
    left = {*_listed(directory), *result.stale} - set(result.files)
    stale = [directory / name for name in sorted(left) if Path(name).name == name and (directory / name).is_file()]
    atomic_write_all({directory / name: output_bytes(text) for name, text in result.files.items()}, stale)


def sorted_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows by input, then kernel, with every summary column present."""
    full = [{c: row.get(c, "") for c in SUMMARY_COLUMNS} for row in rows]
    return sorted(full, key=lambda r: (str(r["input"]), str(r["kernel"])))


def _cell(value: Any) -> str:
    if isinstance(value, dict):
        return ";".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def summary_texts(rows: list[dict[str, Any]], options: BatchOptions) -> tuple[str, str]:
    """The summary's CSV and JSON texts (rows already sorted)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(SUMMARY_COLUMNS)
    writer.writerows([_cell(row[c]) for c in SUMMARY_COLUMNS] for row in rows)
    failed = sum(row["status"] == "failed" for row in rows)
    record = {"pipeline": options.spec, "format": options.output_format,
              "target": options.core.name if options.core else None,
              "kernels": len(rows), "failed": failed, "rows": rows}
    return out.getvalue(), json.dumps(record, indent=1) + "\n"


def write_summary(outdir: Path, rows: list[dict[str, Any]], options: BatchOptions) -> None:
    """`outdir/summary.csv` and `outdir/summary.json`, written as one set."""
    from dan.lowering.io.atomic import atomic_write_all

    csv_text, json_text = summary_texts(rows, options)
    outdir.mkdir(parents=True, exist_ok=True)
    atomic_write_all({outdir / "summary.csv": csv_text, outdir / "summary.json": json_text})
