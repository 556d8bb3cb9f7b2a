"""MPAS's options and the table of key policies they choose from.

Invariant: every `MpasOptions` names a policy of `POLICIES`, and every policy's key
starts with `level` (FREEs, then operations, then ALLOCs).
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.passes.pipeline.options import check_choice

POLICIES: dict[str, tuple[str, ...]] = {
    "balanced": ("level", "delta", "criticality"),
    "memory-first": ("level", "delta"),
    "criticality-first": ("level", "criticality", "delta"),
    "balanced-locality": ("level", "delta", "locality", "criticality"),
}
"""Policy name -> key fields compared in order (the node index always breaks ties).
`level` leads every policy: the scheduler relies on FREEs and operations preceding ALLOCs.
`locality` (larger first) is dynamic and only set on L0 ALLOCs; see
`dan.passes.dan.mpas.locality`."""


@dataclass(frozen=True)
class MpasOptions:
    """How MPAS ranks the ready set."""

    policy: str = "balanced"
    """Key order: `balanced` (level, delta, -h, index), the paper's key; `memory-first`
    (level, delta, index: no criticality term); `criticality-first` (level, -h, delta,
    index); or `balanced-locality` (level, delta, -locality, -h, index): `balanced` where
    L0 ALLOCs that stage the most recently used L1/UB buffers go first (see
    `dan.passes.dan.mpas.locality`). On the public Matmul it keeps the peak and cuts DLR's
    spills and makespan."""
    l0_rule: bool = True
    """Keep at most one live buffer per L0 tier in the order (docs/MODEL.md), so the order's
    peak compares with published order-only peaks. False: the plain key, no gating."""

    def __post_init__(self) -> None:
        check_choice("mpas", "policy", self.policy, POLICIES)
