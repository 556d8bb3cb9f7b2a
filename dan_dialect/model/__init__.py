"""The model a kernel means, on arrays (no xDSL): the graph and plan (`graph`), targets,
the spill and timing rules, the replay, the plan's edges, pipe usage and waits, the bounds,
and synchronized streams with their checks (docs/MODEL.md)."""
