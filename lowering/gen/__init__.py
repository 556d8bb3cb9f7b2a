"""Kernel generators: the traced families (`matmul`, `flash_attention`, `conv`), layered
random kernels, capacity-tight packing kernels, the `--like` presets, and the straight-line
program form they are written in (`trace`)."""
