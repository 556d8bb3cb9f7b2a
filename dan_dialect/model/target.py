"""Hardware descriptions (targets) as data.

A target names every tier's capacity (in the graph's size units), the tiers counted
in the peak metric, and the spill cost model
`cycles(size) = ceil(size / spill_units_per_cycle) + spill_startup`.
A target also owns its tier and pipe sets (which pipes move data, which run the
spills, which tiers keep the L0 rule); the defaults are the contest core's, so a core
with another tier set or a second vector unit is only a target file.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

# The contest core's tier and pipe sets: the defaults of every `Core`.
_TIERS: tuple[str, ...] = ("L1", "UB", "L0A", "L0B", "L0C")
_L0_TIERS: tuple[int, ...] = (2, 3, 4)
_PIPES: tuple[str, ...] = ("MTE1", "MTE2", "MTE3", "FIXP", "CUBE", "VECTOR")
_DMA_PIPES: frozenset[str] = frozenset({"MTE1", "MTE2", "MTE3", "FIXP"})
_SPILL_OUT_PIPE, _SPILL_IN_PIPE = 2, 1  # MTE3, MTE2
EVENT_IDS = 8
"""Default event ids per ordered pipe pair (the Ascend cores' eight)."""
MAX_EVENT_IDS = 1 << 16
"""The most event ids per ordered pipe pair a target (or `lower-sync{event-ids=N}`) may have."""


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
    peak_tiers: tuple[int, ...] = (0, 1)
    """Tiers whose residency the peak metric adds up (default: L1 and UB)."""
    spill_units_per_cycle: float = 0.5
    """DDR bandwidth of a spill transfer, in size units per cycle."""
    spill_startup: int = 150
    """Fixed cycles of every spill transfer."""
    tiers: tuple[str, ...] = _TIERS
    """Tier names."""
    pipes: tuple[str, ...] = _PIPES
    """Pipe names."""
    dma_pipes: frozenset[str] = _DMA_PIPES
    """Pipes that move data (`dan.dma`); the others compute (`dan.compute`)."""
    l0_tiers: tuple[int, ...] = _L0_TIERS
    """Tiers where the order-only L0 rule allows one live buffer at a time."""
    spill_out_pipe: int = _SPILL_OUT_PIPE
    """Pipe that runs SPILL_OUT."""
    spill_in_pipe: int = _SPILL_IN_PIPE
    """Pipe that runs SPILL_IN."""
    event_ids: int = EVENT_IDS
    """Synchronization event ids per ordered pipe pair (`set_flag`/`wait_flag` of a
    sync-lowered kernel): at most this many flags of one pair are outstanding at once."""

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
        """The target-file form (`target_from_json` reads it back); the tier and pipe
        sets appear only when they are not the contest core's."""
        data: dict[str, object] = {"name": self.name}
        if self.tiers != _TIERS or self.l0_tiers != _L0_TIERS:
            data["tiers"] = list(self.tiers)
            data["l0_tiers"] = [self.tiers[i] for i in self.l0_tiers]
        data["capacity"] = {t: self.capacity[i] for i, t in enumerate(self.tiers)}
        data["peak_tiers"] = [self.tiers[i] for i in self.peak_tiers]
        if (self.pipes, self.dma_pipes, self.spill_out_pipe, self.spill_in_pipe) != (_PIPES, _DMA_PIPES, _SPILL_OUT_PIPE, _SPILL_IN_PIPE):
            data["pipes"] = list(self.pipes)
            data["dma_pipes"] = [p for p in self.pipes if p in self.dma_pipes]
            data["spill_out_pipe"] = self.pipes[self.spill_out_pipe]
            data["spill_in_pipe"] = self.pipes[self.spill_in_pipe]
        data["spill_units_per_cycle"] = self.spill_units_per_cycle
        data["spill_startup"] = self.spill_startup
        if self.event_ids != EVENT_IDS:
            data["event_ids"] = self.event_ids
        return data


CONTEST = Core("contest", (4096, 1024, 256, 256, 512))
ASCEND910B = Core(
    "ascend910b",
    (512 * 1024, 192 * 1024, 64 * 1024, 64 * 1024, 128 * 1024),
    spill_units_per_cycle=32.0,
    spill_startup=500,
)
PRESETS: dict[str, Core] = {t.name: t for t in (CONTEST, ASCEND910B)}


TARGET_KEYS: tuple[str, ...] = (
    "name", "tiers", "capacity", "peak_tiers", "l0_tiers", "pipes", "dma_pipes", "spill_out_pipe",
    "spill_in_pipe", "spill_units_per_cycle", "spill_startup", "event_ids",
)
"""The keys a target file may hold; any other key is refused (a misspelling would be ignored)."""


def _names(data: dict, key: str, default: tuple[str, ...], name: str, within: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """A list of distinct names (from `within` when given) under `key`, or `default`."""
    value = data.get(key, list(default))
    if (not isinstance(value, list) or any(not isinstance(v, str) or not v for v in value)
            or len(set(value)) != len(value) or (within is not None and any(v not in within for v in value))):
        allowed = f" from {', '.join(within)}" if within is not None else ""
        raise TargetError(f"target '{name}': '{key}' must list distinct {'tiers' if 'tier' in key else 'pipes'}{allowed}")
    return tuple(value)


def _pipe(data: dict, key: str, default: str, pipes: tuple[str, ...], name: str) -> int:
    value = data.get(key, default)
    if value not in pipes:
        raise TargetError(f"target '{name}': '{key}' must be one of the pipes ({', '.join(pipes)}), got {json.dumps(value)}")
    return pipes.index(value)


def target_from_json(data: object, name: str) -> Core:
    """Build a target from its JSON form (see `Core.to_json`); unknown keys are refused.

    `tiers` and `pipes` default to the contest core's; `l0_tiers`, `dma_pipes` and
    the spill pipes default to those of its names that the core has.
    """
    if not isinstance(data, dict) or not isinstance(data.get("capacity"), dict):
        raise TargetError(f"target '{name}': expected an object with a 'capacity' object")
    unknown_keys = [k for k in data if k not in TARGET_KEYS]
    if unknown_keys:
        raise TargetError(f"target '{name}': unknown key '{unknown_keys[0]}' (keys: {', '.join(TARGET_KEYS)})")
    base = CONTEST
    tiers = _names(data, "tiers", base.tiers, name)
    caps = data["capacity"]
    unknown = [t for t in caps if t not in tiers]
    if unknown:
        raise TargetError(f"target '{name}': unknown tier '{unknown[0]}' (tiers: {', '.join(tiers)})")
    missing = [t for t in tiers if t not in caps]
    if missing:
        raise TargetError(f"target '{name}': no capacity for tier '{missing[0]}'")
    if any(not _is_int(caps[t]) or not 0 < caps[t] < LIMIT for t in tiers):
        raise TargetError(f"target '{name}': capacities must be integers from 1 to 2^62")
    default_peak = tuple(base.tiers[i] for i in base.peak_tiers if base.tiers[i] in tiers)
    peak = _names(data, "peak_tiers", default_peak, name, tiers)
    l0 = _names(data, "l0_tiers", tuple(base.tiers[i] for i in base.l0_tiers if base.tiers[i] in tiers), name, tiers)
    pipes = _names(data, "pipes", base.pipes, name)
    dma = _names(data, "dma_pipes", tuple(p for p in base.pipes if p in base.dma_pipes and p in pipes), name, pipes)
    spill_out = _pipe(data, "spill_out_pipe", base.pipes[base.spill_out_pipe], pipes, name)
    spill_in = _pipe(data, "spill_in_pipe", base.pipes[base.spill_in_pipe], pipes, name)
    rate = data.get("spill_units_per_cycle", 0.5)
    startup = data.get("spill_startup", 150)
    if (isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 1e-6 <= rate <= 1e9
            or not _is_int(startup) or not 0 <= startup < LIMIT):
        raise TargetError(
            f"target '{name}': 'spill_units_per_cycle' must be a number from 1e-6 to 1e9 and "
            "'spill_startup' an integer from 0 to 2^62"
        )
    event_ids = data.get("event_ids", EVENT_IDS)
    if not _is_int(event_ids) or not 1 <= event_ids <= MAX_EVENT_IDS:
        raise TargetError(f"target '{name}': 'event_ids' must be an integer from 1 to {MAX_EVENT_IDS}")
    label = data.get("name", name)
    if not isinstance(label, str) or not label:
        raise TargetError(f"target '{name}': 'name' must be a non-empty string")
    return Core(
        label, tuple(caps[t] for t in tiers), tuple(tiers.index(p) for p in peak), float(rate), startup,
        tiers=tiers, pipes=pipes, dma_pipes=frozenset(dma), l0_tiers=tuple(tiers.index(t) for t in l0),
        spill_out_pipe=spill_out, spill_in_pipe=spill_in, event_ids=event_ids,
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
