"""Search modes built on the DAN stages: `dan-best` (`best`), `tune`, `prefetch`, reuse
orders, stream layouts, order polish and timed list schedules."""
