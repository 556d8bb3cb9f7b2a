"""What every pass shares: the planning-pass base, the pass registry and options, the named
pipelines, plan verification, progress reports and the executors that run work in a
process pool or on Ray."""
