"""Published schedulers we compare against: HMCOS, MAGIS, EDA, COSMA and the input order."""
