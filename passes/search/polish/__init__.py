"""Order polish: a local search over a laid-out plan filling the idle gaps of its busiest
pipe, by moves (`gaps`), re-placements (`place`) and spill trials (`spill`)."""
