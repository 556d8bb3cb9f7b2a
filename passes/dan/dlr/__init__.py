"""DLR, deterministic linear repackaging: one scan of an order placing, evicting and
reloading buffers per tier (`layout`, the core; `scan`, `eviction`, `free_space`)."""
