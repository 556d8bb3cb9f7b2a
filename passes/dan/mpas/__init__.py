"""MPAS, memory-pressure-aware list scheduling: the ready set, the priority keys, the L0
gate and the locality field (`search`, the core)."""
