"""Hardware descriptions (targets) as data.

A target names every tier's capacity (in the graph's size units), the tiers counted
in the peak metric, and the spill cost model
`cycles(size) = ceil(size / spill_units_per_cycle) + spill_startup`.
Tiers and pipes are fixed enumerations; a target only sets their parameters.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

TIERS: tuple[str, ...] = ("L1", "UB", "L0A", "L0B", "L0C")
TIER_INDEX: dict[str, int] = {t: i for i, t in enumerate(TIERS)}
L0_TIERS: tuple[int, ...] = (TIER_INDEX["L0A"], TIER_INDEX["L0B"], TIER_INDEX["L0C"])

PIPES: tuple[str, ...] = ("MTE1", "MTE2", "MTE3", "FIXP", "CUBE", "VECTOR")
PIPE_INDEX: dict[str, int] = {p: i for i, p in enumerate(PIPES)}
DMA_PIPES: frozenset[str] = frozenset({"MTE1", "MTE2", "MTE3", "FIXP"})
COMPUTE_PIPES: frozenset[str] = frozenset({"CUBE", "VECTOR"})
SPILL_OUT_PIPE: int = PIPE_INDEX["MTE3"]
SPILL_IN_PIPE: int = PIPE_INDEX["MTE2"]


LIMIT = 1 << 62
"""Every size, capacity, id and cycle count stays below this (i64 with room to add)."""


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


class TargetError(ValueError):
    """A target name or file that cannot be used."""


@dataclass(frozen=True)
class Core:
    """One NPU core: its tiers and pipes, tier capacities, peak tiers and spill costs.

    Tiers and pipes are indexed by their position in `tiers` and `pipes`; graphs and
    plans built for a core use those indices.
    """

    name: str
    capacity: tuple[int, ...]
    """Capacity per tier, indexed like `tiers`."""
    peak_tiers: tuple[int, ...] = (TIER_INDEX["L1"], TIER_INDEX["UB"])
    """Tiers whose residency the peak metric adds up."""
    spill_units_per_cycle: float = 0.5
    """DDR bandwidth of a spill transfer, in size units per cycle."""
    spill_startup: int = 150
    """Fixed cycles of every spill transfer."""
    tiers: tuple[str, ...] = TIERS
    """Tier names."""
    pipes: tuple[str, ...] = PIPES
    """Pipe names."""
    dma_pipes: frozenset[str] = DMA_PIPES
    """Pipes that move data (`dan.dma`); the others compute (`dan.compute`)."""
    l0_tiers: tuple[int, ...] = L0_TIERS
    """Tiers where the order-only L0 rule allows one live buffer at a time."""
    spill_out_pipe: int = SPILL_OUT_PIPE
    """Pipe that runs SPILL_OUT."""
    spill_in_pipe: int = SPILL_IN_PIPE
    """Pipe that runs SPILL_IN."""

    @cached_property
    def tier_index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.tiers)}

    @cached_property
    def pipe_index(self) -> dict[str, int]:
        return {p: i for i, p in enumerate(self.pipes)}

    def spill_cycles(self, size: int) -> int:
        """Cycles of one SPILL_OUT or SPILL_IN of a buffer of `size` units."""
        return math.ceil(size / self.spill_units_per_cycle) + self.spill_startup

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "capacity": {t: self.capacity[i] for i, t in enumerate(TIERS)},
            "peak_tiers": [TIERS[i] for i in self.peak_tiers],
            "spill_units_per_cycle": self.spill_units_per_cycle,
            "spill_startup": self.spill_startup,
        }


CONTEST = Core("contest", (4096, 1024, 256, 256, 512))
ASCEND910B = Core(
    "ascend910b",
    (512 * 1024, 192 * 1024, 64 * 1024, 64 * 1024, 128 * 1024),
    spill_units_per_cycle=32.0,
    spill_startup=500,
)
PRESETS: dict[str, Core] = {t.name: t for t in (CONTEST, ASCEND910B)}


def target_from_json(data: object, name: str) -> Core:
    """Build a target from its JSON form (see `Core.to_json`)."""
    if not isinstance(data, dict) or not isinstance(data.get("capacity"), dict):
        raise TargetError(f"target '{name}': expected an object with a 'capacity' object")
    caps = data["capacity"]
    unknown = sorted(set(caps) - set(TIERS))
    if unknown:
        raise TargetError(f"target '{name}': unknown tier '{unknown[0]}' (tiers: {', '.join(TIERS)})")
    missing = [t for t in TIERS if t not in caps]
    if missing:
        raise TargetError(f"target '{name}': no capacity for tier '{missing[0]}'")
    if any(not _is_int(caps[t]) or not 0 < caps[t] < LIMIT for t in TIERS):
        raise TargetError(f"target '{name}': capacities must be integers from 1 to 2^62")
    peak = data.get("peak_tiers", ["L1", "UB"])
    if (not isinstance(peak, list) or any(not isinstance(p, str) or p not in TIER_INDEX for p in peak)
            or len(set(peak)) != len(peak)):
        raise TargetError(f"target '{name}': 'peak_tiers' must list distinct tiers from {', '.join(TIERS)}")
    rate = data.get("spill_units_per_cycle", 0.5)
    startup = data.get("spill_startup", 150)
    if (isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 1e-6 <= rate <= 1e9
            or not _is_int(startup) or not 0 <= startup < LIMIT):
        raise TargetError(
            f"target '{name}': 'spill_units_per_cycle' must be a number from 1e-6 to 1e9 and "
            "'spill_startup' an integer from 0 to 2^62"
        )
    return Core(
        str(data.get("name", name)),
        tuple(caps[t] for t in TIERS),
        tuple(TIER_INDEX[p] for p in peak),
        float(rate),
        startup,
    )


def load_target(spec: str) -> Core:
    """A preset name (`contest`, `ascend910b`) or the path of a target JSON file."""
    if not spec:
        raise TargetError(f"empty target name (presets: {', '.join(PRESETS)}; or a .json file)")
    if spec in PRESETS:
        return PRESETS[spec]
    path = Path(spec)
    if not path.suffix == ".json":
        raise TargetError(f"unknown target '{spec}' (presets: {', '.join(PRESETS)}; or a .json file)")
    try:
        data = json.loads(path.read_text())
    except OSError as e:
        raise TargetError(f"cannot read target file '{spec}': {e.strerror}") from None
    except (json.JSONDecodeError, RecursionError, UnicodeDecodeError) as e:
        line = f" at line {e.lineno}" if isinstance(e, json.JSONDecodeError) else ""
        raise TargetError(f"target file '{spec}': malformed JSON{line}") from None
    return target_from_json(data, path.stem)
