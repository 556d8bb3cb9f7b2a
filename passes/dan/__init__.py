"""The DAN-Scheduler stages: MPAS (order), DLR (layout and spills), CPE (reordering)."""
