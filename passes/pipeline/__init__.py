"""What every pass shares: the planning-pass base, the pass registry, plan verification."""
