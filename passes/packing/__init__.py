"""Offline packing of buffer lifetimes into a tier: heuristics, exact search, instances."""
