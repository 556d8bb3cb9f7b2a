"""`lower-sync`: a scheduled, placed kernel to synchronized per-pipe streams (`streams`,
the pure core), its passes and their registry. The streams themselves and the `dan_sync`
dialect live in `dan.dialect`."""
