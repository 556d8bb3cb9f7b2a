"""Plan files of the public format (docs/MODEL.md, "Plan files").

`NAME_schedule.txt` (one node id per line, spill ids included), `NAME_memory.txt`
(`BufId:Offset` per buffer, by buffer id) and `NAME_spill.txt` (`BufId:NewOffset` per
spill, in spill order). Spill k has ids `base + 2k` (out) and `base + 2k + 1` (in).
"""

from __future__ import annotations

import re
from pathlib import Path

from dan.dialect.model.graph import KernelGraph, Plan
from dan.lowering.io.atomic import atomic_write_all


_INT = re.compile(r"-?[0-9]+")


class PlanError(ValueError):
    """Plan files that cannot be read as a plan of the given graph."""


def plan_paths(directory: str | Path, name: str) -> tuple[Path, Path, Path]:
    d = Path(directory)
    return d / f"{name}_schedule.txt", d / f"{name}_memory.txt", d / f"{name}_spill.txt"


def _lines(path: Path) -> list[str]:
    try:
        return [line.strip() for line in path.read_bytes().decode().splitlines() if line.strip()]
    except OSError as e:
        raise PlanError(f"cannot read '{path.name}': {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise PlanError(f"'{path.name}': not UTF-8 text (byte {e.start})") from None


def _pairs(path: Path) -> list[tuple[int, int, int]]:
    """(line number, buffer id, offset) for each `BufId:Offset` line."""
    out = []
    for i, line in enumerate(_lines(path)):
        parts = line.split(":")
        if len(parts) != 2 or not all(_INT.fullmatch(p.strip()) for p in parts):
            raise PlanError(f"'{path.name}' line {i + 1}: expected BufId:Offset, got '{line}'")
        out.append((i + 1, int(parts[0]), int(parts[1])))
    return out


def read_plan(graph: KernelGraph, directory: str | Path, name: str | None = None) -> Plan:
    """The plan of `graph` stored in `directory` (the memory and spill files are optional)."""
    if not Path(directory).is_dir():
        what = "is not a directory" if Path(directory).exists() else "does not exist"
        raise PlanError(f"plan directory '{directory}' {what}")
    sched_path, mem_path, spill_path = plan_paths(directory, name or graph.name)
    buf_index = {bid: b for b, bid in enumerate(graph.buf_ids)}

    def buffer(path: Path, line: int, bid: int) -> int:
        if bid not in buf_index:
            raise PlanError(f"'{path.name}' line {line}: unknown buffer {bid}")
        return buf_index[bid]

    spills: list[tuple[int, int]] = []
    if spill_path.exists():
        spills = [(buffer(spill_path, i, bid), off) for i, bid, off in _pairs(spill_path)]
    offsets: list[int] | None = None
    if mem_path.exists():
        offsets = [-1] * len(graph.buf_ids)
        for i, bid, off in _pairs(mem_path):
            b = buffer(mem_path, i, bid)
            if offsets[b] != -1:
                raise PlanError(f"'{mem_path.name}' line {i}: second offset for buffer {bid}")
            offsets[b] = off
        missing = [graph.buf_ids[b] for b, o in enumerate(offsets) if o == -1]
        if missing:
            raise PlanError(f"'{mem_path.name}': no offset for buffer {missing[0]}")
    elif spills:
        raise PlanError(f"'{spill_path.name}' lists spills but there is no '{mem_path.name}'")
    index = {nid: v for v, nid in enumerate(graph.node_ids)}
    base = graph.spill_id_base
    limit = 2 * len(spills)
    order = []
    for i, line in enumerate(_lines(sched_path)):
        if not _INT.fullmatch(line):
            raise PlanError(f"'{sched_path.name}' line {i + 1}: expected a node id, got '{line}'")
        nid = int(line)
        v = index.get(nid)
        if v is None:
            if not 0 <= nid - base < limit:
                if nid >= base and offsets is not None and not spill_path.exists():
                    raise PlanError(f"'{sched_path.name}' line {i + 1}: node id {nid} would be a spill node, "
                                    f"but there is no '{spill_path.name}'")
                raise PlanError(f"'{sched_path.name}' line {i + 1}: unknown node id {nid}")
            v = graph.n + nid - base
        order.append(v)
    return Plan(order, offsets, spills)


def plan_texts(graph: KernelGraph, plan: Plan, directory: str | Path) -> dict[Path, str]:
    """The plan files' paths and contents; only the schedule when there is no layout."""
    sched_path, mem_path, spill_path = plan_paths(directory, graph.name)
    base = graph.spill_id_base
    ids = graph.node_ids
    n = graph.n
    files = {sched_path: "".join(f"{ids[v] if v < n else base + v - n}\n" for v in plan.order)}
    if plan.offsets is not None:
        by_id = sorted(range(len(graph.buf_ids)), key=graph.buf_ids.__getitem__)
        files[mem_path] = "".join(f"{graph.buf_ids[b]}:{plan.offsets[b]}\n" for b in by_id)
        files[spill_path] = "".join(f"{graph.buf_ids[b]}:{off}\n" for b, off in plan.spills)
    return files


def write_plan(graph: KernelGraph, plan: Plan, directory: str | Path) -> list[Path]:
    """Write the plan files as a set (all new or all old); returns the paths written."""
    files = plan_texts(graph, plan, directory)
    atomic_write_all(files)
    return list(files)
